"""ReadThroughStore reads the store it is given and never writes it: what that store lacks goes
to the scratch store, and a write of a key it holds settles against it like the store would."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from dpone.artifacts import LocalArtifactStore, ReadThroughStore
from dpone.contracts import DponeError


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture
def stores(tmp_path: Path) -> tuple[LocalArtifactStore, LocalArtifactStore, ReadThroughStore]:
    base = LocalArtifactStore(tmp_path / "named")
    base.put_bytes("payloads/held.bin", b"held bytes")
    scratch = LocalArtifactStore(tmp_path / "scratch")
    return base, scratch, ReadThroughStore(base, scratch)


def test_held_keys_are_read_from_the_named_store_and_never_rewritten(
        stores: tuple[LocalArtifactStore, LocalArtifactStore, ReadThroughStore]) -> None:
    base, scratch, store = stores
    before = _tree(base.root)

    ref = store.put_bytes("payloads/held.bin", b"held bytes")
    source = scratch.root.parent / "adopted"
    source.write_bytes(b"held bytes")
    adopted = store.adopt_file("payloads/held.bin", source, ref.digest, ref.size)

    assert ref == adopted == base.stat("payloads/held.bin")
    assert store.get_bytes("payloads/held.bin") == b"held bytes"
    assert store.local_file("payloads/held.bin") == base.local_file("payloads/held.bin")
    assert store.written == ()
    assert _tree(base.root) == before and not scratch.root.exists()


def test_other_bytes_under_a_held_key_conflict(
        stores: tuple[LocalArtifactStore, LocalArtifactStore, ReadThroughStore]) -> None:
    _, _, store = stores
    with pytest.raises(DponeError) as raised:
        store.put_stream("payloads/held.bin", [b"other ", b"bytes"])
    assert raised.value.code == "artifact.conflict"


def test_what_the_named_store_lacks_goes_to_the_scratch_store(
        stores: tuple[LocalArtifactStore, LocalArtifactStore, ReadThroughStore]) -> None:
    base, scratch, store = stores
    before = _tree(base.root)

    ref = store.put_stream("payloads/new.bin", [b"new ", b"bytes"])

    assert ref.digest == "sha256:" + hashlib.sha256(b"new bytes").hexdigest()
    assert store.written == ("payloads/new.bin",)
    assert store.get_bytes("payloads/new.bin") == b"new bytes"
    assert b"".join(store.open_stream("payloads/new.bin")) == b"new bytes"
    assert store.stat("payloads/new.bin") == scratch.stat("payloads/new.bin") == ref
    assert base.stat("payloads/new.bin") is None and _tree(base.root) == before
    assert store.put_bytes("payloads/new.bin", b"new bytes") == ref  # settles in scratch
