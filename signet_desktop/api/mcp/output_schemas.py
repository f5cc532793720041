"""The `outputSchema` of every MCP tool: the JSON its route answers (`api/*_views.py`).

Each schema names the fields a client can rely on, with their types; objects stay open
(`additionalProperties` is not false), so a field added later to a view does not break a
client that validates. A call's `structuredContent` is the same object as its text block and
must validate against its tool's schema (the SDK's client checks it on every call; so do the
tests, for every tool). Refusals carry no structured content: they are `isError` results whose
text is HTTP's `{error, code}` body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
INTEGER: Schema = {"type": "integer"}
NUMBER: Schema = {"type": "number"}
BOOLEAN: Schema = {"type": "boolean"}
OBJECT: Schema = {"type": "object"}
TEXT_OR_NULL: Schema = {"type": ["string", "null"]}
NUMBER_OR_NULL: Schema = {"type": ["number", "null"]}
OBJECT_OR_NULL: Schema = {"type": ["object", "null"]}


def array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def shape(required: Mapping[str, Schema], optional: Mapping[str, Schema] | None = None) -> Schema:
    """An object with these fields (all of `required` present), open to others."""
    return {
        "type": "object",
        "properties": {**required, **(optional or {})},
        "required": list(required),
    }


MEMORY = shape(
    {
        "id": STRING,
        "agent_id": STRING,
        "type": STRING,
        "content": STRING,
        "importance": NUMBER,
        "pinned": BOOLEAN,
        "tags": array(STRING),
        "who": TEXT_OR_NULL,
        "project": TEXT_OR_NULL,
        "visibility": STRING,
        "memory_kind": STRING,
        "source_type": TEXT_OR_NULL,
        "source_id": TEXT_OR_NULL,
        "session_id": TEXT_OR_NULL,
        "metadata": OBJECT,
        "created_at": STRING,
        "updated_at": STRING,
        "version": INTEGER,
        "is_deleted": BOOLEAN,
        "deleted_at": TEXT_OR_NULL,
    }
)

_DATA_NOTE = {"note": STRING}  # search answers open with the as-data note (tool_spec.as_data)

_HIT = shape(
    {
        "kind": {"enum": ["memory", "transcript"]},
        "id": STRING,
        "content": STRING,
        "content_length": INTEGER,
        "truncated": BOOLEAN,
        "score": NUMBER,
        "source": STRING,
        "type": STRING,
        "tags": array(STRING),
        "pinned": BOOLEAN,
        "importance": NUMBER_OR_NULL,
        "who": TEXT_OR_NULL,
        "project": TEXT_OR_NULL,
        "created_at": TEXT_OR_NULL,
        "channels": OBJECT,
    },
    {"weak": BOOLEAN, "transcript": OBJECT, "document": OBJECT},
)

SEARCH = shape(
    {
        **_DATA_NOTE,
        "results": array(_HIT),
        "supplementary": array(shape({"sessionKey": STRING, "excerpt": STRING})),
        "query": STRING,
        "method": STRING,
        "meta": shape({"totalReturned": INTEGER, "noHits": BOOLEAN, "timings": OBJECT}),
    }
)

STORE = shape(
    {
        "id": STRING,
        "type": STRING,
        "tags": array(STRING),
        "pinned": BOOLEAN,
        "importance": NUMBER,
        "content": STRING,
        "embedded": BOOLEAN,
        "deduped": BOOLEAN,
        "structured_applied": BOOLEAN,
    },
    {"vectorStatus": STRING, "entities_linked": INTEGER, "hints_written": INTEGER},
)

LIST = shape(
    {
        "memories": array(MEMORY),
        "stats": shape({"total": INTEGER, "withEmbeddings": INTEGER, "critical": INTEGER}),
    }
)

_CHANGE = {
    "id": STRING,
    "status": STRING,
    "currentVersion": INTEGER,
    "newVersion": INTEGER,
    "memory": MEMORY,
}
MODIFY = shape({**_CHANGE, "contentChanged": BOOLEAN}, {"embedded": BOOLEAN})
FORGET = shape(_CHANGE)

FEEDBACK = shape(
    {
        "ok": {"const": True},
        "recorded": INTEGER,
        "sessionKey": STRING,
        "ratings": array(
            shape(
                {
                    "memoryId": STRING,
                    "score": {"type": "number", "minimum": -1, "maximum": 1},
                    "ratings": INTEGER,
                    "injected": BOOLEAN,
                }
            )
        ),
    }
)

SESSION_SEARCH = shape(
    {
        **_DATA_NOTE,
        "hits": array(
            shape(
                {
                    "sessionKey": STRING,
                    "project": TEXT_OR_NULL,
                    "updatedAt": TEXT_OR_NULL,
                    "excerpt": STRING,
                    "rank": NUMBER,
                }
            )
        ),
    }
)

SESSION_BYPASS = shape({"sessionKey": STRING, "bypassed": BOOLEAN})
SECRET_LIST = shape({"secrets": array(STRING)})

_ENTITY = shape(
    {
        "id": STRING,
        "name": STRING,
        "canonical_name": STRING,
        "entity_type": STRING,
        "mentions": INTEGER,
        "pinned": BOOLEAN,
        "status": STRING,
    }
)

KNOWLEDGE_LIST = shape(
    {"items": array(_ENTITY), "total": INTEGER, "limit": INTEGER, "offset": INTEGER}
)

KNOWLEDGE_GET = shape(
    {
        "entity": _ENTITY,
        "aliases": array(OBJECT),
        "aspects": array(shape({"id": STRING, "name": STRING, "attributes": array(OBJECT)})),
        "dependencies": shape({"outgoing": array(OBJECT), "incoming": array(OBJECT)}),
        "mentions": array(OBJECT),
        "mention_total": INTEGER,
    }
)

KNOWLEDGE_EXPAND = shape(
    {
        **_DATA_NOTE,
        "entity": shape(
            {"id": STRING, "name": STRING, "type": STRING, "description": TEXT_OR_NULL}
        ),
        "constraints": array(
            shape({"entityName": STRING, "content": STRING, "importance": NUMBER})
        ),
        "aspects": array(
            shape(
                {
                    "name": STRING,
                    "weight": NUMBER,
                    "attributes": array(
                        shape(
                            {
                                "content": STRING,
                                "kind": STRING,
                                "importance": NUMBER,
                                "confidence": NUMBER,
                            }
                        )
                    ),
                }
            )
        ),
        "dependencies": array(
            shape({"target": STRING, "targetId": STRING, "type": STRING, "strength": NUMBER})
        ),
        "memoryCount": INTEGER,
        "memories": array(shape({"id": STRING, "content": STRING, "tokens": INTEGER})),
        "budget": shape({"maxTokens": INTEGER, "usedTokens": INTEGER, "omitted": INTEGER}),
        "traversal": shape({"partial": BOOLEAN, "reasons": array(STRING)}),
    }
)
