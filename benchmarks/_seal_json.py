"""Same-run limits of NDJSON and JSON-array sealing for ``benchmarks/seal.py``.

The serial limit of a JSON format is ``1 / (sum of per-byte costs)`` of the stages every sealer
must run over the payload bytes once, each measured alone on the same parent table, single
thread, with no dpone code:

* encode: the fastest path to the SAME bytes dpone writes, among
  - ``bare Arrow``: each column rendered with Arrow casts and a few kernels written for this
    dataset's types (no checks, no escaping: the dataset needs none, which the byte comparison
    proves), then one ``binary_join_element_wise`` per row;
  - ``orjson`` (when importable; not a dpone dependency): columns converted in Arrow first
    (dates and timestamps to strings), then ``orjson.dumps`` per row into one ``BytesIO``;
  a path whose bytes differ from dpone's is shown but not used for the limit;
* SHA-256 of the bytes (the payload digest);
* one durable write of the bytes to a file (write + one fsync).

``naive`` is ``json.dumps`` per row of ``to_pylist`` on a row subset, for scale.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

MB = 1_000_000
TEXT = pa.large_string()
_BLOCK = 65_536

try:  # a baseline only, never a dpone dependency
    import orjson
except ImportError:  # pragma: no cover - depends on the machine
    orjson = None


def _bare_text(batch: Any, fmt: str) -> Any:
    """One batch's row texts with plain Arrow kernels (no escaping; nulls as null)."""
    elements: list[Any] = []
    literal = "{"
    for field, column in zip(batch.schema, batch.columns, strict=True):
        quoted = True
        if pa.types.is_timestamp(field.type):  # the codec's precision: ms
            text = pc.cast(pc.cast(column, pa.timestamp("ms")), pa.string())
            text = pc.binary_replace_slice(pc.binary_replace_slice(text, 10, 11, "T"), 23, 23, "Z")
        elif pa.types.is_floating(field.type):
            text = pc.cast(column, pa.string())
            text = pc.if_else(pc.match_substring(text, "."), text,
                              pc.binary_join_element_wise(text, ".0", ""))
            quoted = False
        elif pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            text = column
        else:
            text = pc.cast(column, pa.string())
            quoted = pa.types.is_date(field.type)
        text = pc.cast(text, TEXT)
        if quoted:
            text = pc.binary_join_element_wise(pa.scalar('"', TEXT), text, pa.scalar('"', TEXT),
                                               pa.scalar("", TEXT))
        literal += ("," if literal != "{" else "") + json.dumps(field.name) + ":"
        elements += [pa.scalar(literal, TEXT), pc.fill_null(text, pa.scalar("null", TEXT))]
        literal = ""
    elements.append(pa.scalar("}\n" if fmt == "ndjson" else "},", TEXT))
    return pc.binary_join_element_wise(*elements, pa.scalar("", TEXT))


def bare_arrow(table: pa.Table, fmt: str) -> bytes:
    sink = io.BytesIO()
    sink.write(b"" if fmt == "ndjson" else b"[")
    for batch in table.to_batches(_BLOCK):
        texts = _bare_text(batch, fmt)
        _, offsets, data = texts.buffers()
        end = pa.Array.from_buffers(pa.int64(), len(texts) + 1, [None, offsets])[-1].as_py()
        sink.write(memoryview(data)[:end])
    if fmt == "json_array":
        if sink.tell() > 1:
            sink.seek(-1, io.SEEK_END)
            sink.truncate()
        sink.write(b"]")
    return sink.getvalue()


def _arrow_converted(table: pa.Table) -> pa.Table:
    columns = []
    for field, column in zip(table.schema, table.columns, strict=True):
        converted = column
        if pa.types.is_timestamp(field.type):  # the codec's precision: ms (%S carries .mmm)
            converted = pc.strftime(pc.cast(column, pa.timestamp("ms", tz="UTC")),
                                    format="%Y-%m-%dT%H:%M:%SZ")
        elif pa.types.is_date(field.type):
            converted = pc.cast(column, pa.string())
        columns.append(converted)
    return pa.table(columns, names=table.column_names)


