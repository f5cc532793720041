"""Read agent.yaml into a `SignetConfig`, or fail with one clear, located message.

A missing or empty file means defaults. Bad YAML names the line and column; a retired key or a
bad value names the dotted key path (and its line). Known-but-unimplemented Signet keys are
listed in `ignored_keys`; unknown keys become warnings with a did-you-mean. The daemon must not
start when this raises: it cannot know what the user meant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from signet_desktop.config.classify import Problem, classify
from signet_desktop.config.compat import adopt_signet_defaults
from signet_desktop.config.keys import KeyPath, dotted, is_secret_name
from signet_desktop.config.models import SignetConfig
from signet_desktop.config.source import Position, YamlSyntaxError, parse_yaml
from signet_desktop.config.workspace import CONFIG_FILE_NAMES, WorkspacePaths

_MAPPING_ERRORS = frozenset({"model_type", "model_attributes_type", "dict_type"})


class ConfigError(Exception):
    """agent.yaml cannot be used. `str()` is the user-facing message."""

    def __init__(self, message: str, *, key_paths: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.key_paths = tuple(key_paths)


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """A validated config, the file it came from, and what `doctor` should mention."""

    config: SignetConfig
    path: Path | None
    ignored_keys: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def load_config(paths: WorkspacePaths) -> LoadedConfig:
    """Load the workspace's config file (defaults when there is none)."""
    _refuse_non_file(paths.root)
    file = paths.config_file()
    if file is None:
        return LoadedConfig(config=SignetConfig(), path=None)
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read the config file: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{file}: the config file is not UTF-8 text (bad byte at offset {exc.start})"
        ) from exc
    return _parse(text, str(file), file)


def _refuse_non_file(root: Path) -> None:
    """A config name that exists but is not a regular file (a directory, a FIFO, a dangling
    symlink) is refused: skipping it would silently run on defaults or on the next name."""
    for name in CONFIG_FILE_NAMES:
        candidate = root / name
        if candidate.is_file():
            return
        if candidate.exists() or candidate.is_symlink():
            kind = "a directory" if candidate.is_dir() else "not a regular file"
            raise ConfigError(
                f"{candidate}: the config file is {kind}; make it a YAML file or remove it"
            )


def parse_config_text(text: str, source: str = "agent.yaml") -> LoadedConfig:
    """Parse YAML text as agent.yaml; `source` names it in messages."""
    return _parse(text, source, None)


def _parse(text: str, source: str, path: Path | None) -> LoadedConfig:
    try:
        document = parse_yaml(text)
    except YamlSyntaxError as exc:
        raise ConfigError(f"{_where(source, exc.position)}: invalid YAML: {exc.problem}") from exc
    if document.data is None:
        return LoadedConfig(config=SignetConfig(), path=path)
    if not isinstance(document.data, Mapping):
        found = type(document.data).__name__
        raise ConfigError(
            f"{source}: the top level must be a mapping of settings (like 'search:'), "
            f"found a {found}"
        )
    result = classify(document.data, SignetConfig, document.positions)
    if result.problems:
        raise _problems_error(source, result.problems, result.positions)
    try:
        config = SignetConfig.model_validate(result.data)
    except ValidationError as exc:
        problems = tuple(_validation_problem(error) for error in exc.errors())
        raise _problems_error(source, problems, result.positions) from None
    config, adopted = adopt_signet_defaults(config)
    return LoadedConfig(
        config=config,
        path=path,
        ignored_keys=result.ignored_keys,
        warnings=(*result.warnings, *adopted),
    )


def _where(source: str, position: Position | None) -> str:
    return source if position is None else f"{source}:{position.line}:{position.column}"


def _position_of(path: KeyPath, positions: Mapping[KeyPath, Position]) -> Position | None:
    for end in range(len(path), 0, -1):
        position = positions.get(path[:end])
        if position is not None:
            return position
    return None


def _problems_error(
    source: str, problems: Sequence[Problem], positions: Mapping[KeyPath, Position]
) -> ConfigError:
    located = sorted(
        ((_position_of(p.path, positions), p) for p in problems),
        key=lambda item: (item[0] is None, item[0] or Position(0, 0)),
    )
    parts = [f"{_where(source, position)}: {problem.message}" for position, problem in located]
    message = parts[0] if len(parts) == 1 else f"{len(parts)} problems: " + "; ".join(parts)
    return ConfigError(message, key_paths=[dotted(problem.path) for _, problem in located])


def _validation_problem(error: ErrorDetails) -> Problem:
    path = tuple(str(part) for part in error["loc"])
    name = dotted(path) or "the top level"
    value = error.get("input")
    if error["type"] in _MAPPING_ERRORS:
        return Problem(path, f"{name} must be a mapping (found {type(value).__name__})")
    if error["type"] == "missing":
        return Problem(path, f"{name} is required")
    if error["type"] == "value_error":  # our own validators: the message names the value
        return Problem(path, f"{name}: {error['msg'].removeprefix('Value error, ')}")
    message = error["msg"].replace("Input should be", "should be")
    return Problem(path, f"{name}: {message}{_shown_input(path, value)}")


def _shown_input(path: KeyPath, value: object) -> str:
    secret = bool(path) and is_secret_name(path[-1])
    if secret or isinstance(value, Mapping | list | tuple):
        return ""
    shown = repr(value)
    return f" (got {shown if len(shown) <= 60 else shown[:57] + '...'})"
