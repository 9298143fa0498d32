"""How SQLite rows decode: dates and timestamps are ISO text, JSON columns are JSON text."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from dpone.contracts._errors import DponeError
from dpone.journal._rows import RowCodec

MOMENT_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
"""Timestamps written from Python: UTC, microseconds, ``Z`` (parsed like the clock's text)."""


def moment_text(moment: dt.datetime) -> str:
    if moment.tzinfo is None:
        raise DponeError(code="journal.illegal_transition",
                         message="journal timestamps must be timezone-aware")
    return moment.astimezone(dt.UTC).strftime(MOMENT_FORMAT)


def parse_moment(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).astimezone(dt.UTC)


class SqliteCodec(RowCodec):
    """ISO text to aware UTC datetimes and dates; JSON text to documents."""

    def moment(self, value: Any) -> dt.datetime:
        return parse_moment(value)

    def day(self, value: Any) -> dt.date:
        return dt.date.fromisoformat(value)

    def document(self, value: Any) -> Any:
        return json.loads(value)


CODEC = SqliteCodec()
