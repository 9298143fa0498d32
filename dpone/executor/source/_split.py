"""Split one scope day that holds more rows than the memory budget into ordered buckets.

The day's rows are read from the spill three times, batch by batch. A sample (every k-th row)
gives splitter rows at its quantiles. Each row's bucket is the number of splitters that sort
before it or tie with it, found by sorting the splitters together with one batch of rows under
the parent's own sort options (the splitters first, so a tie counts them as before), so a
bucket is an interval of the parent's order whatever the splitters are: every row of bucket
``j`` sorts strictly before every row of bucket ``j + 1`` and equal rows share a bucket. Each
bucket then holds its rows in input order, ready for the same stable sort as any other group.
The splitters only decide the buckets' sizes (about the budget for a day without many equal
rows), never the parent's bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

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


def _bucket_ids(batch: pa.RecordBatch, splitters: pa.Table, options: pc.SortOptions) -> pa.Array:
    """For each row of ``batch``, how many splitters sort before it or tie with it."""
    count = splitters.num_rows
    combined = pa.concat_tables([splitters, pa.Table.from_batches([batch])]).combine_chunks()
    order = pc.sort_indices(combined, options=options)
    is_splitter = pc.less(order, count)
    seen = pc.cumulative_sum(is_splitter.cast(pa.int32()))
    rows = pc.invert(is_splitter)
    return pc.scatter(seen.filter(rows), pc.subtract(order.filter(rows), count))


def buckets(read: Batches, schema: pa.Schema, rows: int, budget_rows: int,
            options: pc.SortOptions) -> Iterator[pa.Table]:
    """The rows ``read()`` yields (``rows`` of them), in buckets of about ``budget_rows`` rows,
    buckets in the order of ``options``, rows in each bucket in input order."""
    count = max(2, -(-rows // max(budget_rows, 1)))
    splitters = _splitters(read, schema, rows, count, options)
    ids = [_bucket_ids(batch, splitters, options) for batch in read()]
    for bucket in range(count):
        parts = [batch.filter(pc.equal(batch_ids, bucket))
                 for batch, batch_ids in zip(read(), ids, strict=True)]
        yield pa.Table.from_batches(parts, schema=schema)
