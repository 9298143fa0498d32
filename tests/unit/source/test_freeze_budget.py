"""A boundary bigger than the freeze's memory budget: spilled, sorted group by group, same bytes.

The parent's bytes are part of every identity downstream (parent digest, parent plan digest), so
the budget, the reader's batch sizes and the spill's batch sizes must never change them: the
rows of a boundary always freeze to the stable sort of the rows in the parent's order.
"""

from __future__ import annotations

import datetime as dt
import math
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dpone.executor.source import _materialize, _parent_writer, _spill, _split, freeze_source
from dpone.executor.source._arrow import parent_schema
from dpone.executor.source._materialize import ParentBuilder, sort_order
from dpone.executor.source._parent_writer import ParentWriter, scope_index
from support.common import EXAMPLES
from support.source import MemoryArtifactStore, example_plan

AUGUST = (dt.date(2026, 8, 1), dt.date(2026, 9, 1))
MAPPING = example_plan().mapping
SCOPE = "business_date"
SCHEMA = parent_schema(MAPPING, {"dpone.test": "budget"})
ROWS_SCHEMA = pa.schema([pa.field(f.name, f.type) for f in SCHEMA])
UTC = dt.UTC


def _freeze(budget: int | None) -> tuple[bytes, bytes]:
    store = MemoryArtifactStore()
    extra = {} if budget is None else {"memory_budget": budget}
    parent = freeze_source(example_plan(), registry_root=EXAMPLES, interval_start=AUGUST[0],
                           interval_end=AUGUST[1], artifacts=store, **extra)
    return store.get_bytes(parent.artifact.key), parent.canonical_bytes()


def test_a_boundary_over_the_budget_freezes_to_the_same_parent_in_bounded_groups() -> None:
    """The example's August (3,000+ rows, days of 3 to 240 rows) with a budget of a few dozen
    rows: spilled, sorted in groups no bigger than about the budget, the busiest days split
    into buckets, and the parent's bytes and document equal the in-memory freeze's."""
    in_memory = _freeze(None)
    sorted_sizes: list[int] = []
    bucketed_days: list[int] = []
    sort = ParentBuilder._sorted
    buckets = _split.buckets

    def spy_sort(self: ParentBuilder, rows: pa.Table) -> Any:
        sorted_sizes.append(rows.num_rows)
        return sort(self, rows)

    def spy_buckets(*args: object, **kwargs: object) -> object:
        bucketed_days.append(1)
        return buckets(*args, **kwargs)  # type: ignore[arg-type]

    budget = 4_000  # bytes of Arrow data: about 50 example rows
    with mock.patch.object(ParentBuilder, "_sorted", spy_sort), \
            mock.patch.object(_split, "buckets", spy_buckets):
        spilled = _freeze(budget)
    assert spilled == in_memory
    rows = sum(sorted_sizes)
    assert rows > 3_000
    assert len(sorted_sizes) > 30  # every day or bucket sorted on its own
    assert bucketed_days  # the days of 110 and 240 rows were split
    assert max(sorted_sizes) <= 120  # about twice the budget's rows, never the boundary


def test_a_record_longer_than_a_read_block_is_read_whole(tmp_path: Path) -> None:
    """The CSV reader reads small blocks; a longer record restarts the read with larger ones at
    that record, and every row comes through once."""
    header = "business_date,sensor_id,site,reading,sample_count,note,measured_at,is_valid\n"
    line = '2026-08-0{d},"S-{i:03d}","Kazan",1.5,{i},"{note}",2026-08-0{d}T00:00:{s:02d}Z,true\n'
    long_note = "строка\n" * 150_000  # 1.6 MB in one quoted field, over several blocks
    body = "".join(line.format(d=1 + i % 3, i=i, s=i % 60, note="ok") for i in range(20_000))
    body += line.format(d=2, i=20_000, s=1, note=long_note)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "measurements.csv").write_text(header + body, encoding="utf-8")
    store = MemoryArtifactStore()
    parent = freeze_source(example_plan(), registry_root=tmp_path, interval_start=AUGUST[0],
                           interval_end=AUGUST[1], artifacts=store)
    assert parent.row_count == 20_001
    from dpone.executor.source import open_parent  # noqa: PLC0415

    notes = open_parent(store.get_bytes(parent.artifact.key)).read_all().column("note")
    assert pc.sum(pc.equal(notes, long_note)).as_py() == 1


# -- property: no budget, batch size or chunking changes the parent's bytes --------------------

_DAYS = [dt.date(2026, 8, 1), dt.date(2026, 8, 2), dt.date(2026, 8, 3)]
_INSTANTS = [dt.datetime(2026, 8, 1, 0, 0, s, tzinfo=UTC) for s in (0, 1, 2)]
_row = st.tuples(
    st.sampled_from(_DAYS),
    st.sampled_from(["S-1", "S-2", "ä", ""]),
    st.sampled_from([None, "Kazan", "Москва", ""]),
    st.sampled_from([None, 0.0, 0.0, math.nan, 1.5, -2.0, math.inf]),
    st.integers(-2, 2),
    st.sampled_from([None, "", "ok", "замена"]),
    st.sampled_from(_INSTANTS),
    st.booleans(),
)


