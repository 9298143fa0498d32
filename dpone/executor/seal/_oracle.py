"""The sealer's size oracle: cheap per-day estimates, exact child sizes spooled for publishing.

Sealing must cost about one encode + compress + SHA-256 pass over the parent. So:

* ``estimate`` encodes nothing. Decoded bytes are the UTF-8 bytes of the interval's string
  values (read from Arrow buffers) plus a per-row constant, plus the payload's fixed header;
  sealed bytes scale the decoded bytes by the compression ratio. The constants come from one
  deterministic sample of the parent (its first :data:`SAMPLE_ROWS` rows, encoded and
  compressed with the profile's codec once), so the same parent always gets the same
  estimates. They are close for rows like the sample and may be off either way for others;
  the planner only uses them to propose windows.
* ``measure`` encodes the interval exactly once and hands the sealed bytes to a
  :class:`~dpone.executor.seal._spool.SpoolWriter`, which hashes them and writes them to a spool
  file of their own in a scratch directory, keyed by the interval, while the planner goes on
  (the sizes are known at once; the digest when the file is written).
  Publishing a child hands that file to the artifact store: a local store on the same
  filesystem adopts it as it is (no copy, no second hash), any other store reads it (any thread
  may). The files of intervals the planner rejected are deleted at once, the rest with the
  scratch directory. Memory stays about one child's working set: bytes live on disk, not in
  the heap.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from dpone.executor.seal._payload import PayloadEncoder
from dpone.executor.seal._spool import SpoolWriter
from dpone.plans import Measured

SAMPLE_ROWS = 50_000
_READ_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Spooled:
    """The sealed bytes of one exactly measured interval: a scratch file of their own."""

    path: Path
    decoded_bytes: int
    sealed_bytes: int
    written: Future[str]

    @property
    def digest(self) -> str:
        """The sealed bytes' digest, once the file holds them (raises the write's error)."""
        return self.written.result()


@dataclass(frozen=True, slots=True)
class _Model:
    """Integer estimate constants, from the empty payload and the parent's first rows."""

    header_decoded: int
    header_sealed: int
    per_row_num: int  # decoded bytes per row beyond the string values: num / den
    per_row_den: int
    ratio_num: int  # sealed body bytes per decoded body byte: num / den
    ratio_den: int


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


class SealingOracle:
    """The planner's :class:`dpone.plans.SizeOracle` over one parent table.

    The wire size is the sealed payload size plus ``overhead``: the bytes a multipart envelope
    adds (0 for a single body). The overhead does not depend on the rows because every rendered
    value in the envelope has a fixed length for one plan (dates, digests, the filename and the
    boundary); each child's real envelope is checked against the plan.
    """

    def __init__(self, encoder: PayloadEncoder, table: pa.Table, overhead: int,
                 scratch: Path) -> None:
        self._encoder = encoder
        self._table = table
        self._overhead = overhead
        self._scratch = scratch
        self._spooled_files = 0
        self._text = [table.column(index) for index, field in enumerate(table.schema)
                      if pa.types.is_string(field.type) or pa.types.is_large_string(field.type)]
        self._spools: dict[tuple[int, int], Spooled] = {}
        self._model: _Model | None = None
        self._writer = SpoolWriter()

    def _sized(self, spooled: Spooled) -> Measured:
        return Measured(decoded_bytes=spooled.decoded_bytes,
                        wire_bytes=spooled.sealed_bytes + self._overhead)

    def measure(self, first_row: int, row_count: int) -> Measured:
        key = (first_row, row_count)
        spooled = self._spools.get(key)
        if spooled is None:
            spooled = self._spool(first_row, row_count)
            self._spools[key] = spooled
        return self._sized(spooled)

    def _spool(self, first_row: int, row_count: int) -> Spooled:
        chunks, decoded = self._encoder.sealed_chunks(first_row, row_count)
        size = sum(len(chunk) for chunk in chunks)
        self._spooled_files += 1
        path = self._scratch / f"payload-{self._spooled_files:06d}.spool"
        return Spooled(path, decoded, size, self._writer.write(path, chunks, size))

    def estimate(self, first_row: int, row_count: int) -> Measured:
        model = self._model if self._model is not None else self._calibrate()
        decoded = (model.header_decoded + self._text_bytes(first_row, row_count)
                   + _ceil_div(row_count * model.per_row_num, model.per_row_den))
        sealed = model.header_sealed + _ceil_div(
            (decoded - model.header_decoded) * model.ratio_num, model.ratio_den)
        return Measured(decoded_bytes=decoded, wire_bytes=sealed + self._overhead)

    def _text_bytes(self, first_row: int, row_count: int) -> int:
        total = 0
        for column in self._text:
            value = pc.sum(pc.binary_length(column.slice(first_row, row_count))).as_py()
            total += value or 0
        return int(total)

    def _calibrate(self) -> _Model:
        """Measure the empty payload and the first rows exactly (spooled like any interval)."""
        empty = self.measure(0, 0)
        rows = min(self._table.num_rows, SAMPLE_ROWS)
        sample = self.measure(0, rows)
        header_sealed = empty.wire_bytes - self._overhead
        body_decoded = sample.decoded_bytes - empty.decoded_bytes
        body_sealed = sample.wire_bytes - self._overhead - header_sealed
        per_row = max(body_decoded - self._text_bytes(0, rows), 0)
        self._model = _Model(
            header_decoded=empty.decoded_bytes, header_sealed=header_sealed,
            per_row_num=per_row, per_row_den=max(rows, 1),
            ratio_num=max(body_sealed, 1) if body_decoded > 0 else 1,
            ratio_den=max(body_decoded, 1))
        return self._model

    def take(self, first_row: int, row_count: int) -> Spooled | None:
        """The spool of an exactly measured interval, handed over to the caller (or None)."""
        return self._spools.pop((first_row, row_count), None)

    def discard_except(self, keep: set[tuple[int, int]]) -> None:
        """Delete the spool files of intervals that did not become children."""
        for key in [key for key in self._spools if key not in keep]:
            spooled = self._spools.pop(key)
            spooled.written.exception()  # written (or failed) before it is deleted
            spooled.path.unlink(missing_ok=True)

    def close(self) -> None:
        """Wait for the spools still being written, and forget them (their scratch directory
        deletes the files)."""
        self._writer.close()
        self._spools.clear()


def read_spool(spooled: Spooled) -> Iterator[bytes]:
    """The spooled sealed bytes, in chunks, once written whole (safe from any thread)."""
    spooled.written.result()
    with spooled.path.open("rb") as spool:
        while chunk := spool.read(_READ_CHUNK):
            yield chunk
