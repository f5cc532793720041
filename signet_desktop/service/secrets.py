"""Secrets: named values the daemon uses for its providers and never shows (`/api/secrets`).

Per agent, like every other scope: an agent lists, stores and deletes its own secrets and
never sees another's. Names follow Signet's rule (a letter or `_`, then letters, digits, `_`;
at most 128); `exec` is refused as a name because Signet serves `POST /api/secrets/exec`
there (a command runner we do not serve). Values are 1..65,536 characters without NUL and go
to the store on disk (inference/secret_store.py, files 0600); no method returns one, and no
log line, error or event names one — only names. The `default` agent's secrets are what
`$secret:NAME` in agent.yaml resolves to; `on_change(agent_id)` tells the composition root
so the inference providers are rebuilt with the new key.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import SecretStr

from signet_desktop.domain import scope
from signet_desktop.domain.errors import InvalidInput, NotFound, Unavailable
from signet_desktop.domain.memory import Actor
from signet_desktop.inference.secret_store import NAME_PATTERN, SecretStore

log = logging.getLogger(__name__)

MAX_VALUE_CHARS = 65_536
RESERVED_NAMES = frozenset({"exec"})


@dataclass(frozen=True, slots=True)
class SecretStored:
    """A stored secret: its name, and whether it is new (else replaced)."""

    name: str
    created: bool


def check_name(name: str) -> str:
    """A valid, unreserved secret name (InvalidInput `secret_name_invalid` otherwise)."""
    if name in RESERVED_NAMES:
        raise InvalidInput(
            f"{name!r} is reserved: Signet serves POST /api/secrets/exec (running a command "
            "with secrets), which Signet Desktop does not",
            code="secret_name_invalid",
        )
    if not NAME_PATTERN.match(name):
        raise InvalidInput(
            "a secret name is a letter or '_' followed by letters, digits and '_' "
            "(at most 128), e.g. OPENAI_API_KEY",
            code="secret_name_invalid",
        )
    return name


def check_value(value: SecretStr | None) -> str:
    """The value's text (InvalidInput `value_required` / `value_invalid`; never echoed)."""
    text = "" if value is None else value.get_secret_value()
    if not text:
        raise InvalidInput("value is required", code="value_required")
    if len(text) > MAX_VALUE_CHARS or "\x00" in text:
        raise InvalidInput(
            f"a secret value is at most {MAX_VALUE_CHARS} characters, without NUL",
            code="value_invalid",
        )
    return text


class SecretService:
    """List, store and delete an agent's secrets (values go in, never out)."""

    def __init__(
        self, store: SecretStore, *, on_change: Callable[[str], None] | None = None
    ) -> None:
        self._store = store
        self._on_change = on_change
        self._lock = threading.Lock()

    def names(self, agent_id: str) -> tuple[str, ...]:
        """The agent's secret names, sorted (what `secret_list` and `GET /api/secrets` show)."""
        scope.check_agent_id(agent_id)
        try:
            return tuple(self._store.names(agent_id))
        except OSError as exc:
            raise Unavailable(f"the secret store cannot be read: {exc.strerror}") from None

    def has(self, agent_id: str, name: str) -> bool:
        scope.check_agent_id(agent_id)
        return self._store.has(agent_id, check_name(name))

    def put(
        self, agent_id: str, name: str, value: SecretStr | None, *, actor: Actor
    ) -> SecretStored:
        """Store (or replace) the agent's secret `name`; a refusal writes nothing."""
        scope.check_agent_id(agent_id)
        scope.check_actor(actor)
        name = check_name(name)
        text = check_value(value)
        with self._lock:
            try:
                created = self._store.put(agent_id, name, text)
            except OSError as exc:
                raise Unavailable(f"the secret store cannot be written: {exc.strerror}") from None
        log.info(
            "secret %s %s for agent %s by %s",
            name,
            "stored" if created else "replaced",
            agent_id,
            actor.changed_by,
        )
        self._changed(agent_id)
        return SecretStored(name, created)

    def delete(self, agent_id: str, name: str, *, actor: Actor) -> str:
        """Delete the agent's secret `name` (NotFound `secret_not_found` when it has none)."""
        scope.check_agent_id(agent_id)
        scope.check_actor(actor)
        name = check_name(name)
        with self._lock:
            try:
                deleted = self._store.delete(agent_id, name)
            except OSError as exc:
                raise Unavailable(f"the secret store cannot be written: {exc.strerror}") from None
        if not deleted:
            raise NotFound(f"secret {name} not found", code="secret_not_found")
        log.info("secret %s deleted for agent %s by %s", name, agent_id, actor.changed_by)
        self._changed(agent_id)
        return name

    def _changed(self, agent_id: str) -> None:
        if self._on_change is not None:
            self._on_change(agent_id)
