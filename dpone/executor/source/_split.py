"""Split one scope day that holds more rows than the memory budget into ordered buckets.

The day's rows are read from the spill batch by batch: once to sample every k-th row, whose
quantiles become the splitter rows; once to give each row its bucket, the number of splitters
that sort before it or tie with it (compared column by column in the parent's order, nulls
last, NaN after every number, ``-0.0`` equal to ``0.0``: the order of ``pc.sort_indices``);
then once per bucket to collect its rows. Whatever the splitters are, a bucket is an interval of
the parent's order: every row of bucket ``j`` sorts strictly before every row of bucket
``j + 1`` and equal rows share a bucket. Each bucket holds its rows in input order, ready for the
same stable sort as any other group. The splitters only decide the buckets' sizes (about the
budget for a day without many equal rows), never the parent's bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

SAMPLES_PER_BUCKET = 64

Batches = Callable[[], Iterator[pa.RecordBatch]]


def _splitters(read: Batches, schema: pa.Schema, rows: int, buckets: int,
               options: pc.SortOptions) -> pa.Table:
    stride = max(1, rows // (buckets * SAMPLES_PER_BUCKET))
    picked = [batch.take(pa.array(range(0, batch.num_rows, stride), pa.int64()))
              for batch in read()]
    sample = pa.Table.from_batches(picked, schema=schema).combine_chunks()
    order = pc.sort_indices(sample, options=options)
    positions = [len(order) * j // buckets for j in range(1, buckets)]
    return sample.take(order.take(pa.array(positions, pa.int64())))


def _before(batch: pa.RecordBatch, splitter: pa.Table, order: Sequence[str]) -> pa.Array:
    """Which rows of ``batch`` sort strictly before the one-row ``splitter`` (nulls last, NaN
    after every number, ``-0.0`` equal to ``0.0``: the order of ``pc.sort_indices``).

    Compared column by column; only rows tied on every earlier column look at the next one.
    """
    before = pa.array([False] * batch.num_rows, pa.bool_())
    tied: pa.Array | None = None
    for name in order:
        values = batch.column(name)
        value = splitter.column(name)[0]
        if not value.is_valid:
            less, equal = pc.is_valid(values), pc.is_null(values)
        elif isinstance(value.as_py(), float) and math.isnan(value.as_py()):
            nan = pc.fill_null(pc.is_nan(values), False)
            less, equal = pc.and_(pc.is_valid(values), pc.invert(nan)), nan
        else:
            less = pc.fill_null(pc.less(values, value), False)
            equal = pc.fill_null(pc.equal(values, value), False)
        before = pc.or_(before, less if tied is None else pc.and_(tied, less))
        tied = equal if tied is None else pc.and_(tied, equal)
        if not pc.any(tied).as_py():
            break
    return before


def _bucket_ids(batch: pa.RecordBatch, splitters: pa.Table, order: Sequence[str]) -> pa.Array:
    """For each row of ``batch``, how many splitters sort before it or tie with it."""
    ids = pa.array([0] * batch.num_rows, pa.int32())
    for index in range(splitters.num_rows):
        not_before = pc.invert(_before(batch, splitters.slice(index, 1), order))
        ids = pc.add(ids, not_before.cast(pa.int32()))
    return ids


def buckets(read: Batches, schema: pa.Schema, rows: int, budget_rows: int,
            options: pc.SortOptions, order: Sequence[str]) -> Iterator[pa.Table]:
    """The rows ``read()`` yields (``rows`` of them), in buckets of about ``budget_rows`` rows,
    buckets in the order of ``options``, rows in each bucket in input order."""
    count = max(2, -(-rows // max(budget_rows, 1)))
    splitters = _splitters(read, schema, rows, count, options)
    narrow = pa.int16() if count < 1 << 15 else pa.int32()
    ids = [_bucket_ids(batch, splitters, order).cast(narrow) for batch in read()]
    for bucket in range(count):
        parts = [batch.filter(pc.equal(batch_ids, bucket))
                 for batch, batch_ids in zip(read(), ids, strict=True)]
        yield pa.Table.from_batches(parts, schema=schema)
