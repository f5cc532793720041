"""Base classes shared by every agent.yaml model: frozen, alias-aware, strict about keys."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ConfigModel(BaseModel):
    """A section whose YAML keys are the Python field names (Signet's snake_case sections)."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        populate_by_name=True,
        validate_default=True,
    )


class CamelConfigModel(ConfigModel):
    """A config section whose YAML keys are camelCase (Signet's `memory.*`, `hooks.*`, `auth.*`)."""

    model_config = ConfigDict(alias_generator=to_camel)


class OpenConfigModel(CamelConfigModel):
    """A permissive section (inference registry entries): known keys typed, others kept."""

    model_config = ConfigDict(extra="allow")
