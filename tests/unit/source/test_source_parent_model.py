"""The `dpone.rest_source_parent.v1` model refuses inconsistent parents."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from pydantic import ValidationError

from dpone.contracts import canonical_json
from dpone.contracts.source_parent import SourceParent

HEX = "ab" * 32


def _document(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema": "dpone.rest_source_parent.v1",
        "artifact": {"key": f"parents/sha256/{HEX}.arrow", "digest": f"sha256:{HEX}",
                     "size": 100},
        "row_count": 5,
        "columns": [{"name": "day", "type": "date", "nullable": False},
                    {"name": "id", "type": "string", "nullable": False},
                    {"name": "v", "type": "float64", "nullable": True}],
        "sort_keys": ["day", "id"],
        "scope_field": "day",
        "boundary": {"from_date": "2026-08-01", "to_date": "2026-08-08", "time_zone": "UTC"},
        "source": {"type": "file", "format": "csv", "version": f"sha256:{'cd' * 32}"},
        "mapping_digest": f"sha256:{'ef' * 32}",
        "scope_index": [{"date": "2026-08-01", "first_row": 0, "row_count": 2},
                        {"date": "2026-08-03", "first_row": 2, "row_count": 3}],
        "complete": True,
    }
    document.update(changes)
    return document


def _load(document: dict[str, Any]) -> SourceParent:
    return SourceParent.model_validate_json(json.dumps(document))


def test_a_valid_parent_round_trips_through_canonical_json() -> None:
    parent = _load(_document())
    assert parent.canonical_bytes() == canonical_json(_document())
    assert SourceParent.model_validate_json(parent.canonical_bytes()) == parent
    assert parent.boundary.from_date == dt.date(2026, 8, 1)


def test_a_postgres_parent_carries_its_snapshot() -> None:
    source = {"type": "postgres", "format": None,
              "version": {"server_version": "15.18", "snapshot": "726:726:",
                          "query_digest": f"sha256:{'01' * 32}"}}
    assert _load(_document(source=source)).source.type == "postgres"


@pytest.mark.parametrize("changes", [
    {"complete": False},
    {"row_count": 6},
    {"sort_keys": ["id", "day"]},
    {"sort_keys": ["day", "missing"]},
    {"scope_field": "id", "sort_keys": ["id"]},
    {"artifact": {"key": "parents/sha256/other.arrow", "digest": f"sha256:{HEX}", "size": 1}},
    {"boundary": {"from_date": "2026-08-08", "to_date": "2026-08-01", "time_zone": "UTC"}},
    {"scope_index": [{"date": "2026-08-03", "first_row": 0, "row_count": 2},
                     {"date": "2026-08-01", "first_row": 2, "row_count": 3}]},
    {"scope_index": [{"date": "2026-08-01", "first_row": 0, "row_count": 2},
                     {"date": "2026-08-03", "first_row": 3, "row_count": 2}]},
    {"scope_index": [{"date": "2026-08-08", "first_row": 0, "row_count": 5}]},
    {"scope_index": [{"date": "2026-08-01", "first_row": 0, "row_count": 0},
                     {"date": "2026-08-03", "first_row": 0, "row_count": 5}]},
    {"source": {"type": "postgres", "format": None, "version": f"sha256:{'cd' * 32}"}},
    {"source": {"type": "file", "format": None, "version": f"sha256:{'cd' * 32}"}},
    {"extra": 1},
])
def test_inconsistent_parents_are_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        _load(_document(**changes))


def test_an_empty_parent_has_an_empty_index() -> None:
    parent = _load(_document(row_count=0, scope_index=[]))
    assert parent.row_count == 0 and parent.scope_index == ()
