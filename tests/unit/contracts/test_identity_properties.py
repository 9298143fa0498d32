"""Property tests: the identity encoding H is injective, prefix-free and order-independent.

The central property is a *left inverse*: a reference decoder written here, independently of
the implementation, parses every generated encoding back to the value's canonical form and
consumes every byte. ``decode(encode(x)) == canon(x)`` for all x implies
``encode(a) == encode(b) -> canon(a) == canon(b)``, i.e. the encoding is injective on the
canonical domain. The remaining tests state the individual guarantees the module docstring
and the spec ("Canonical identity and conflict policy") make, so a regression names itself.

Canonical equality is type-aware: ``True``, ``1``, ``1.0``, ``"1"`` and ``b"1"`` are
pairwise distinct; a list and a tuple with equal items are the same canonical value; dict
equality ignores insertion order; floats compare bit-for-bit (so ``0.0`` and ``-0.0`` are
distinct canonical values, as the encoding renders ``float.hex``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import re
import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dpone.contracts.identity import ENCODING_VERSION, DigestValue, encode, identity

PROPERTY = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

UTC = dt.UTC

# --------------------------------------------------------------------------------------
# Type-aware canonical form (the test's model of "the same canonical value")
# --------------------------------------------------------------------------------------


def canon(value: Any) -> tuple[Any, ...]:
    """A hashable, type-tagged model of a canonical value.

    Bool is checked before int and datetime before date, mirroring Python's subclassing.
    """
    if value is None:
        return ("N",)
    if isinstance(value, bool):
        return ("B", value)
    if isinstance(value, int):
        return ("I", value)
    if isinstance(value, float):
        return ("F", value.hex())
    if isinstance(value, str):
        return ("S", value)
    if isinstance(value, bytes):
        return ("Y", value)
    if isinstance(value, DigestValue):
        return ("D", value.raw)
    if isinstance(value, dt.datetime):
        assert value.utcoffset() == dt.timedelta(0)
        return ("Z", (*value.timetuple()[:6], value.microsecond))
    if isinstance(value, dt.date):
        return ("T", (value.year, value.month, value.day))
    if isinstance(value, list | tuple):
        return ("L", tuple(canon(item) for item in value))
    if isinstance(value, dict):
        return ("M", tuple(sorted((key, canon(item)) for key, item in value.items())))
    raise AssertionError(f"strategy produced a non-canonical value: {value!r}")


def canonical_equal(a: Any, b: Any) -> bool:
    return canon(a) == canon(b)


# --------------------------------------------------------------------------------------
# Reference decoder (the left inverse of encode)
# --------------------------------------------------------------------------------------

_HEADER = struct.Struct(">Q")
_TIMESTAMP = re.compile(r"(\d{1,4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})Z")


def _read_frame(buf: bytes, pos: int) -> tuple[bytes, bytes, int]:
    assert pos + 9 <= len(buf), "truncated frame header"
    tag = buf[pos : pos + 1]
    (length,) = _HEADER.unpack_from(buf, pos + 1)
    start = pos + 9
    assert start + length <= len(buf), "frame length runs past the buffer"
    return tag, buf[start : start + length], start + length


def _decode_items(payload: bytes, per_item: int) -> tuple[list[tuple[Any, ...]], int]:
    assert len(payload) >= 8, "container without a count"
    (count,) = _HEADER.unpack_from(payload, 0)
    pos, out = 8, []
    for _ in range(count * per_item):
        item, pos = decode_at(payload, pos)
        out.append(item)
    assert pos == len(payload), "container payload has trailing bytes"
    return out, count


def decode_at(buf: bytes, pos: int) -> tuple[tuple[Any, ...], int]:
    """Decode one frame at ``pos`` into its canonical form; return it and the next offset."""
    tag, payload, end = _read_frame(buf, pos)
    if tag == b"N":
        assert payload == b""
        return ("N",), end
    if tag == b"B":
        assert payload in (b"\x00", b"\x01")
        return ("B", payload == b"\x01"), end
    if tag == b"I":
        text = payload.decode("ascii")
        number = -int(text[1:], 16) if text.startswith("-") else int(text, 16)
        canonical = ("-" if number < 0 else "") + format(abs(number), "x")
        assert canonical.encode("ascii") == payload, "non-canonical integer rendering"
        return ("I", number), end
    if tag == b"F":
        rendered = payload.decode("ascii")
        assert float.fromhex(rendered).hex() == rendered, "non-canonical float rendering"
        return ("F", rendered), end
    if tag == b"S":
        return ("S", payload.decode("utf-8")), end
    if tag == b"Y":
        return ("Y", payload), end
    if tag == b"D":
        assert len(payload) == 32, "a digest frame carries exactly 32 raw bytes"
        return ("D", payload), end
    if tag == b"Z":
        match = _TIMESTAMP.fullmatch(payload.decode("ascii"))
        assert match, payload
        return ("Z", tuple(int(group) for group in match.groups())), end
    if tag == b"T":
        day = dt.date.fromisoformat(payload.decode("ascii"))
        assert day.isoformat().encode("ascii") == payload
        return ("T", (day.year, day.month, day.day)), end
    if tag == b"L":
        items, _ = _decode_items(payload, 1)
        return ("L", tuple(items)), end
    if tag == b"M":
        flat, count = _decode_items(payload, 2)
        keys = flat[0::2]
        assert all(key[0] == "S" for key in keys), "mapping keys must be strings"
        names = [key[1] for key in keys]
        assert names == sorted(set(names)), "mapping keys must be unique and sorted"
        assert len(names) == count
        return ("M", tuple(zip(names, flat[1::2], strict=True))), end
    raise AssertionError(f"unknown tag {tag!r}")


def decode(buf: bytes) -> tuple[Any, ...]:
    value, end = decode_at(buf, 0)
    assert end == len(buf), "encoding has trailing bytes"
    return value


# --------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------

texts = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12) | st.sampled_from(
    ["", "\x00", "a\x00b", "é", "e\u0301", "😀", "\uffff", "1", "true", "None"]
)
digests = st.binary(min_size=32, max_size=32).map(lambda raw: DigestValue("sha256:" + raw.hex()))
utc_datetimes = st.datetimes(timezones=st.just(UTC))
floats = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [0.0, -0.0, 1.0, -1.0, 5e-324, 1.7976931348623157e308, 0.1]
)
integers = (
    st.integers()
    | st.integers(min_value=-(10**1000), max_value=10**1000)
    | st.sampled_from([0, 1, -1, 2**63, -(2**63), 2**64, 10**4000])
)

leaves = st.one_of(
    st.none(),
    st.booleans(),
    integers,
    floats,
    texts,
    st.binary(max_size=12),
    digests,
    st.dates(),
    utc_datetimes,
)

values = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(texts, children, max_size=4),
    ),
    max_leaves=8,
)
small_values = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(texts, children, max_size=3),
    max_leaves=4,
)
records = st.dictionaries(texts, small_values, max_size=4)


def rebuild(value: Any, *, reverse: bool) -> Any:
    """An equal canonical value built differently: other container types, dict insertion
    order, tzinfo object and DigestValue instance."""
    if isinstance(value, dict):
        items = list(value.items())
        if reverse:
            items.reverse()
        return {key: rebuild(item, reverse=reverse) for key, item in items}
    if isinstance(value, list | tuple):
        items = [rebuild(item, reverse=reverse) for item in value]
        return tuple(items) if isinstance(value, list) else items
    if isinstance(value, DigestValue):
        return DigestValue("sha256:" + value.raw.hex())
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.timezone(dt.timedelta(0), "Z"))
    return value


@st.composite
def near_pairs(draw: st.DrawFn) -> tuple[Any, Any]:
    """A value and a small perturbation of it: most differ by one leaf, type or wrapping."""
    a = draw(values)
    op = draw(st.sampled_from(["leaf", "wrap", "retype", "extend"]))
    if op == "wrap":
        return a, draw(st.sampled_from([[a], {"": a}, {"x": a}]))
    if op == "extend" and isinstance(a, list | tuple):
        return a, [*a, draw(leaves)]
    if op == "extend" and isinstance(a, dict):
        key = draw(texts)
        return a, {**a, key: draw(leaves)}
    if op == "retype":
        if isinstance(a, bool):
            return a, draw(st.sampled_from([int(a), float(a), str(a), str(int(a))]))
        if isinstance(a, int):
            return a, draw(st.sampled_from([str(a), [a], bool(a)]))
        if isinstance(a, str):
            return a, draw(st.sampled_from([a.encode("utf-8"), [a], {a: None}]))
        if isinstance(a, bytes):
            return a, draw(st.sampled_from([list(a), a.hex()]))
        if isinstance(a, DigestValue):
            return a, draw(st.sampled_from([a.raw, "sha256:" + a.raw.hex()]))
        if isinstance(a, dt.datetime):
            return a, draw(st.sampled_from([a.date(), a.isoformat()]))
    return a, draw(values)


value_pairs = st.tuples(values, values) | near_pairs()


# --------------------------------------------------------------------------------------
# Injectivity
# --------------------------------------------------------------------------------------


@PROPERTY
@given(values, st.booleans())
def test_encoding_has_a_left_inverse_and_is_deterministic(value: Any, reverse: bool) -> None:
    """decode(encode(x)) == canon(x) for every value, so encode is injective on the domain;
    the same canonical value built differently (tuple/list, dict insertion order, tzinfo
    object, DigestValue instance) encodes to the same bytes."""
    encoded = encode(value)
    assert decode(encoded) == canon(value)
    assert encode(value) == encoded
    twin = rebuild(value, reverse=reverse)
    assert canonical_equal(value, twin)
    assert encode(twin) == encoded


def _assert_not_proper_prefix(a: Any, b: Any) -> None:
    ea, eb = encode(a), encode(b)
    if ea != eb:
        assert not eb.startswith(ea), (a, b)
        assert not ea.startswith(eb), (a, b)


@PROPERTY
@given(value_pairs)
def test_encodings_equal_iff_equal_and_never_proper_prefixes(pair: tuple[Any, Any]) -> None:
    """For independent and near-miss pairs: a != b <=> encode(a) != encode(b), and no
    encoding is a proper prefix of another (the frames are self-delimiting)."""
    a, b = pair
    assert (encode(a) == encode(b)) == canonical_equal(a, b)
    _assert_not_proper_prefix(a, b)


# --------------------------------------------------------------------------------------
# No concatenation ambiguity
# --------------------------------------------------------------------------------------


def _split(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted({c for c in cuts if c <= len(text)}), len(text)]
    return [text[lo:hi] for lo, hi in itertools.pairwise(bounds)]


@PROPERTY
@given(texts, st.lists(st.integers(0, 12)), st.lists(st.integers(0, 12)))
def test_no_split_merge_ambiguity_for_string_lists(
    text: str, cuts_a: list[int], cuts_b: list[int]
) -> None:
    parts_a, parts_b = _split(text, cuts_a), _split(text, cuts_b)
    assert "".join(parts_a) == "".join(parts_b) == text
    assert (encode(parts_a) == encode(parts_b)) == (parts_a == parts_b)
    as_bytes_a = [part.encode("utf-8") for part in parts_a]
    as_bytes_b = [part.encode("utf-8") for part in parts_b]
    assert (encode(as_bytes_a) == encode(as_bytes_b)) == (parts_a == parts_b)


@PROPERTY
@given(texts, texts, st.binary(max_size=12), st.binary(max_size=12))
def test_adjacent_fields_do_not_merge(a: str, b: str, x: bytes, y: bytes) -> None:
    assert encode([a, b]) != encode([a + b])
    assert encode([x, y]) != encode([x + y])
    if b:
        assert encode({"x": a + b, "y": ""}) != encode({"x": a, "y": b})
        assert encode({a + b: None}) != encode({a: b})
    if y:
        assert encode({"x": x + y, "y": b""}) != encode({"x": x, "y": y})


def test_record_split_examples_from_the_spec() -> None:
    assert encode({"x": "ab", "y": ""}) != encode({"x": "a", "y": "b"})
    assert encode(["a", "b"]) != encode(["ab"])
    assert encode(["ab", ""]) != encode(["a", "b"])
    assert encode(["", "ab"]) != encode(["ab", ""])
    # a key/value boundary cannot move between key and value either
    assert encode({"ab": "c"}) != encode({"a": "bc"})
    assert encode({"a": ["b"]}) != encode({"a": "b"})
    assert encode([["a"], "b"]) != encode([["a", "b"]])


# --------------------------------------------------------------------------------------
# No type confusion
# --------------------------------------------------------------------------------------

LOOKALIKES_ONE: list[Any] = [
    1,
    "1",
    True,
    1.0,
    b"1",
    b"\x01",
    [1],
    (True,),
    {"1": None},
    {"1": 1},
    dt.date(1, 1, 1),
    DigestValue("sha256:" + "01" * 32),
    "sha256:" + "01" * 32,
    bytes.fromhex("01" * 32),
]
LOOKALIKES_ZERO: list[Any] = [
    None,
    0,
    False,
    0.0,
    -0.0,
    "",
    "0",
    "None",
    "\x00",
    b"",
    b"\x00",
    [],
    {},
    [None],
    {"": None},
]


@pytest.mark.parametrize("family", [LOOKALIKES_ONE, LOOKALIKES_ZERO], ids=["one", "zero"])
def test_lookalike_values_all_encode_differently(family: list[Any]) -> None:
    encodings = [encode(value) for value in family]
    assert len(set(encodings)) == len(family)
    for a in encodings:
        for b in encodings:
            assert a == b or not b.startswith(a)


@PROPERTY
@given(st.integers())
def test_int_bool_float_str_never_collide(number: int) -> None:
    as_float = float(number) if abs(number) < 2**1000 else str(number) + ".0"
    forms = [number, str(number), as_float, str(number).encode("ascii"), [number],
             {str(number): None}]
    encodings = {encode(form) for form in forms}
    assert len(encodings) == len(forms)
    if number in (0, 1):
        assert encode(bool(number)) not in encodings


@PROPERTY
@given(digests)
def test_digest_is_never_its_display_string(digest: DigestValue) -> None:
    display = "sha256:" + digest.raw.hex()
    assert encode(digest) != encode(display)
    assert encode(digest) != encode(digest.raw)
    assert encode(digest) != encode(digest.raw.hex())
    assert encode({"d": digest}) != encode({"d": display})
    # The raw bytes, not the display string, are the payload.
    assert encode(digest).endswith(digest.raw)
    assert display.encode("ascii") not in encode(digest)


def test_digest_value_equality_and_hash_follow_raw_bytes() -> None:
    lower = DigestValue("sha256:" + "ab" * 32)
    assert lower == DigestValue("sha256:" + "ab" * 32)
    assert hash(lower) == hash(DigestValue("sha256:" + "ab" * 32))
    assert lower != DigestValue("sha256:" + "ac" * 32)
    assert lower != "sha256:" + "ab" * 32
    assert repr(lower) == "DigestValue('sha256:" + "ab" * 32 + "')"


@pytest.mark.parametrize(
    "rendered",
    ["", "sha256:", "sha256:" + "0" * 63, "sha256:" + "0" * 65, "md5:" + "0" * 64,
     "SHA256:" + "0" * 64, "sha256:" + "g" * 64, "0" * 71],
)
def test_digest_value_rejects_non_digests(rendered: str) -> None:
    with pytest.raises(ValueError):
        DigestValue(rendered)


def test_negative_zero_is_a_distinct_canonical_float() -> None:
    """``float.hex`` keeps the sign bit: -0.0 and 0.0 are distinct identities (bitwise),
    although ``0.0 == -0.0`` in Python. Pinned so a normalization change is deliberate."""
    assert encode(0.0) != encode(-0.0)
    assert encode(0.0) == encode(float("0"))


# --------------------------------------------------------------------------------------
# Key-order independence, sequence order, and domain separation
# --------------------------------------------------------------------------------------


@PROPERTY
@given(st.data(), texts, texts, records)
def test_records_key_order_free_and_domain_separated(
    data: st.DataObject, domain_a: str, domain_b: str, record: dict[str, Any]
) -> None:
    # key-order independence, also nested
    shuffled = dict(data.draw(st.permutations(list(record.items())), label="order"))
    assert encode(shuffled) == encode(record)
    assert encode({"o": record, "l": [record]}) == encode({"l": [shuffled], "o": shuffled})
    assert identity(domain_a, record) == identity(domain_a, shuffled)
    # fields separation: adding, dropping or renaming one field changes the identity
    key = data.draw(texts, label="key")
    other = {k: v for k, v in record.items() if k != key} if key in record else {**record, key: 0}
    assert identity(domain_a, other) != identity(domain_a, record)
    # domain separation: the same fields under two domain tags never collide
    assert (identity(domain_a, record) == identity(domain_b, record)) == (domain_a == domain_b)
    # H is SHA-256 over version || domain || fields, three prefix-free frames, so text can
    # never move between the domain tag and the field record
    body = encode(ENCODING_VERSION) + encode(domain_a) + encode(record)
    digest = identity(domain_a, record)
    assert digest == "sha256:" + hashlib.sha256(body).hexdigest()
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    version, pos = decode_at(body, 0)
    tag, pos = decode_at(body, pos)
    fields, pos = decode_at(body, pos)
    assert pos == len(body)
    assert (version, tag, fields) == (("Y", ENCODING_VERSION), ("S", domain_a), canon(record))


@PROPERTY
@given(st.lists(small_values, max_size=4), st.lists(small_values, max_size=4), small_values)
def test_sequences_tuple_list_order_and_streams(xs: list[Any], ys: list[Any], extra: Any) -> None:
    # list and tuple are the same canonical value
    assert encode(xs) == encode(tuple(xs))
    # order is significant
    assert (encode(xs) == encode(xs[::-1])) == (canon(xs) == canon(xs[::-1]))
    # a value and its own extension are never prefix-related
    _assert_not_proper_prefix(xs, [*xs, extra])
    _assert_not_proper_prefix({"k": xs}, {"k": xs, "l": extra})
    _assert_not_proper_prefix(extra, [extra])
    # prefix-freeness in use: a stream of frames splits back into exactly its values
    stream_x = b"".join(encode(x) for x in xs)
    stream_y = b"".join(encode(y) for y in ys)
    assert (stream_x == stream_y) == (canon(xs) == canon(ys))
    pos, decoded = 0, []
    while pos < len(stream_x):
        item, pos = decode_at(stream_x, pos)
        decoded.append(item)
    assert tuple(decoded) == canon(xs)[1]


@PROPERTY
@given(texts, texts, st.binary(max_size=8))
def test_scalar_extensions_are_not_prefix_related(s: str, t: str, raw: bytes) -> None:
    assume(t)
    _assert_not_proper_prefix(s, s + t)
    _assert_not_proper_prefix(raw, raw + t.encode("utf-8"))
    _assert_not_proper_prefix(s, [s])
    _assert_not_proper_prefix({s: None}, {s: None, s + t: None})


# --------------------------------------------------------------------------------------
# Rejected inputs
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        float("inf"),
        float("-inf"),
        [1, float("nan")],
        {"a": {"b": float("inf")}},
        dt.datetime(2026, 1, 1),  # naive
        dt.datetime(2026, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=2))),
        dt.datetime(2026, 1, 1, tzinfo=dt.timezone(dt.timedelta(minutes=-1))),
        [dt.datetime(2026, 1, 1)],
    ],
    ids=["nan", "inf", "-inf", "nested-nan", "nested-inf", "naive", "plus2h", "minus1m",
         "nested-naive"],
)
def test_non_canonical_values_raise_value_error(value: Any) -> None:
    with pytest.raises(ValueError):
        encode(value)
    with pytest.raises(ValueError):
        identity("dom", {"v": value})


@pytest.mark.parametrize(
    "value",
    [{1, 2}, frozenset(), object(), complex(1, 2), [object()], {"a": {1}}, {1: "a"},
     {("a",): 1}, Exception("x")],
    ids=["set", "frozenset", "object", "complex", "nested-object", "nested-set", "int-key",
         "tuple-key", "exception"],
)
def test_unsupported_types_raise_type_error(value: Any) -> None:
    with pytest.raises(TypeError):
        encode(value)


def test_utc_aware_datetimes_with_equivalent_tzinfo_encode_identically() -> None:
    instant = dt.datetime(2026, 8, 30, 12, 0, 0, 123456, tzinfo=UTC)
    same = instant.replace(tzinfo=dt.timezone(dt.timedelta(0), "UTC+0"))
    assert encode(instant) == encode(same)
    assert encode(instant) != encode(instant.replace(microsecond=123457))
    assert encode(instant) != encode(instant.date())


# --------------------------------------------------------------------------------------
# Regressions: huge ints, byte buffers, and loose digest strings
# --------------------------------------------------------------------------------------


def test_huge_int_beyond_str_digit_limit_is_encodable() -> None:
    encode(10**5000)


@pytest.mark.parametrize("blob", [bytearray(b"1"), memoryview(b"1")], ids=["bytearray", "memview"])
def test_byte_buffers_are_not_confused_with_int_lists(blob: Any) -> None:
    try:
        encoded = encode(blob)
    except TypeError:
        return  # rejecting byte buffers outright is an acceptable fix
    assert encoded != encode([49])
    assert encoded == encode(b"1")


def test_digest_value_rejects_whitespace_padded_hex() -> None:
    with pytest.raises(ValueError):
        DigestValue("sha256:" + "00" * 31 + "  ")
