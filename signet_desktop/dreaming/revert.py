"""Revert a Dreaming pass: undo its graph mutations from their log, newest first.

`plan_revert` reads the pass's `graph_mutations` (pure read) and says what would change:
- a row the pass created (entity, aspect, claim value, link) is archived — never deleted, so
  nothing that hangs under it is lost; an alias, relation or mention row it inserted is
  removed;
- a row the pass updated is written back to its state before (renames undone, archived rows
  restored, merges split row by row, superseded claim values reactivated);
- attention the pass resolved is reopened, attention it created and still pending is declined;
  its still-pending proposals are rejected.
`blockers` are later mutations (another pass, a manual edit) of the same rows, or of rows that
name an entity this pass created: reverting would silently undo or orphan that later work, so
the revert is refused, naming the pass (or actor) and mutation.

`revert_pass` applies the plan in one write transaction, every change an audited graph
mutation with actor `revert:<pass_id>` (`reverts_mutation_id` pointing at what it undid), and
records a `revert_pass` row in `dreaming_operations`. A second revert says "already reverted".
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from signet_desktop.domain import scope
from signet_desktop.domain.errors import Conflict, SignetError
from signet_desktop.domain.knowledge import GraphMutation, Provenance
from signet_desktop.storage import attention as attention_rows
from signet_desktop.storage import dreaming_operations as op_rows
from signet_desktop.storage import graph as graph_writes
from signet_desktop.storage import graph_claims, graph_links, graph_rows
from signet_desktop.storage import knowledge_reads as graph_reads
from signet_desktop.storage import ontology as ontology_rows
from signet_desktop.storage.connect import Connection
from signet_desktop.storage.dreaming_operations import NewOperationRecord
from signet_desktop.storage.handle import DatabaseHandle

ARCHIVED_ON_REVERT = ("entities", "entity_aspects", "entity_attributes", "entity_dependencies")
REVERT_OPERATION = "revert_pass"


@dataclass(frozen=True, slots=True)
class RevertChange:
    """One change a revert makes: archive | restore | delete | reopen | decline | reject."""

    action: str
    target_table: str
    target_id: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    mutation_id: str | None = None


@dataclass(frozen=True, slots=True)
class RevertBlocker:
    """A later mutation the revert would break."""

    target_table: str
    target_id: str
    reason: str
    by_pass_id: str | None
    mutation_id: str


@dataclass(frozen=True, slots=True)
class RevertPlan:
    agent_id: str
    pass_id: str
    changes: tuple[RevertChange, ...]
    blockers: tuple[RevertBlocker, ...]
    already_reverted: bool = False


@dataclass(frozen=True, slots=True)
class RevertOutcome:
    """What a revert (or its dry run) did."""

    pass_id: str
    dry_run: bool
    reverted: bool
    changes: tuple[RevertChange, ...]
    blockers: tuple[RevertBlocker, ...]
    already_reverted: bool = False


def revert_actor(pass_id: str) -> str:
    return f"revert:{pass_id}"


def plan_revert(conn: Connection, agent_id: str, pass_id: str) -> RevertPlan:
    """What reverting the pass would change, and what blocks it (pure read)."""
    mutations = graph_reads.mutations_of_pass(conn, agent_id, pass_id)
    if _already_reverted(conn, agent_id, pass_id, mutations):
        return RevertPlan(agent_id, pass_id, (), (), already_reverted=True)
    own = {m.id for m in mutations}
    live = _StillStanding(conn, agent_id, own)
    blockers: dict[tuple[str, str], RevertBlocker] = {}
    changes: list[RevertChange] = []
    for mutation in reversed(mutations):
        for later in graph_reads.later_mutations(conn, mutation):
            if live(later):
                _block(blockers, mutation, later, "changed it after this pass")
                break
        if mutation.before is None and mutation.target_table == "entities":
            for later in _naming_entity(conn, agent_id, mutation):
                if live(later):
                    _block(blockers, mutation, later, "depends on an entity this pass created")
        changes.append(_change(mutation))
    for row in attention_rows.resolved_by_pass(conn, agent_id, pass_id):
        changes.append(
            RevertChange(
                "reopen",
                "dreaming_attention",
                row.id,
                {"status": row.status},
                {"status": "pending"},
            )
        )
    for row in attention_rows.created_by_pass(conn, agent_id, pass_id):
        changes.append(
            RevertChange(
                "decline",
                "dreaming_attention",
                row.id,
                {"status": "pending"},
                {"status": "declined"},
            )
        )
    for proposal in ontology_rows.list_proposals(conn, agent_id, status="pending", pass_id=pass_id):
        changes.append(
            RevertChange(
                "reject",
                "ontology_proposals",
                proposal.id,
                {"status": "pending"},
                {"status": "rejected"},
            )
        )
    return RevertPlan(agent_id, pass_id, tuple(changes), tuple(blockers.values()))


class _StillStanding:
    """Whether a later mutation is still in effect: not this pass's own, not a revert's, and
    not made by a pass that was itself reverted since."""

    def __init__(self, conn: Connection, agent_id: str, own: set[str]) -> None:
        self._conn = conn
        self._agent = agent_id
        self._own = own
        self._reverted: dict[str, bool] = {}

    def __call__(self, later: GraphMutation) -> bool:
        if later.id in self._own or later.actor.startswith("revert:"):
            return False
        if later.pass_id is None:
            return True
        if later.pass_id not in self._reverted:
            records = op_rows.for_pass(self._conn, self._agent, later.pass_id)
            self._reverted[later.pass_id] = any(
                r.operation == REVERT_OPERATION and r.status == "applied" for r in records
            )
        return not self._reverted[later.pass_id]


def _already_reverted(
    conn: Connection, agent_id: str, pass_id: str, mutations: list[GraphMutation]
) -> bool:
    records = op_rows.for_pass(conn, agent_id, pass_id)
    if any(r.operation == REVERT_OPERATION and r.status == "applied" for r in records):
        return True
    actor = revert_actor(pass_id)
    return any(
        later.actor == actor
        for m in mutations[-1:]
        for later in graph_reads.later_mutations(conn, m)
    )


def _block(
    found: dict[tuple[str, str], RevertBlocker],
    mutation: GraphMutation,
    later: GraphMutation,
    what: str,
) -> None:
    key = (mutation.target_table, mutation.target_id)
    if key in found:
        return
    who = f"pass {later.pass_id}" if later.pass_id else f"{later.actor}"
    found[key] = RevertBlocker(
        mutation.target_table,
        mutation.target_id,
        f"{later.operation} by {who} {what} ({later.target_table} {later.target_id})",
        later.pass_id,
        later.id,
    )


def _naming_entity(conn: Connection, agent_id: str, created: GraphMutation) -> list[GraphMutation]:
    """Later mutations of other passes or edits whose row names this entity."""
    rows = conn.execute(
        "SELECT * FROM graph_mutations WHERE agent_id = :a AND seq > :seq"
        " AND (pass_id IS NULL OR pass_id <> :p) AND target_id <> :id"
        " AND (CAST(after_json AS TEXT) LIKE :needle OR CAST(before_json AS TEXT) LIKE :needle)"
        " ORDER BY seq LIMIT 5",  # jsonb on PostgreSQL: its text names the id in quotes too
        {
            "a": agent_id,
            "seq": created.seq,
            "p": created.pass_id,
            "id": created.target_id,
            "needle": f'%"{created.target_id}"%',
        },
    ).fetchall()
    return [graph_reads.to_mutation(r) for r in rows]


def _change(mutation: GraphMutation) -> RevertChange:
    table = mutation.target_table
    if mutation.before is None and table in ARCHIVED_ON_REVERT:
        after = dict(mutation.after or {}) | {"status": "archived"}
        return RevertChange(
            "archive", table, mutation.target_id, mutation.after, after, mutation.id
        )
    action = "delete" if mutation.before is None else "restore"
    return RevertChange(
        action, table, mutation.target_id, mutation.after, mutation.before, mutation.id
    )


def revert_pass(
    db: DatabaseHandle, agent_id: str, pass_id: str, actor: str, *, dry_run: bool = False
) -> RevertOutcome:
    """Apply `plan_revert` in one transaction (or only show it: `dry_run`)."""
    scope.check_agent_id(agent_id)
    plan = plan_revert(db.reader(), agent_id, pass_id)
    if dry_run or plan.blockers or plan.already_reverted or not plan.changes:
        return RevertOutcome(
            pass_id, dry_run, False, plan.changes, plan.blockers, plan.already_reverted
        )
    prov = Provenance(actor=revert_actor(pass_id), agent_id=agent_id)
    try:
        with db.write() as conn:
            plan = plan_revert(conn, agent_id, pass_id)  # again, under the write lock
            if plan.blockers or plan.already_reverted:
                return RevertOutcome(
                    pass_id, False, False, plan.changes, plan.blockers, plan.already_reverted
                )
            for change in plan.changes:
                _apply(conn, prov, change, pass_id, actor)
            op_rows.append(
                conn,
                agent_id=agent_id,
                pass_id=pass_id,
                request_id=str(uuid.uuid4()),
                actor=actor,
                records=[
                    NewOperationRecord(
                        REVERT_OPERATION,
                        {"passId": pass_id},
                        [],
                        None,
                        "applied",
                        None,
                        f"reverted by {actor}",
                        {"changes": len(plan.changes)},
                    )
                ],
            )
    except SignetError as exc:
        raise Conflict(
            f"pass {pass_id} cannot be reverted: {exc.message}",
            code="revert_blocked",
            details={"pass_id": pass_id},
        ) from exc
    return RevertOutcome(pass_id, False, True, plan.changes, ())


def _apply(
    conn: Connection, prov: Provenance, change: RevertChange, pass_id: str, actor: str
) -> None:
    if change.action == "reopen":
        attention_rows.reopen_attention(conn, prov.agent_id, change.target_id)
        return
    if change.action == "decline":
        attention_rows.decline_attention(
            conn,
            prov.agent_id,
            change.target_id,
            pass_id=None,
            resolution=f"pass {pass_id} reverted",
        )
        return
    if change.action == "reject":
        ontology_rows.mark_rejected(
            conn, prov.agent_id, change.target_id, actor=actor, reason=f"pass {pass_id} reverted"
        )
        return
    assert change.mutation_id is not None
    mutation = graph_reads.mutation(conn, change.mutation_id)
    assert mutation is not None
    if change.action == "archive":
        _archive(conn, prov, change.target_table, change.target_id, pass_id)
        return
    graph_rows.restore_row(conn, prov, mutation, operation="revert")


def _archive(conn: Connection, prov: Provenance, table: str, row_id: str, pass_id: str) -> None:
    reason = f"pass {pass_id} reverted"
    if table == "entities":
        graph_writes.archive_entity(conn, prov, row_id, reason)
    elif table == "entity_aspects":
        graph_claims.archive_aspect(conn, prov, row_id)
    elif table == "entity_attributes":
        graph_claims.archive_claim_value(conn, prov, row_id)
    else:
        graph_links.archive_link(conn, prov, row_id)
