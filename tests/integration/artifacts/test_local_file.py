"""``local_file``: a store that keeps artifacts as local files lends the file to readers (the
sealer memory-maps the parent in place); S3 has none, and readers stream."""

from __future__ import annotations

import pytest

from dpone.contracts import DponeError
from support.artifacts import StoreHarness


def test_local_file_holds_the_stored_bytes_or_is_none(harness: StoreHarness) -> None:
    store = harness.make()
    ref = store.put_bytes("parents/sha256/abc.arrow", b"frozen parent bytes")

    local = store.local_file(ref.key)

    if harness.kind == "local":
        assert local is not None and local.read_bytes() == b"frozen parent bytes"
    else:
        assert local is None
    assert store.local_file("parents/sha256/absent.arrow") is None


@pytest.mark.parametrize("key", ["../outside", "/abs/key", "a//b"])
def test_local_file_refuses_a_key_that_is_not_portable(harness: StoreHarness, key: str) -> None:
    with pytest.raises(DponeError) as caught:
        harness.make().local_file(key)
    assert caught.value.code == "artifact.invalid_key"
