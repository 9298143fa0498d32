"""What every ``--format json`` document shares: the strict base that leaves out fields a
command did not give, boundaries and scopes, and timestamps rendered as Python renders them."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, ClassVar

from pydantic import (
    Field,
    PlainSerializer,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from dpone.contracts._base import StrictModel

Timestamp = Annotated[dt.datetime, PlainSerializer(dt.datetime.isoformat, return_type=str)]
"""An instant as ``datetime.isoformat()`` writes it (``+00:00``, not ``Z``)."""


class Report(StrictModel):
    """A document (or part of one) a command writes: the fields named in ``OPTIONAL`` appear
    only when the command gave them (a given ``None`` is written as ``null``)."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _given_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        for name in self.OPTIONAL - self.model_fields_set:
            data.pop(type(self).model_fields[name].alias or name, None)
        return data


class Interval(Report):
    """A half-open interval of calendar days: ``[from, to)``."""

    from_date: dt.date = Field(alias="from")
    to_date: dt.date = Field(alias="to")

    @classmethod
    def of(cls, from_date: dt.date, to_date: dt.date) -> Interval:
        return cls(from_date=from_date, to_date=to_date)

    def render(self) -> str:
        return f"[{self.from_date.isoformat()}, {self.to_date.isoformat()})"
