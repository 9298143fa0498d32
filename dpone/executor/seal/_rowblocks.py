"""The decoded payload of any row interval, sliced out of row texts encoded once per block.

The planner measures many small, mostly consecutive intervals (every child, and the parts it
tries while splitting a day). Encoding each interval on its own pays the codec's per-call cost
every time; instead the parent is cut into aligned blocks of :data:`BLOCK_ROWS` rows, each
block's row texts are encoded once (:func:`dpone.codecs.row_texts`, kept for the last
:data:`KEPT_BLOCKS` blocks), and an interval's payload is its frame around a zero-copy byte
range of those texts: the same bytes as :func:`dpone.codecs.encode_rows` of the interval,
because every row's text depends on that row alone.

Blocks hold at most :data:`BLOCK_ROWS` rows and about :data:`BLOCK_ARROW_BYTES` of Arrow data
(fewer rows when rows are wide), so memory stays a few blocks' texts whatever the row width.

While the planner consumes one block, the next :data:`AHEAD_BLOCKS` are encoded ahead, each on
a background thread of its own (the codec's Arrow kernels release the GIL, so two blocks encode
on two cores while the planner compresses, hashes and spools): at most :data:`KEPT_BLOCKS` +
:data:`AHEAD_BLOCKS` blocks of texts are held at once, and every block is encoded once when the
planner goes forward. A block is a pure function of its rows, so where it was encoded never
changes a byte.

A block holding a value the codec refuses is not cached; intervals over it encode just their
own rows of it. An interval that itself holds such a value is encoded the direct way to raise
exactly the error :func:`~dpone.codecs.encode_rows` raises (the column, and the row counted
from the interval's first row).
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from dpone.codecs import PayloadEncodingError, encode_rows, row_frame, row_texts
from dpone.contracts.mapping import PayloadMapping
from dpone.contracts.profile import Codec, PayloadFormat

BLOCK_ROWS = 32_768
"""Rows encoded at once at most: enough to amortize the codec's per-call cost."""
BLOCK_ARROW_BYTES = 4 << 20
"""Arrow bytes per block at most (at least one row): bounds a block's text for wide rows."""
KEPT_BLOCKS = 2
"""Blocks kept: an interval spans at most two small blocks, and the planner goes forward."""
AHEAD_BLOCKS = 2
"""Blocks encoded ahead of the planner at once: one per core of a small machine, so encoding
is not the planner's bottleneck."""


@dataclass(frozen=True, slots=True)
class _Texts:
    """Row texts of consecutive rows: value ``i`` is ``data[offsets[i]:offsets[i + 1]]``."""

    offsets: memoryview
    data: memoryview

    @classmethod
    def of(cls, arrays: list[Any]) -> _Texts:
        texts = arrays[0] if len(arrays) == 1 else pa.concat_arrays(arrays) if arrays else None
        if texts is None or not len(texts):
            return cls(memoryview(b"\0" * 8).cast("q"), memoryview(b""))
        _, offsets, data = texts.buffers()
        start = texts.offset
        return cls(memoryview(offsets).cast("B").cast("q")[start:start + len(texts) + 1],
                   memoryview(data).cast("B"))

    def rows(self, first: int, end: int) -> memoryview:
        """The concatenated texts of rows ``first..end`` (exclusive), without a copy."""
        return self.data[self.offsets[first]:self.offsets[end]]


class _Ahead:
    """One block being encoded on its own thread; :meth:`result` waits for it."""

    __slots__ = ("_block", "_failed", "_thread", "index")

    def __init__(self, index: int, encode: Callable[[int], _Texts | None]) -> None:
        self.index = index
        self._block: _Texts | None = None
        self._failed = False
        self._thread = threading.Thread(target=self._run, args=(encode,),
                                        name="dpone-seal-blocks")
        self._thread.start()

    def _run(self, encode: Callable[[int], _Texts | None]) -> None:
        try:
            self._block = encode(self.index)
        except BaseException:  # encoded again where the block is needed, raising there
            self._failed = True

    def result(self) -> tuple[bool, _Texts | None]:
        """Whether the block was encoded (False: encoding it raised), and the block."""
        self._thread.join()
        return not self._failed, self._block


