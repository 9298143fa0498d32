"""The one error the encoders raise for a value or schema they refuse to encode."""

from __future__ import annotations


class PayloadEncodingError(ValueError):
    """A source value or schema that has no faithful encoding under the codec.

    Carries field evidence: the mapping column and the 0-based row index within the encoded
    stream (``None`` when the problem is the schema, not a value). Never carries the value
    itself, so the message is safe to log.
    """

    def __init__(self, reason: str, *, column: str | None = None, row: int | None = None) -> None:
        self.reason = reason
        self.column = column
        self.row = row
        where = ""
        if column is not None:
            where = f"column {column!r}" + (f", row {row}" if row is not None else "") + ": "
        super().__init__(where + reason)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self.reason, self.column, self.row))


def _rebuild(reason: str, column: str | None, row: int | None) -> PayloadEncodingError:
    return PayloadEncodingError(reason, column=column, row=row)


class PayloadIntegrityError(ValueError):
    """Payload bytes that differ from the sealed size or digest they were declared with."""
