"""Unknown request fields: ignored as Signet ignores them, logged once per name at debug level.

Signet's clients send fields this daemon has no use for (remember `mode` and `harness`,
modify `project`, ...). Refusing them would break those clients, so the request models ignore
them; the fields we do know stay strictly validated. Each unknown name is logged the first
time it is seen (at most MAX_LOGGED names per process, so a client cannot grow the set).
"""

from __future__ import annotations

import logging
import threading
from functools import cache
from typing import Any

from pydantic import AliasChoices, AliasPath, BaseModel

logger = logging.getLogger("signet_desktop.api.http")

MAX_LOGGED = 1024
MAX_NAME_CHARS = 80

_logged: set[str] = set()
_lock = threading.Lock()


@cache
def known_names(model: type[BaseModel]) -> frozenset[str]:
    """Every name a model accepts: field names and their validation aliases."""
    names: set[str] = set()
    for name, info in model.model_fields.items():
        names.add(name)
        alias = info.validation_alias
        if isinstance(alias, str):
            names.add(alias)
        elif isinstance(alias, AliasChoices):
            names.update(choice for choice in alias.choices if isinstance(choice, str))
        elif isinstance(alias, AliasPath) and alias.path and isinstance(alias.path[0], str):
            names.add(alias.path[0])
        if info.alias:
            names.add(info.alias)
    return frozenset(names)


def note_unknown(model: type[BaseModel], data: Any) -> None:
    """Log the unknown top-level names of `data` for `model`, each name once per process."""
    if not isinstance(data, dict):
        return
    known = known_names(model)
    unknown = [str(key) for key in data if str(key) not in known]
    if not unknown:
        return
    with _lock:
        fresh = [name for name in unknown if name not in _logged]
        room = MAX_LOGGED - len(_logged)
        fresh = fresh[: max(room, 0)]
        _logged.update(fresh)
    for name in fresh:
        logger.debug("ignoring unknown field %r (%s)", name[:MAX_NAME_CHARS], model.__name__)


def forget_logged() -> None:
    """Start over (tests)."""
    with _lock:
        _logged.clear()