class RowBlocks:
    """Payload bytes of row intervals of ``table`` (see the module docstring)."""

    def __init__(self, table: pa.Table, mapping: PayloadMapping, payload: PayloadFormat,
                 codec: Codec, block_rows: int | None = None) -> None:
        if block_rows is None:
            # Buffer sizes, not ``nbytes``: that reads the offsets of every string column,
            # faulting a tenth of a memory-mapped parent into the resident set at once.
            row_bytes = table.get_total_buffer_size() // max(table.num_rows, 1)
            block_rows = min(BLOCK_ROWS, max(1, BLOCK_ARROW_BYTES // max(row_bytes, 1)))
        if block_rows < 1:
            raise ValueError("block_rows must be positive")
        self._table = table
        self._mapping = mapping
        self._payload = payload
        self._codec = codec
        self._block_rows = block_rows
        self._block_count = -(-table.num_rows // block_rows)
        self._kept: collections.OrderedDict[int, _Texts | None] = collections.OrderedDict()
        self._ahead: collections.deque[_Ahead] = collections.deque()

    def payload(self, first_row: int, row_count: int) -> Iterator[bytes | memoryview]:
        """The decoded payload of rows ``first_row..first_row + row_count``, in chunks."""
        try:
            yield from self._sliced(first_row, row_count)
        except PayloadEncodingError:
            # The interval holds a value the codec refuses (or the codec itself is refused):
            # encode it directly for the error that path raises, column and row included.
            for _ in encode_rows(self._rows(first_row, row_count), self._mapping, self._payload,
                                 self._codec):
                pass
            raise

    def _sliced(self, first_row: int, row_count: int) -> Iterator[bytes | memoryview]:
        frame = row_frame(self._mapping, self._payload, self._codec)
        if frame.head:
            yield frame.head
        skip = frame.lead if row_count else 0
        position, end = first_row, first_row + row_count
        while position < end:
            index = position // self._block_rows
            start = index * self._block_rows
            stop = min(end, start + self._block_rows)
            block = self._block(index)
            if block is not None:
                chunk = block.rows(position - start, stop - start)
            else:  # the block holds a refused value; these rows may not
                chunk = _Texts.of(list(self._texts(position, stop - position))).rows(
                    0, stop - position)
            if skip:
                chunk, skip = chunk[skip:], 0
            if len(chunk):
                yield chunk
            position = stop
        if frame.tail:
            yield frame.tail

    def _rows(self, first_row: int, row_count: int) -> pa.Table:
        return self._table.slice(first_row, row_count)

    def _texts(self, first_row: int, row_count: int) -> Iterator[Any]:
        return row_texts(self._rows(first_row, row_count), self._mapping, self._payload,
                         self._codec)

    def _block(self, index: int) -> _Texts | None:
        if index not in self._kept:
            self._collect(index)
        if index in self._kept:
            self._kept.move_to_end(index)
            block = self._kept[index]
        else:
            block = self._encoded(index)
            self._keep(index, block)
        self._schedule(index)
        return block

    def _collect(self, index: int) -> None:
        """Take the blocks encoded ahead up to ``index``, in order (the planner went forward)."""
        while self._ahead and self._ahead[0].index <= index:
            ahead = self._ahead.popleft()
            encoded, block = ahead.result()
            if encoded:  # else: encoded again if needed, raising on the planner's thread
                self._keep(ahead.index, block)

    def _schedule(self, index: int) -> None:
        """Start encoding the blocks after ``index`` that are neither kept nor under way."""
        under_way = {ahead.index for ahead in self._ahead}
        following = index + 1
        while len(self._ahead) < AHEAD_BLOCKS and following < self._block_count:
            if following not in self._kept and following not in under_way:
                if self._ahead and self._ahead[-1].index > following:
                    break  # the planner went back: keep the ahead blocks in order
                self._ahead.append(_Ahead(following, self._encoded))
            following += 1
            if following > index + AHEAD_BLOCKS:
                break

    def _encoded(self, index: int) -> _Texts | None:
        """The row texts of block ``index``, or None if it holds a value the codec refuses."""
        start = index * self._block_rows
        rows = min(self._block_rows, self._table.num_rows - start)
        try:
            return _Texts.of(list(self._texts(start, rows)))
        except PayloadEncodingError:
            return None

    def _keep(self, index: int, block: _Texts | None) -> None:
        self._kept[index] = block
        self._kept.move_to_end(index)
        while len(self._kept) > KEPT_BLOCKS:
            self._kept.popitem(last=False)