@st.composite
def _rows(draw: st.DrawFn) -> list[tuple[object, ...]]:
    """Rows drawn from a small pool of variants of one row (each differs from it in one
    column), so that rows tie on every prefix of the order and on every column; a tied 0.0 or
    NaN may be written with its sign bit set (other bytes that sort equal), so only a stable
    sort in input order gives the reference bytes."""
    base = draw(_row)
    variants = draw(st.lists(st.tuples(st.integers(0, len(base) - 1), _row), max_size=6))
    pool = [base, *((*base[:k], other[k], *base[k + 1:]) for k, other in variants),
            *draw(st.lists(_row, max_size=2))]
    picks = draw(st.lists(st.tuples(st.integers(0, len(pool) - 1), st.booleans()),
                          min_size=2, max_size=160))
    rows = []
    for index, negative in picks:
        row = list(pool[index])
        if negative and isinstance(row[3], float) and (row[3] == 0.0 or math.isnan(row[3])):
            row[3] = math.copysign(row[3], -1.0)
        rows.append(tuple(row))
    return rows


def _table(rows: list[tuple[object, ...]]) -> pa.Table:
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in ROWS_SCHEMA]
    return pa.Table.from_arrays([pa.array(list(values), type=field.type)
                                 for values, field in zip(columns, ROWS_SCHEMA, strict=True)],
                                schema=ROWS_SCHEMA)


def _reference(table: pa.Table, path: Path) -> bytes:
    """The whole table stably sorted in the parent's order at once, written as one piece."""
    _keys, order = sort_order(MAPPING, SCOPE)
    ordered = table.take(pc.sort_indices(
        table, options=pc.SortOptions([(name, "ascending", "at_end") for name in order])))
    days = _spill.day_runs(ordered.column(SCOPE).combine_chunks())
    index = scope_index([(dt.date(1970, 1, 1) + dt.timedelta(days=d), n) for d, n in days])
    with ParentWriter(path, SCHEMA, [c.type for c in MAPPING.columns]) as writer:
        writer.add(ordered)
        writer.finish(index, SCOPE)
    return path.read_bytes()


def _built(table: pa.Table, cuts: list[int], budget: int, path: Path) -> bytes:
    with ParentBuilder(MAPPING, SCOPE, SCHEMA, scratch=path.parent, memory_budget=budget) as b:
        start = 0
        for cut in [*sorted(cuts), table.num_rows]:
            for batch in table.slice(start, max(cut - start, 0)).to_batches():
                b.add(batch)
            start = max(start, cut)
        written = b.write(path)
    assert written.row_count == table.num_rows
    return path.read_bytes()


_ZERO = (_DAYS[0], "S-1", None, 0.0, 1, None, _INSTANTS[0], True)
_NEGATIVE_ZERO = (*_ZERO[:3], -0.0, *_ZERO[4:])
_NEXT_DAY = (_DAYS[1], *_ZERO[1:])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@example(rows=[_ZERO, _NEGATIVE_ZERO, _ZERO, _NEGATIVE_ZERO, _NEXT_DAY] * 3,
         cuts=[1, 2, 3, 5, 7], budget_share=0.3, parent_batch=4, spill_batch=3)
@example(rows=[_ZERO, _NEGATIVE_ZERO, _ZERO, _NEGATIVE_ZERO, _NEXT_DAY] * 3,
         cuts=[1, 2, 3, 5, 7], budget_share=0.9, parent_batch=4, spill_batch=3)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=_rows(), cuts=st.lists(st.integers(0, 160), max_size=6),
       budget_share=st.floats(0.02, 1.5), parent_batch=st.integers(1, 40),
       spill_batch=st.integers(1, 9))
def test_no_budget_or_chunking_changes_the_parent_bytes(
        rows: list[tuple[object, ...]], cuts: list[int], budget_share: float, parent_batch: int,
        spill_batch: int) -> None:
    table = _table(rows)
    budget = max(1, int(table.nbytes * budget_share))  # mostly spilled, in chunks of any size
    with tempfile.TemporaryDirectory() as scratch, \
            mock.patch.object(_parent_writer, "PARENT_BATCH_ROWS", parent_batch), \
            mock.patch.object(_spill, "SPILL_BATCH_ROWS", spill_batch):
        root = Path(scratch)
        (root / "a").mkdir()
        (root / "b").mkdir()
        (root / "c").mkdir()
        expected = _reference(table, root / "a" / "parent.arrow")
        assert _built(table, cuts, budget, root / "b" / "parent.arrow") == expected
        assert _built(table, [], 1 << 30, root / "c" / "parent.arrow") == expected


def test_the_default_budget_is_bounded() -> None:
    assert 1 << 20 <= _materialize.MEMORY_BUDGET <= 64 << 20


@settings(max_examples=300, deadline=None)
@given(rows=_rows(), pick=st.integers(0, 1_000))
def test_a_row_sorts_before_a_splitter_exactly_when_the_sort_puts_it_first(
        rows: list[tuple[object, ...]], pick: int) -> None:
    """The splitters' row comparison agrees with ``pc.sort_indices`` in the parent's order
    (nulls last, NaN after numbers, -0.0 equal to 0.0, a tie is not "before")."""
    table = _table(rows)
    splitter = table.slice(pick % table.num_rows, 1)
    _keys, order = sort_order(MAPPING, SCOPE)
    options = pc.SortOptions([(name, "ascending", "at_end") for name in order])
    ranked: list[int] = pc.sort_indices(pa.concat_tables([splitter, table]),
                                        options=options).to_pylist()
    first = set(ranked[:ranked.index(0)])
    expected = [index + 1 in first for index in range(table.num_rows)]
    batch = table.combine_chunks().to_batches()[0]
    assert _split._before(batch, splitter, order).to_pylist() == expected
