"""Reviewed goldens: parent digest, parent_plan_digest and payload digests of each example.

Regenerate with ``pytest tests/integration/seal/test_seal_goldens.py --snapshot-update`` (syrupy)
and review the diff of ``goldens/seal/<example>.json``. Payload bytes depend on the codec
libraries recorded there (gzip output differs between zlib builds).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from dpone.codecs import codec_libraries
from support.common import ROOT
from support.seal import EXAMPLE_NAMES, Sealed

GOLDENS = ROOT / "goldens" / "seal"


class SealGolden(SingleFileSnapshotExtension):
    """One pretty-printed JSON file per example under goldens/seal, named for the example."""

    _write_mode = WriteMode.TEXT
    file_extension = "json"

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        return str(GOLDENS)

    @classmethod
    def get_snapshot_name(cls, *, test_location: Any, index: Any = 0) -> str:
        return str(test_location.testname).split("[", 1)[1].rstrip("]")


@pytest.fixture
def golden(snapshot: Any) -> Any:
    return snapshot.use_extension(SealGolden)


def _golden(name: str, sealed: Sealed) -> dict[str, Any]:
    topology = sealed.topology
    first = topology.children[0]
    return {
        "example": name,
        "interval": {"from": "2026-08-01", "to": "2026-09-01"},
        "codec_libraries": codec_libraries(),
        "plan_digest": topology.plan_digest,
        "parent_digest": topology.parent_digest,
        "parent_plan_digest": topology.parent_plan_digest,
        "rows": topology.total_rows,
        "children": [
            {"ordinal": c.descriptor.ordinal,
             "scope": [c.descriptor.scope_from.isoformat(), c.descriptor.scope_to.isoformat()],
             "part": [c.descriptor.part, c.descriptor.parts],
             "rows": c.descriptor.row_count,
             "payload_digest": c.payload.digest}
            for c in topology.children],
        "first_child_excerpt": _excerpt(sealed.decoded(first).decode("utf-8").split("\n")),
    }


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_sealed_digests_match_golden(name: str, sealed_examples: dict[str, Sealed],
                                    golden: Any) -> None:
    actual = _golden(name, sealed_examples[name])
    assert json.dumps(actual, indent=2, sort_keys=True, ensure_ascii=False) + "\n" == golden


def _excerpt(lines: list[str]) -> list[str]:
    """The header and first two records, plus the first record holding an empty string
    (``""`` in CSV, ``""`` as a JSON value) so null vs empty stays visible in review."""
    head = lines[:3]
    empty = next((line for line in lines[3:] if ',"",' in line or '":""' in line), None)
    return [*head, *([empty] if empty else [])]
