"""float64 text is exactly Python's repr, for every finite float64; NaN and infinity refused."""

from __future__ import annotations

import math
import random
import struct

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpone.codecs import PayloadEncodingError, encode_csv, encode_ndjson
from dpone.contracts.profile import CsvCodec, JsonCodec
from support.codec_reference import mapping_of

MAPPING = mapping_of(("x", "float64"))
NO_HEADER = CsvCodec(header=False, null="NULL")


def rendered(values: list[float | None]) -> list[str]:
    table = pa.table({"x": pa.array(values, pa.float64())})
    return b"".join(encode_csv(table, MAPPING, NO_HEADER)).decode("ascii").split("\n")[:-1]


def edge_values() -> list[float]:
    values = [0.0, -0.0, 1.0, -1.0, 0.1, 0.2 + 0.1, 1 / 3, 2.5, 100.0, 12345.678,
              5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e-300, 1.5e300,
              9007199254740993.0, 9999999999999998.0, 123456789012345680.0, 1e22, 1e23]
    for exponent in range(-325, 309):
        for mantissa in (1.0, 1.5, 9.999999999999999, 1.2345678901234567):
            with_exponent = float(f"{mantissa}e{exponent}")
            if math.isfinite(with_exponent):
                values += [with_exponent, -with_exponent]
    values += [2.0**k for k in range(-1074, 1024, 7)]
    values += [math.nextafter(1e16, 0), math.nextafter(1e16, math.inf), 1e15, 1e16, 1e-4,
               math.nextafter(1e-4, 0), 1e-5, 0.00001234, 0.0001234]
    return values


def test_edge_values_are_repr() -> None:
    values = edge_values()
    assert rendered(values) == [repr(v) for v in values]


def test_random_bit_patterns_are_repr() -> None:
    rng = random.Random(20261130)
    values = []
    while len(values) < 100_000:
        (value,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if math.isfinite(value):
            values.append(value)
    # Short decimals as data usually has them take the fast path; mix both kinds.
    values += [round(rng.uniform(-1e6, 1e6), rng.randrange(0, 7)) for _ in range(50_000)]
    assert rendered(values) == [repr(v) for v in values]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False) | st.none(), max_size=40))
def test_any_finite_float_is_repr(values: list[float | None]) -> None:
    assert rendered(values) == ["NULL" if v is None else repr(v) for v in values]


def test_json_numbers_are_repr_too() -> None:
    values = [0.1, -0.0, 1e16, 1e-7, 3.0]
    table = pa.table({"x": pa.array(values, pa.float64())})
    text = b"".join(encode_ndjson(table, MAPPING, JsonCodec())).decode()
    assert text == "".join(f'{{"x":{v!r}}}\n' for v in values)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_is_refused_with_its_row(bad: float) -> None:
    table = pa.table({"x": pa.array([1.0, None, 2.0, bad, 3.0], pa.float64())})
    batches = table.to_batches(max_chunksize=2)
    with pytest.raises(PayloadEncodingError, match="NaN and infinity") as caught:
        b"".join(encode_csv(batches, MAPPING, NO_HEADER))
    assert (caught.value.column, caught.value.row) == ("x", 3)
    with pytest.raises(PayloadEncodingError):
        b"".join(encode_ndjson(table, MAPPING, JsonCodec()))
