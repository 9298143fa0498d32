"""`dpone delivery inspect` names each child's keys as the receiver sees them: the delivery key,
the receiver mutation key and, for a multipart body, the payload filename (on both journals)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpone.receiver import ReceiverThread
from support.cli import FULL, ONE_ASYNC_CHILD, Dpone


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal=journal_url)


def test_inspect_shows_the_keys_and_the_filename_the_receiver_holds(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    delivered = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")
    assert delivered.code == 0, delivered.err
    parent_id = delivered.json()["parent_id"]

    document = dpone.inspect(parent_id, "--format", "json").json()
    text = dpone.inspect(parent_id)

    assert text.code == 0, text.err
    [child] = document["children"]
    filename = child["receiver_mutation_key"].removeprefix("sha256:") + ".csv.gz"
    assert child["payload_filename"] == filename
    assert receiver.state.jobs.by_filename(filename) is not None
    lines = text.out.splitlines()
    keys = lines.index("keys (as the receiver sees them):")
    assert lines[keys + 1].split() == ["child", "1", "delivery_key", child["delivery_key"]]
    assert lines[keys + 2].split() == ["receiver_mutation_key", child["receiver_mutation_key"]]
    assert lines[keys + 3].split() == ["payload_filename", filename]


def test_inspect_shows_every_childs_keys_without_a_filename_for_a_single_body(
        dpone: Dpone) -> None:
    delivered = dpone.deliver("measurements_sync", FULL, "--format", "json")
    assert delivered.code == 0, delivered.err

    document = dpone.inspect(delivered.json()["parent_id"], "--format", "json").json()
    text = dpone.inspect(delivered.json()["parent_id"]).out

    assert len(document["children"]) == delivered.json()["children_total"] > 1
    for child in document["children"]:
        assert child["payload_filename"] is None
        assert f"child {child['ordinal']}  delivery_key           {child['delivery_key']}" in text
        assert f"receiver_mutation_key  {child['receiver_mutation_key']}" in text
    assert "payload_filename" not in text
