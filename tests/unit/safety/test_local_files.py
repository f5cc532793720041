"""safety/local_files.py: roots per caller, credential stores, the check on the opened file."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest

from signet_desktop.domain.errors import Forbidden, InvalidInput
from signet_desktop.safety import local_files
from signet_desktop.safety.local_files import FileRoots, is_credential_store


@pytest.mark.parametrize(
    "path",
    [
        "/home/u/.ssh/id_ed25519",
        "/home/u/.aws/credentials",
        "/home/u/.gnupg/private-keys-v1.d/x.key",
        "/home/u/.config/gcloud/application_default_credentials.json",
        "/home/u/.netrc",
        "/home/u/.git-credentials",
        "/home/u/.local/share/keyrings/login.keyring",
        "/Users/u/Library/Keychains/login.keychain-db",
        "/srv/app/.env",
        "/srv/app/.env.production",
        "/home/u/.kube/config",
        "/home/u/.docker/config.json",
        "/home/u/.pgpass",
        "/home/u/.npmrc",
        "/home/u/.pypirc",
        "/home/u/.ssh",
    ],
)
def test_credential_stores_are_recognised(path: str) -> None:
    assert is_credential_store(PurePosixPath(path))


@pytest.mark.parametrize(
    "path",
    ["/home/u/notes/ssh.md", "/home/u/.config/app.toml", "/srv/app/env.md", "/home/u/.environment"],
)
def test_ordinary_files_are_not_credential_stores(path: str) -> None:
    assert not is_credential_store(PurePosixPath(path))


def test_only_the_local_user_reads_the_defaults(tmp_path: Path) -> None:
    none = FileRoots.of([], [tmp_path])
    assert none.for_caller(True) == (tmp_path.resolve(),)
    assert none.for_caller(False) == ()
    some = FileRoots.of([tmp_path / "shared"], [tmp_path])
    assert some.for_caller(False) == ((tmp_path / "shared").resolve(),)
    assert set(some.for_caller(True)) == {(tmp_path / "shared").resolve(), tmp_path.resolve()}


def test_open_file_checks_the_file_it_opened(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret", encoding="utf-8")
    (root / "note.txt").write_text("note", encoding="utf-8")
    with local_files.open_file(str(root / "note.txt"), [root]) as handle:
        assert handle.read() == b"note"
    (root / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(Forbidden) as refused:
        local_files.open_file(str(root / "link.txt"), [root])
    assert refused.value.code == "path_not_allowed"
    with pytest.raises(Forbidden) as none:
        local_files.open_file(str(root / "note.txt"), [])
    assert "files.roots" in none.value.message


def test_a_missing_path_outside_the_roots_is_refused_not_reported_missing(tmp_path: Path) -> None:
    with pytest.raises(Forbidden):
        local_files.open_file(str(tmp_path / "elsewhere" / "missing.txt"), [tmp_path / "root"])
    with pytest.raises(InvalidInput) as missing:
        local_files.open_file(str(tmp_path / "missing.txt"), [tmp_path])
    assert missing.value.code == "path_not_found"


def test_a_fifo_or_directory_is_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    for target in (tmp_path / "pipe", tmp_path):
        with pytest.raises(InvalidInput) as refused:
            local_files.open_file(str(target), [tmp_path])
        assert refused.value.code == "path_not_found"


def test_a_credential_store_is_refused_through_a_link_either_way(tmp_path: Path) -> None:
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_rsa").write_text("key", encoding="utf-8")
    (tmp_path / "innocent").symlink_to(tmp_path / ".ssh" / "id_rsa")
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "k").write_text("key", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".aws").symlink_to(tmp_path / "keys")
    for target in (tmp_path / "innocent", tmp_path / "sub" / ".aws" / "k"):
        with pytest.raises(Forbidden) as refused:
            local_files.open_file(str(target), [tmp_path])
        assert refused.value.code == "path_credential_store"
    with pytest.raises(Forbidden):
        local_files.open_dir(str(tmp_path / ".ssh"), [tmp_path])


def test_descriptor_path_is_the_opened_file(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("a", encoding="utf-8")
    fd = os.open(tmp_path / "a", os.O_RDONLY)
    try:
        (tmp_path / "a").rename(tmp_path / "b")  # moved after the open: the descriptor knows
        assert local_files.descriptor_path(fd, tmp_path / "a") == (tmp_path / "b").resolve()
    finally:
        os.close(fd)


def test_a_swap_between_the_pre_check_and_the_open_is_caught_on_the_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret", encoding="utf-8")
    victim = root / "note.txt"
    victim.write_text("note", encoding="utf-8")
    real_open = os.open

    def racing_open(path: object, flags: int, *args: object) -> int:
        if Path(str(path)) == victim and not victim.is_symlink():  # the attacker wins here
            victim.unlink()
            victim.symlink_to(outside / "secret.txt")
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", racing_open)
    with pytest.raises(Forbidden) as refused:
        local_files.open_file(str(victim), [root])
    assert refused.value.code == "path_not_allowed"
