"""The one plain-text table renderer of the CLI's reports."""

from __future__ import annotations

from collections.abc import Collection, Sequence


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
