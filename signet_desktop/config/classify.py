"""Sort every key of a raw agent.yaml mapping: setting, retired, ignored, relocated or unknown.

The walk follows the pydantic models: a key is a setting when its model has a field by that
YAML name. What comes out is a cleaned mapping holding only settings (ready for strict model
validation), the retired keys as problems, and the ignored keys and warnings for `doctor`.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import AliasChoices, BaseModel
from pydantic.fields import FieldInfo

from signet_desktop.config.keys import (
    RELOCATED_KEYS,
    KeyPath,
    dotted,
    has_retired_below,
    ignored_children,
    is_ignored,
    retired_reason,
    split,
)
from signet_desktop.config.source import Position

_DROP = object()


@dataclass(frozen=True, slots=True)
class Problem:
    """A key that stops the config from loading."""

    path: KeyPath
    message: str


@dataclass(frozen=True, slots=True)
class Classified:
    """The outcome of classifying one document."""

    data: dict[str, object]
    positions: dict[KeyPath, Position]
    problems: tuple[Problem, ...]
    ignored_keys: tuple[str, ...]
    warnings: tuple[str, ...]


@dataclass(slots=True)
class _Acc:
    problems: list[Problem] = field(default_factory=list)
    ignored: dict[str, None] = field(default_factory=dict)  # insertion-ordered set
    warnings: list[str] = field(default_factory=list)


def classify(
    data: Mapping[str, object], model: type[BaseModel], positions: dict[KeyPath, Position]
) -> Classified:
    """Relocate old keys, then walk `data` against `model` and sort every key."""
    acc = _Acc()
    relocated, positions = _relocate(data, positions, acc)
    cleaned = _walk(relocated, model, (), acc)
    return Classified(
        data=cleaned,
        positions=positions,
        problems=tuple(acc.problems),
        ignored_keys=tuple(acc.ignored),
        warnings=tuple(acc.warnings),
    )


def _accepted_names(model: type[BaseModel]) -> dict[str, str]:
    """YAML key -> field name, for every name pydantic accepts from YAML."""
    names: dict[str, str] = {}
    for name, info in model.model_fields.items():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            names.update({choice: name for choice in alias.choices if isinstance(choice, str)})
        elif isinstance(alias, str):
            names[alias] = name
        else:
            names[info.alias or name] = name
    return names


def _walk(
    raw: Mapping[Any, object], model: type[BaseModel] | None, path: KeyPath, acc: _Acc
) -> dict[str, object]:
    names = _accepted_names(model) if model is not None else {}
    is_open = model is not None and model.model_config.get("extra") == "allow"
    cleaned: dict[str, object] = {}
    for key, value in raw.items():
        child = (*path, str(key))
        reason = retired_reason(child)
        if reason is not None:
            acc.problems.append(Problem(child, f"{dotted(child)} is retired: {reason}"))
        elif str(key) not in names and has_retired_below(child) and isinstance(value, Mapping):
            _walk(value, None, child, acc)  # an ignored subtree that may hide retired keys
        elif model is None or is_ignored(child):
            acc.ignored[dotted(child)] = None
        elif str(key) in names:
            info = model.model_fields[names[str(key)]]
            kept = _descend(info, value, child, acc)
            if kept is not _DROP:
                cleaned[str(key)] = kept
        elif is_open:
            cleaned[str(key)] = value
        else:
            acc.warnings.append(_unknown(child, (*names, *ignored_children(path))))
    return cleaned


def _unknown(path: KeyPath, candidates: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(path[-1], candidates, n=1, cutoff=0.6)
    if close:
        return f"unknown key '{dotted(path)}' (did you mean '{dotted((*path[:-1], close[0]))}'?)"
    return f"unknown key '{dotted(path)}' (ignored)"


def _descend(info: FieldInfo, value: object, path: KeyPath, acc: _Acc) -> object:
    submodel = _model_in(info.annotation)
    if submodel is not None:
        if isinstance(value, Mapping):
            return _walk(value, submodel, path, acc)
        # `section:` with nothing under it means "defaults", not "null".
        return _DROP if value is None and not _allows_none(info.annotation) else value
    item_model = _dict_item_model(info.annotation)
    if item_model is not None and isinstance(value, Mapping):
        return {
            key: _walk(item, item_model, (*path, str(key)), acc)
            if isinstance(item, Mapping)
            else item
            for key, item in value.items()
        }
    return value


def _members(annotation: object) -> tuple[object, ...]:
    if get_origin(annotation) is Annotated:
        return _members(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        return get_args(annotation)
    return (annotation,)


def _model_in(annotation: object) -> type[BaseModel] | None:
    for member in _members(annotation):
        if isinstance(member, type) and issubclass(member, BaseModel):
            return member
    return None


def _allows_none(annotation: object) -> bool:
    return type(None) in _members(annotation)


def _dict_item_model(annotation: object) -> type[BaseModel] | None:
    if get_origin(annotation) is not dict:
        return None
    return _model_in(get_args(annotation)[1])


def _relocate(
    data: Mapping[str, object], positions: dict[KeyPath, Position], acc: _Acc
) -> tuple[Mapping[str, object], dict[KeyPath, Position]]:
    for old_dotted, new_dotted in RELOCATED_KEYS:
        old, new = split(old_dotted), split(new_dotted)
        value = _get(data, old)
        if value is _DROP:
            continue
        if _get(data, new) not in (_DROP, None):
            acc.warnings.append(f"'{old_dotted}' is ignored because '{new_dotted}' is also set")
            data = _without(data, old)
            continue
        moved = _with(data, new, value)
        if moved is None:  # the new home is not a mapping; validation will say so
            continue
        data = _without(moved, old)
        acc.warnings.append(f"'{old_dotted}' is an old key; it is read as '{new_dotted}'")
        positions = positions | {
            (*new, *key[len(old) :]): pos
            for key, pos in positions.items()
            if key[: len(old)] == old
        }
    return data, positions


def _get(data: Mapping[str, object], path: KeyPath) -> object:
    node: object = data
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return _DROP
        node = node[key]
    return node


def _without(data: Mapping[str, object], path: KeyPath) -> dict[str, object]:
    """A copy of `data` without the key at `path` (only the dicts on the path are copied)."""
    copy = dict(data)
    head, *rest = path
    if not rest:
        copy.pop(head, None)
    else:
        child = copy[head]
        assert isinstance(child, Mapping)
        copy[head] = _without(child, tuple(rest))
    return copy


def _with(data: Mapping[str, object], path: KeyPath, value: object) -> dict[str, object] | None:
    """A copy of `data` with `value` set at `path`; None when a step on the way is not a map."""
    copy = dict(data)
    head, *rest = path
    if not rest:
        copy[head] = value
        return copy
    child = copy.get(head)
    if child is None:
        child = {}
    if not isinstance(child, Mapping):
        return None
    inner = _with(child, tuple(rest), value)
    if inner is None:
        return None
    copy[head] = inner
    return copy
