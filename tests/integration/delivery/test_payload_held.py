"""The payload a request sends is the payload just checked: read once, compared with the sealed
digest, and sent from those very bytes (a larger payload is hashed in the store and streamed)."""

from __future__ import annotations

import pytest

from dpone.contracts import DponeError, content_digest
from dpone.executor.supervisor import _request
from dpone.executor.supervisor._request import check_payload, outbound_request
from support.delivery import Harness, HarnessFactory

FAMILIES = pytest.mark.parametrize("family", ["sync", "async"])


def _alter(h: Harness, key: str, size: int) -> None:
    path = h.store.local_file(key)
    assert path is not None
    path.chmod(0o644)
    path.write_bytes(b"x" * size)  # the same length, other bytes


@FAMILIES
def test_a_payload_altered_after_its_check_is_not_what_the_request_sends(
        harness: HarnessFactory, family: str) -> None:
    h = harness(family)
    child = h.topology.children[0]
    checked = check_payload(child, h.store)
    assert checked is not None and content_digest(checked) == child.payload.digest
    _alter(h, child.payload.key, child.payload.size)

    body = b"".join(outbound_request(h.plan, child, h.store, checked).body)

    assert checked in body  # the whole body (sync) or its payload part (multipart)
    assert b"x" * child.payload.size not in body


def test_a_payload_over_the_held_size_is_hashed_in_the_store_and_streamed(
        harness: HarnessFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    h = harness("sync")
    child = h.topology.children[0]
    monkeypatch.setattr(_request, "IN_MEMORY_PAYLOAD_BYTES", child.payload.size - 1)
    assert check_payload(child, h.store) is None
    body = b"".join(outbound_request(h.plan, child, h.store).body)
    assert content_digest(body) == child.payload.digest

    _alter(h, child.payload.key, child.payload.size)
    with pytest.raises(DponeError) as refused:
        check_payload(child, h.store)
    assert refused.value.code == "REST_DELIVERY_INTENT_CONFLICT"
    assert refused.value.details["stored_digest"] == content_digest(b"x" * child.payload.size)


@pytest.mark.parametrize("held", [True, False])
def test_a_missing_payload_is_refused_as_before(harness: HarnessFactory, held: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    h = harness("sync")
    child = h.topology.children[0]
    if not held:
        monkeypatch.setattr(_request, "IN_MEMORY_PAYLOAD_BYTES", 0)
    path = h.store.local_file(child.payload.key)
    assert path is not None
    path.unlink()
    with pytest.raises(DponeError) as refused:
        check_payload(child, h.store)
    assert refused.value.code == "REST_DELIVERY_INTENT_CONFLICT"
    assert "is missing" in refused.value.message
    assert refused.value.details["stored_digest"] is None
