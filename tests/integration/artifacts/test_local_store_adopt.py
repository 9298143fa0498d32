"""The local store adopts a file its caller wrote and hashed: no copy, no second hash."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

import pytest

from dpone.artifacts import LocalArtifactStore
from dpone.contracts import DponeError, content_digest

DATA = b"parent bytes " * 4096


def _written(tmp_path: Path, data: bytes = DATA) -> Path:
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    path = scratch / "parent.arrow"
    path.write_bytes(data)
    return path


def test_a_new_key_is_the_callers_file_made_read_only(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    source = _written(tmp_path)
    ref = store.adopt_file("parents/sha256/a.arrow", source, content_digest(DATA), len(DATA))
    assert (ref.key, ref.digest, ref.size) == ("parents/sha256/a.arrow", content_digest(DATA),
                                               len(DATA))
    published = tmp_path / "store/parents/sha256/a.arrow"
    assert published.read_bytes() == DATA
    assert os.path.samefile(published, source)  # linked, not copied
    assert stat.S_IMODE(published.stat().st_mode) == 0o440
    assert store.stat(ref.key) == ref


def test_an_existing_key_with_the_same_bytes_is_a_no_op(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    first = store.put_bytes("parents/p.arrow", DATA)
    again = store.adopt_file("parents/p.arrow", _written(tmp_path), content_digest(DATA),
                             len(DATA))
    assert again == first


def test_an_existing_key_with_other_bytes_is_a_conflict_and_keeps_its_bytes(
        tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    store.put_bytes("parents/p.arrow", b"other")
    with pytest.raises(DponeError) as caught:
        store.adopt_file("parents/p.arrow", _written(tmp_path), content_digest(DATA), len(DATA))
    assert caught.value.code == "artifact.conflict"
    assert store.get_bytes("parents/p.arrow") == b"other"


def test_a_file_of_another_size_than_announced_is_refused(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    with pytest.raises(DponeError) as caught:
        store.adopt_file("parents/p.arrow", _written(tmp_path), content_digest(DATA),
                         len(DATA) + 1)
    assert caught.value.code == "artifacts.unavailable"
    assert store.stat("parents/p.arrow") is None


def test_a_file_on_another_filesystem_is_copied_in_and_hashed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    source = _written(tmp_path)
    real_link = os.link

    def cross_device(src: str | Path, dst: str | Path) -> None:
        if Path(src) == source:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real_link(src, dst)

    monkeypatch.setattr(os, "link", cross_device)
    ref = store.adopt_file("parents/p.arrow", source, content_digest(DATA), len(DATA))
    published = tmp_path / "store/parents/p.arrow"
    assert not os.path.samefile(published, source)
    assert ref.digest == "sha256:" + hashlib.sha256(published.read_bytes()).hexdigest()
    assert ref.digest == content_digest(DATA)
