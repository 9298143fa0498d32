"""Row texts: a table payload as a fixed frame around one independent text per row.

Every row format is ``head`` + the rows' texts + ``tail``, and a row's text depends on that
row's values alone (the rules are per value, see ``_columns``):

==========  ======================  =====================  ======  ==========
format      head                    row text               tail    lead
==========  ======================  =====================  ======  ==========
csv         BOM? + header line?     the line, terminated   (none)  0
ndjson      (none)                  ``{...}`` + ``\\n``    (none)  0
json_array  ``[``                   ``,{...}``             ``]``   1
==========  ======================  =====================  ======  ==========

The payload of rows ``r..s`` is ``head`` + their texts concatenated, less ``lead`` bytes at
the very start when there is at least one row (the JSON array's first comma), + ``tail``:
exactly :func:`~dpone.codecs.encode_rows` of those rows. So the texts of a large block can be
computed once and any row interval's payload sliced out of them, without encoding again.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dpone.codecs._arrow import Array
from dpone.codecs._columns import Batches, probe_arrow_text
from dpone.codecs._csv import csv_frame, csv_row_texts
from dpone.codecs._errors import PayloadEncodingError
from dpone.codecs._json import json_row_texts
from dpone.contracts.mapping import PayloadMapping
from dpone.contracts.profile import Codec, PayloadFormat


@dataclass(frozen=True, slots=True)
class RowFrame:
    """What surrounds the row texts of one payload (see the module table)."""

    head: bytes
    tail: bytes
    lead: int


def row_frame(mapping: PayloadMapping, payload: PayloadFormat, codec: Codec) -> RowFrame:
    """The frame of the profile's row format; codec problems raise as :func:`encode_rows` does."""
    probe_arrow_text()
    if payload.format == "csv":
        return RowFrame(csv_frame(codec.csv, mapping), b"", 0)
    if payload.format == "ndjson":
        return RowFrame(b"", b"", 0)
    if payload.format == "json_array":
        return RowFrame(b"[", b"]", 1)
    raise PayloadEncodingError("a raw payload is a file, not rows: stream it with raw_stream")


def row_texts(batches: Batches, mapping: PayloadMapping, payload: PayloadFormat,
              codec: Codec) -> Iterator[Array]:
    """Each input slice's row texts, in order: null-free ``large_string`` arrays, one value per
    row. Values are checked as in :func:`encode_rows` (a :class:`PayloadEncodingError` names
    the column and the row, counted from the first input row)."""
    row_frame(mapping, payload, codec)  # refuses a bad codec before the first value
    if payload.format == "csv":
        return csv_row_texts(batches, mapping, codec.csv)
    lead, closing = ("", "}\n") if payload.format == "ndjson" else (",", "}")
    return json_row_texts(batches, mapping, codec.json_codec, lead, closing)
