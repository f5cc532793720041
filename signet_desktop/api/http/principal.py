"""Who is calling, as the request gate established it, and what that caller may do.

The gate sets one `Principal` on every request (`request.state.principal`). Routes ask it, never
the headers: whether the caller is the machine's own user (served on trust from loopback), which
permissions it holds, and which agents (and projects) it may act for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fastapi import Request

Permission = Literal["read", "write", "admin"]
ALL_PERMISSIONS: frozenset[Permission] = frozenset({"read", "write", "admin"})


@dataclass(frozen=True)
class Principal:
    """An authenticated caller.

    `local`: the machine's own user — a loopback caller served without a token (`local` mode,
    or `hybrid` on loopback). Only it may name server paths outside the configured roots.
    `agents`/`projects`: None means every one. `token_id`: the scoped token's id (its
    `api_tokens` row) when the caller showed one; rate limits count per token id.
    """

    name: str
    local: bool
    permissions: frozenset[Permission]
    agents: frozenset[str] | None = None
    projects: frozenset[str] | None = None
    token_id: str | None = None

    def may(self, permission: Permission) -> bool:
        """The caller holds this permission."""
        return permission in self.permissions

    def may_act_for(self, agent_id: str) -> bool:
        """The caller may read or write this agent's data."""
        return self.agents is None or agent_id in self.agents

    @property
    def only_agent(self) -> str | None:
        """The one agent a token is bound to (what it acts for when a request names none)."""
        if self.agents is not None and len(self.agents) == 1:
            return next(iter(self.agents))
        return None


LOCAL_USER = Principal(name="local", local=True, permissions=ALL_PERMISSIONS)
# The one `auth.token` of agent.yaml: every permission and agent, but not the local user.
CONFIGURED_TOKEN = Principal(name="token", local=False, permissions=ALL_PERMISSIONS)


def principal_of(request: Request) -> Principal:
    """The caller the gate authenticated; a request the gate never saw is no local user."""
    principal = getattr(request.state, "principal", None)
    if isinstance(principal, Principal):
        return principal
    return Principal(name="anonymous", local=False, permissions=frozenset())
