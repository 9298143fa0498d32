"""How PostgreSQL rows decode: psycopg returns dates, timestamps and JSON already decoded;
a child's scope and a parent's boundary are ``daterange`` values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpone.journal._fence import Scope
from dpone.journal._rows import RowCodec


class PostgresCodec(RowCodec):
    """psycopg values as they are; ``scope`` and ``boundary`` from their ranges."""

    def scope(self, row: Mapping[str, Any]) -> Scope:
        return Scope(row["scope"].lower, row["scope"].upper)

    def boundary(self, row: Mapping[str, Any]) -> Scope:
        return Scope(row["boundary"].lower, row["boundary"].upper)


CODEC = PostgresCodec()
