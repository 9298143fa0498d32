"""`dpone delivery inspect` shows each child's sealed rows and wire bytes (they were always
null in its JSON): both admitted journal facts, the figures `deliver` printed, whatever artifact
store the command names (inspect reads no payload document)."""

from __future__ import annotations

import re
from pathlib import Path

from dpone.receiver import ReceiverThread
from support.cli import TWO_ASYNC_CHILDREN, Dpone


def test_inspect_json_and_text_carry_rows_and_wire_bytes(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread) -> None:
    dpone = Dpone(registry, tmp_path / "state", journal=journal_url)
    delivered = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json")
    assert delivered.code == 0, delivered.out + delivered.err
    expected = [(c["rows"], c["wire_bytes"]) for c in delivered.json()["children"]]
    assert all(rows and size for rows, size in expected)
    parent_id = delivered.json()["parent_id"]

    inspected = dpone.inspect(parent_id, "--artifacts", str(dpone.state / "artifacts"),
                              "--format", "json")
    text = dpone.inspect(parent_id, "--artifacts", str(dpone.state / "artifacts"))
    elsewhere = dpone.inspect(parent_id, "--artifacts", str(tmp_path / "empty"), "--format",
                              "json")

    assert [(c["rows"], c["wire_bytes"]) for c in inspected.json()["children"]] == expected
    rows, size = expected[0]
    assert re.search(rf"\s{rows}\s+{size}\s", text.out), text.out
    assert [(c["rows"], c["wire_bytes"]) for c in elsewhere.json()["children"]] == expected
