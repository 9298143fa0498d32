"""The artifact stores' one deletion, ``ArtifactExpiryPort.expire`` (payload retention), on
every adapter: the local directory and the S3 endpoint the tests start. It deletes exactly the
key it names, says whether the key existed, refuses an invalid key, and leaves the key free for
the same bytes again (a deterministic re-seal restores a payload deleted too early)."""

from __future__ import annotations

import pytest

from dpone.contracts import DponeError, content_digest
from dpone.contracts.ports import ArtifactRef
from support.artifacts import StoreHarness

PAYLOAD = "payloads/sha256/" + "a" * 64 + ".ndjson"
DOCUMENT = "payloads/sha256/" + "b" * 64 + ".json"
PLAN = "plans/sha256/" + "c" * 64 + ".json"


def test_expire_deletes_exactly_the_named_key(harness: StoreHarness) -> None:
    store = harness.make()
    for key in (PAYLOAD, DOCUMENT, PLAN):
        store.put_bytes(key, key.encode())

    assert store.expire(PAYLOAD) is True

    assert store.stat(PAYLOAD) is None
    with pytest.raises(DponeError) as caught:
        store.get_bytes(PAYLOAD)
    assert caught.value.code == "artifact.not_found"
    assert harness.stored_names() == sorted([DOCUMENT, PLAN])
    assert store.get_bytes(DOCUMENT) == DOCUMENT.encode()


def test_expire_of_an_absent_key_is_false_and_changes_nothing(harness: StoreHarness) -> None:
    store = harness.make()
    store.put_bytes(DOCUMENT, b"kept")

    assert store.expire(PAYLOAD) is False
    assert store.expire("payloads/never/written.json") is False

    assert harness.stored_names() == [DOCUMENT]


def test_an_expired_key_takes_the_same_bytes_again(harness: StoreHarness) -> None:
    store = harness.make()
    data = b'{"row":1}\n' * 100
    store.put_bytes(PAYLOAD, data)
    assert store.expire(PAYLOAD) is True

    again = store.put_stream(PAYLOAD, iter([data]))

    assert again == ArtifactRef(key=PAYLOAD, digest=content_digest(data), size=len(data))
    assert store.get_bytes(PAYLOAD) == data
    assert store.expire(PAYLOAD) is True and store.expire(PAYLOAD) is False


@pytest.mark.parametrize("key", ["../escape.json", "/absolute.json", "a//b.json", ""])
def test_expire_refuses_an_invalid_key(harness: StoreHarness, key: str) -> None:
    store = harness.make()
    store.put_bytes(DOCUMENT, b"kept")

    with pytest.raises(DponeError) as caught:
        store.expire(key)

    assert caught.value.code == "artifact.invalid_key"
    assert harness.stored_names() == [DOCUMENT]
