"""The one plain-text table renderer of the CLI's reports."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final

SHOWN_ROWS: Final = 50
"""Beyond this many rows a report shows its first and last rows and one line for the rest."""


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]],
               numeric: Collection[str]) -> str:
    """``header`` and ``rows`` as aligned columns, each line indented by two spaces; the columns
    named in ``numeric`` align right, the others left."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        cells = [cell.rjust(w) if name in numeric else cell.ljust(w)
                 for name, cell, w in zip(header, row, widths, strict=True)]
        return "  " + "  ".join(cells).rstrip()

    return "\n".join([line(header), *(line(row) for row in rows)])


def summarized(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Collection[str],
               *, show_all: bool = False, noun: str = "children",
               how: str = "--all shows every one", total: Sequence[str] | None = None) -> str:
    """:func:`text_table`, with at most :data:`SHOWN_ROWS` rows: beyond that the first and the
    last half of them and, between, one line counting those left out (``how`` tells how to see
    them). The columns keep the widths of every row, so the two halves align. Beyond
    :data:`SHOWN_ROWS` rows (``show_all`` or not) the ``total`` row, if any, ends the table."""
    if len(rows) <= SHOWN_ROWS:
        return text_table(header, rows, numeric)
    closing = [total] if total is not None else []
    lines = text_table(header, [*rows, *closing], numeric).split("\n")
    body, last = lines[:1 + len(rows)], lines[1 + len(rows):]
    if show_all:
        return "\n".join([*body, *last])
    half = SHOWN_ROWS // 2
    left_out = len(rows) - 2 * half
    return "\n".join([*body[:1 + half], f"  ... {left_out} more {noun} ({how}) ...",
                      *body[-half:], *last])
