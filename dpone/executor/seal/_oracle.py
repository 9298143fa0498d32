"""The sealer's size oracle: cheap per-day estimates, exact child sizes spooled for publishing.

Sealing must cost about one encode + compress + SHA-256 pass over the parent. So:

* ``estimate`` encodes nothing. Decoded bytes are the UTF-8 bytes of the interval's string
  values (read from Arrow buffers) plus a per-row constant, plus the payload's fixed header;
  sealed bytes scale the decoded bytes by the compression ratio. The constants come from one
  deterministic sample of the parent (its first :data:`SAMPLE_ROWS` rows, encoded and
  compressed with the profile's codec once), so the same parent always gets the same
  estimates. They are close for rows like the sample and may be off either way for others;
  the planner only uses them to propose windows.
* ``measure`` encodes the interval exactly once and appends the sealed bytes to one spool file
  in a scratch directory, keyed by the interval, with their offset, size and digest.
  Publishing a child streams its byte range into the artifact store (any thread may read);
  the ranges of intervals the planner rejected are forgotten and the file is deleted with the
  scratch directory. Memory stays about one child's working set: bytes live on disk, not in
  the heap.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from dpone.executor.seal._payload import PayloadEncoder
from dpone.plans import Measured

SAMPLE_ROWS = 50_000
_READ_CHUNK = 1 << 20


class _SpoolFile:
    """One append-only scratch file; appends from one thread, reads from any (``pread``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = path.open("x+b")
        self._end = 0

    def append(self, chunks: Iterable[bytes]) -> tuple[int, int]:
        """Write the chunks after the last range; their (offset, size) once all are written."""
        start = self._end
        try:
            for chunk in chunks:
                self._file.write(chunk)
                self._end += len(chunk)
            self._file.flush()
        except BaseException:
            self._file.seek(start)
            self._file.truncate()
            self._end = start
            raise
        return start, self._end - start

    def read(self, offset: int, size: int) -> Iterator[bytes]:
        fd = self._file.fileno()
        while size:
            chunk = os.pread(fd, min(size, _READ_CHUNK), offset)
            if not chunk:
                raise OSError(f"the spool file {self.path} ends before its recorded ranges")
            offset += len(chunk)
            size -= len(chunk)
            yield chunk

    def close(self) -> None:
        self._file.close()


@dataclass(frozen=True, slots=True)
class Spooled:
    """The sealed bytes of one exactly measured interval: a range of the spool file."""

    spool: _SpoolFile
    offset: int
    decoded_bytes: int
    sealed_bytes: int
    digest: str


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
        self._spool_file = _SpoolFile(scratch / "payloads.spool")
        self._text = [table.column(index) for index, field in enumerate(table.schema)
                      if pa.types.is_string(field.type) or pa.types.is_large_string(field.type)]
        self._spools: dict[tuple[int, int], Spooled] = {}
        self._model: _Model | None = None

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
        encoded = self._encoder.encode(first_row, row_count)
        offset, size = self._spool_file.append(encoded.chunks)
        if size != encoded.sealed.size:
            raise OSError(f"the spool file {self._spool_file.path} took {size} of "
                          f"{encoded.sealed.size} bytes")
        return Spooled(self._spool_file, offset, encoded.decoded.size, size,
                       encoded.sealed.digest)

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
        """Forget the spooled ranges of intervals that did not become children."""
        for key in [key for key in self._spools if key not in keep]:
            del self._spools[key]

    def close(self) -> None:
        """Close the spool file (its scratch directory deletes it); taken spools are unreadable."""
        self._spools.clear()
        self._spool_file.close()


def read_spool(spooled: Spooled) -> Iterator[bytes]:
    """The spooled sealed bytes, in chunks (safe from any thread while the oracle is open)."""
    return spooled.spool.read(spooled.offset, spooled.sealed_bytes)