def orjson_rows(table: pa.Table, fmt: str) -> bytes:
    assert orjson is not None
    sink = io.BytesIO()
    write, dumps = sink.write, orjson.dumps
    converted = _arrow_converted(table)
    separator = b"\n" if fmt == "ndjson" else b","
    write(b"" if fmt == "ndjson" else b"[")
    for batch in converted.to_batches(_BLOCK):
        for row in batch.to_pylist():
            write(dumps(row))
            write(separator)
    if fmt == "json_array":
        if sink.tell() > 1:
            sink.seek(-1, io.SEEK_END)
            sink.truncate()
        write(b"]")
    return sink.getvalue()


def naive_rows(table: pa.Table, fmt: str) -> bytes:
    """``to_pylist`` + ``json.dumps`` per row (dates and timestamps as ISO strings)."""
    parts = [json.dumps(row, ensure_ascii=False, separators=(",", ":"))
             for row in _arrow_converted(table).to_pylist()]
    if fmt == "ndjson":
        return "".join(part + "\n" for part in parts).encode("utf-8")
    return ("[" + ",".join(parts) + "]").encode("utf-8")


def durable_write(data: bytes, scratch: Path) -> None:
    path = scratch / "limit-write.bin"
    with path.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    path.unlink()


def json_limits(table: pa.Table, fmt: str, reference: bytes, naive_rows_count: int,
                scratch: Path, row_type: Callable[..., Any],
                timed: Callable[[Callable[[], Any]], tuple[Any, float]]
                ) -> tuple[list[Any], float, float]:
    """The limit rows for ``fmt`` on ``table``, the serial limit (encode + SHA-256 + write) and
    the encode + SHA-256 limit, in MB/s (0.0 when no bare path gave dpone's bytes).

    ``reference`` is dpone's payload of the whole table (what the paths must reproduce);
    ``row_type`` builds the benchmark's table rows; ``timed(action)`` runs and times a stage.
    """
    rows: list[Any] = []
    size = len(reference)
    encode_costs: list[float] = []  # seconds per byte of the paths that give the same bytes
    paths: list[tuple[str, Callable[[], bytes]]] = [
        ("bare Arrow kernels", lambda: bare_arrow(table, fmt))]
    if orjson is not None:
        paths.append(("Arrow conversion + orjson per row", lambda: orjson_rows(table, fmt)))
    for name, action in paths:
        out, seconds = timed(action)
        same = out == reference
        if same:
            encode_costs.append(seconds / size)
        rows.append(row_type(f"limit: {fmt} {name}", table.num_rows, len(out) / MB, seconds,
                             "same bytes as dpone" if same else "DIFFERENT bytes: not a limit"))
    if orjson is None:
        rows.append(row_type(f"limit: {fmt} orjson", 0, 0.0, 0.0,
                             "skipped: orjson is not importable"))
    _, sha_s = timed(lambda: hashlib.sha256(reference).digest())
    _, write_s = timed(lambda: durable_write(reference, scratch))
    rows.append(row_type(f"limit: SHA-256 alone ({fmt})", table.num_rows, size / MB, sha_s))
    rows.append(row_type(f"limit: one durable write ({fmt})", table.num_rows, size / MB,
                         write_s, "write + one fsync"))
    subset = table.slice(0, min(naive_rows_count, table.num_rows))
    out, naive_s = timed(lambda: naive_rows(subset, fmt))
    rows.append(row_type(f"naive: to_pylist + json.dumps per row ({fmt})", subset.num_rows,
                         len(out) / MB, naive_s))
    if not encode_costs:
        return rows, 0.0, 0.0
    encode_sha = min(encode_costs) + sha_s / size
    cost = encode_sha + write_s / size
    rows.append(row_type(f"limit: serial {fmt} encode + SHA-256", table.num_rows, size / MB,
                         size * encode_sha, "1 / sum of the fastest per-byte costs"))
    rows.append(row_type(f"limit: serial {fmt} encode + SHA-256 + write", table.num_rows,
                         size / MB, size * cost, "1 / sum of the fastest per-byte costs"))
    return rows, 1 / cost / MB, 1 / encode_sha / MB
