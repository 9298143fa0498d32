"""A sealed payload altered in the artifact store after sealing: resume refuses before any request
and says what happened (the payload no longer matches its digest), not an intent change."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from dpone.artifacts import LocalArtifactStore
from dpone.contracts import content_digest
from dpone.receiver import ReceiverThread
from support.cli import TWO_ASYNC_CHILDREN, Dpone, posts


@pytest.fixture
def dpone(registry: Path, tmp_path: Path) -> Dpone:
    return Dpone(registry, tmp_path / "state")


def test_a_tampered_payload_says_it_no_longer_matches_its_digest(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    run = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json")
    assert run.code == 0, run.out + run.err
    parent_id = str(run.json()["parent_id"])
    with sqlite3.connect(dpone.state / "journal.sqlite3") as connection:
        (document_key,) = connection.execute(
            "SELECT payload_document_key FROM rest_delivery_child WHERE ordinal = 2").fetchone()
    store = LocalArtifactStore(dpone.state / "artifacts")
    payload = json.loads(store.get_bytes(str(document_key)))["payload"]
    path = dpone.state / "artifacts" / payload["key"]
    path.chmod(0o644)
    path.write_bytes(b"tampered\n")
    assert posts(receiver) == 1

    for fmt in ("json", "text"):
        # child 1's job completes first; child 2 is then refused before its submit
        resumed = dpone.resume(parent_id, "--apply", "--wait", "--format", fmt)

        assert resumed.code == 2, resumed.out + resumed.err
        if fmt == "json":
            document = resumed.json()  # admitted: one delivery result, stopped with the refusal
            assert (document["schema"], document["status"]) == ("dpone.delivery_result.v1",
                                                                 "stopped")
            error = document["stopped"]
            assert error["code"] == "REST_DELIVERY_INTENT_CONFLICT"
            assert "the sealed payload no longer matches its digest" in error["message"]
            assert error["details"] == {
                "payload_key": payload["key"], "sealed_digest": payload["digest"],
                "stored_digest": content_digest(b"tampered\n")}
            assert "altered after sealing" in error["hint"]
            assert "governed generation" not in error["hint"]
            assert "Correct intent" not in error["hint"]
        else:
            assert "the sealed payload no longer matches its digest" in resumed.out
            assert "governed generation" not in resumed.out
    assert posts(receiver) == 1
