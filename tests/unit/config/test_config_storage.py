"""`storage.url`: sqlite: by default, a checked postgresql:// URL, a clear error otherwise."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from signet_desktop.config.models import SignetConfig
from signet_desktop.config.storage import StorageConfig


def test_the_default_is_the_workspace_sqlite_file() -> None:
    storage = SignetConfig().storage
    assert storage.url == "sqlite:"
    assert storage.backend == "sqlite"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://db.example/signet",
        "postgres://signet@10.0.0.5:5433/memories",
        "postgresql:///signet?host=/run/postgresql",
        " postgresql://localhost/signet ",
    ],
)
def test_a_postgresql_url_is_accepted(url: str) -> None:
    storage = StorageConfig(url=url)
    assert storage.backend == "postgresql"
    assert storage.url == url.strip()


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("mysql://db/signet", "must be 'sqlite:' or a postgresql://host/database URL"),
        ("sqlite:///tmp/x.db", "must be 'sqlite:'"),
        ("", "must be 'sqlite:'"),
        ("postgresql://db.example", "must name one database"),
        ("postgresql://db.example/a/b", "must name one database"),
        ("postgresql://db.example:99999/signet", "port that is not a number"),
        ("postgresql://db.example:0/signet", "port that is not a number"),
        ("postgresql://db.example:abc/signet", "port that is not a number"),
        ("postgresql://me:hunter2@db.example/signet", "must not carry a password"),
    ],
)
def test_anything_else_is_refused_with_what_is_wrong(url: str, said: str) -> None:
    with pytest.raises(ValidationError) as caught:
        SignetConfig.model_validate({"storage": {"url": url}})
    assert said in str(caught.value)
    assert "hunter2" not in str(caught.value).split("input_value")[0]


def test_storage_knows_no_other_key() -> None:
    with pytest.raises(ValidationError):
        SignetConfig.model_validate({"storage": {"path": "/tmp/x"}})
