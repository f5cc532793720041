"""What /openapi.json says each route can answer besides 200: the error statuses, one body model.

Every route may be refused by the request gate (400 bad header or body encoding, 401 token,
403 Host/Origin, 413 size), find its PostgreSQL store unreachable (503 database_unavailable)
or fail unexpectedly (500); routes with parameters or a body add 422. The extras (404, 409,
429, and 503 for a subsystem other than the database) are listed per operation id here,
and a property test (`tests/integration/http/test_http_fuzz.py`) fails when a route answers
a status its operation does not declare.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from fastapi import FastAPI

from signet_desktop.api.http.errors import ErrorBody

DESCRIPTIONS = {
    400: "Bad request: invalid_json, invalid_utf8, bad_request, or a core check "
    "(content_empty, query_empty, tags_invalid, agent_id_invalid, reason_required, "
    "if_version_unsupported, ...)",
    401: "unauthorized: a token is required (WWW-Authenticate: Bearer)",
    403: "host_not_allowed or origin_not_allowed; path_not_allowed or path_credential_store "
    "(a server path the caller may not read: files.roots)",
    404: "not_found: unknown id, another agent's, or deleted",
    409: "version_conflict, pinned_requires_force, deleted, duplicate_content_hash, not_deleted, "
    "retention_expired, duplicate_live_memory; graph rows not active (entity_not_active, "
    "aspect_not_active, claim_not_active, link_not_active), proposal_not_pending, "
    "pass_running, revert_blocked",
    413: "payload_too_large: the body exceeds 1 MiB",
    429: "rate_limited: auth.rateLimits (team and hybrid modes) refused it; see Retry-After",
    422: "invalid_request: the body or query string does not match the schema (`fields`)",
    500: "internal_error, with requestId",
    503: "unavailable: a needed subsystem is down (database_unavailable: a PostgreSQL store "
    "that cannot be reached, on any route; embedder_unavailable, vec_unavailable, "
    "projection_failed)",
}
COMMON_ERRORS = (400, 401, 403, 413, 422, 500, 503)
NO_DATABASE = frozenset({"health", "health_live", "features"})  # answered without the store
# Statuses only some operations answer, by operation id (404 is added to every operation
# with a path parameter).
EXTRA_ERRORS: Mapping[str, tuple[int, ...]] = {
    "remember": (409,),
    "remember_save_alias": (409,),
    "remember_hook_alias": (409,),
    "modify_memory": (409, 429),
    "forget_memory": (409, 429),
    "recover_memory": (409,),
    "forget_batch": (409, 429),
    "modify_batch": (429,),
    "pipeline_pause": (429,),
    "pipeline_resume": (429,),
    "embeddings_status": (503,),
    "embeddings_projection": (503,),
    "embeddings_backfill": (429, 503),
    "repair_resync_vec": (404, 429, 503),
    "repair_embedding_gaps": (503,),
    "repair_re_embed": (429, 503),
    "connector_create": (409,),
    "connector_remove": (409,),
    "connector_sync": (409,),
    "connector_sync_full": (409,),
    "maintenance_run": (409,),
    "retention_sweep": (409, 429),
    # graph writes refuse rows that are no longer active; links name two entities in the body
    "knowledge_entity_create": (409,),
    "knowledge_alias_add": (409,),
    "knowledge_aspect_add": (409,),
    "knowledge_claim_add": (409,),
    "knowledge_entity_archive": (409,),
    "knowledge_entity_rename": (409,),
    "knowledge_link_create": (404, 409),
    "knowledge_link_archive": (409,),
    "knowledge_claim_archive": (409,),
    "ontology_proposal_apply": (409,),
    "ontology_proposal_reject": (409,),
    "ontology_apply": (409,),
    # no such entity by that name / a rated memory the agent does not have
    "knowledge_expand": (404,),
    "memory_feedback": (404,),
}
TOKEN_FREE_PREFIX = "/health"  # answered without a token: never 401
_ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}
_VALIDATION_REF = "#/components/schemas/HTTPValidationError"
_READY_503 = {
    "type": "object",
    "properties": {"status": {"const": "unavailable"}, "error": {"type": "string"}},
    "required": ["status", "error"],
}


def error_responses(statuses: Iterable[int] = COMMON_ERRORS) -> dict[int | str, dict[str, Any]]:
    """FastAPI `responses=` for these statuses, each with the error body model."""
    return {
        status: {"model": ErrorBody, "description": DESCRIPTIONS[status]} for status in statuses
    }


def _error_response(status: int) -> dict[str, Any]:
    return {
        "description": DESCRIPTIONS[status],
        "content": {"application/json": {"schema": dict(_ERROR_REF)}},
    }


def _with_common_errors(responses: dict[str, Any]) -> dict[str, Any]:
    """The operation's own status first, then the gate's statuses, then the rest: the order
    FastAPI gives `responses=` declared on the include. They are added to the document here,
    not declared on the routes, because FastAPI builds a serializer for every declared
    response model of every route of every app: 6 of each route's ~8 fields, and most of the
    ~160 ms of CPU an app's first request spent building its routes."""
    (first, own), *rest = responses.items()
    merged: dict[str, Any] = {first: own}
    merged.update((str(status), _error_response(status)) for status in COMMON_ERRORS)
    for status, response in rest:
        if status == "422" and _VALIDATION_REF in repr(response):
            continue  # FastAPI's own 422 for routes with parameters: ours is ErrorBody
        merged[status] = response
    return merged


def _drop_validation_schemas(document: dict[str, Any]) -> None:
    """FastAPI's validation error schemas, which no operation names once ours replace them."""
    schemas: dict[str, Any] = document.get("components", {}).get("schemas", {})
    if _VALIDATION_REF not in repr(document["paths"]):
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)


def _declare(operation_id: str, path: str, operation: dict[str, Any]) -> None:
    responses: dict[str, Any] = operation.setdefault("responses", {})
    extras = set(EXTRA_ERRORS.get(operation_id, ()))
    if "{" in path:
        extras.add(404)
    for status in sorted(extras):
        responses.setdefault(
            str(status),
            {
                "description": DESCRIPTIONS[status],
                "content": {"application/json": {"schema": _ERROR_REF}},
            },
        )
    if operation_id in NO_DATABASE:
        responses.pop("503", None)
    if operation_id == "health_ready":  # its 503 is a readiness body, not an ErrorBody
        responses["503"] = {
            "description": "not ready: shutting down, or the database does not answer",
            "content": {"application/json": {"schema": _READY_503}},
        }
    if path.startswith(TOKEN_FREE_PREFIX):
        responses.pop("401", None)
    if not operation.get("parameters") and "requestBody" not in operation:
        responses.pop("422", None)  # nothing to validate


def install_openapi(app: FastAPI) -> None:
    """Post-process the generated document once: per-operation error statuses."""
    generate: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = generate()
        for path, item in document.get("paths", {}).items():
            for operation in item.values():
                if isinstance(operation, dict) and "operationId" in operation:
                    operation["responses"] = _with_common_errors(operation["responses"])
                    _declare(operation["operationId"], path, operation)
        _drop_validation_schemas(document)
        app.openapi_schema = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]
