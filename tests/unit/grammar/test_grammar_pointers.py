"""RFC 6901 JSON pointers: parsing, unescaping, resolution and refusals."""

from __future__ import annotations

from typing import Any

import pytest

from dpone.contracts import DponeError
from dpone.grammar import MISSING, JsonPointer, parse_pointer

# The example document of RFC 6901 section 5.
RFC_DOCUMENT: dict[str, Any] = {
    "foo": ["bar", "baz"],
    "": 0,
    "a/b": 1,
    "c%d": 2,
    "e^f": 3,
    "g|h": 4,
    "i\\j": 5,
    'k"l': 6,
    " ": 7,
    "m~n": 8,
}


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("", RFC_DOCUMENT),
        ("/foo", ["bar", "baz"]),
        ("/foo/0", "bar"),
        ("/", 0),
        ("/a~1b", 1),
        ("/c%d", 2),
        ("/e^f", 3),
        ("/g|h", 4),
        ("/i\\j", 5),
        ('/k"l', 6),
        ("/ ", 7),
        ("/m~0n", 8),
    ],
)
def test_rfc_6901_examples(pointer: str, expected: Any) -> None:
    assert parse_pointer(pointer).resolve(RFC_DOCUMENT) == expected


@pytest.mark.parametrize(
    ("pointer", "tokens"),
    [
        ("", ()),
        ("/", ("",)),
        ("//", ("", "")),
        ("/job_id", ("job_id",)),
        ("/data/0/id", ("data", "0", "id")),
        ("/~01", ("~1",)),
        ("/~10", ("/0",)),
        ("/~0~1~1~0", ("~//~",)),
        ("/\u00e9t\u00e9", ("\u00e9t\u00e9",)),
    ],
)
def test_tokens_are_unescaped_in_order(pointer: str, tokens: tuple[str, ...]) -> None:
    parsed = parse_pointer(pointer)
    assert parsed == JsonPointer(source=pointer, tokens=tokens)
    assert str(parsed) == pointer


@pytest.mark.parametrize(
    ("pointer", "document"),
    [
        ("/missing", {"a": 1}),
        ("/a/b", {"a": 1}),
        ("/a/b", {"a": "text"}),
        ("/2", [0, 1]),
        ("/01", [0, 1]),
        ("/-", [0, 1]),
        ("/-1", [0, 1]),
        ("/+1", [0, 1]),
        ("/1.0", [0, 1]),
        ("/\u0661", [0, 1]),
        ("/a", None),
        ("/0", "abc"),
    ],
)
def test_absent_values_resolve_to_missing(pointer: str, document: Any) -> None:
    assert parse_pointer(pointer).resolve(document) is MISSING


def test_present_none_is_not_missing() -> None:
    assert parse_pointer("/a").resolve({"a": None}) is None
    assert parse_pointer("/1").resolve((None, "x")) == "x"
    assert repr(MISSING) == "MISSING"


@pytest.mark.parametrize(
    ("pointer", "column"),
    [
        ("a", 1),
        ("job_id", 1),
        ("#/a", 1),
        ("~0", 1),
        ("/a~", 3),
        ("/a~2", 3),
        ("/a/~x", 4),
        ("/a\nb", 3),
        ("/a\x7f", 3),
        ("/a\x85", 3),
        ("\x00", 1),
    ],
)
def test_malformed_pointers_are_refused_with_column(pointer: str, column: int) -> None:
    with pytest.raises(DponeError) as caught:
        parse_pointer(pointer)
    assert caught.value.code == "pointer.syntax"
    assert caught.value.location is not None
    assert caught.value.location.column == column


def test_a_pointer_is_parsed_once_and_a_refusal_every_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Response extraction reads a profile's few pointers on every response: the parse is kept,
    the refusal of a bad pointer is not (it raises again, with its column)."""
    from dpone.grammar import _pointer  # noqa: PLC0415 - the module whose parser is counted

    parses: list[str] = []
    parser = _pointer._parser()

    class Counting:
        def parse(self, text: str) -> Any:
            parses.append(text)
            return parser.parse(text)

    monkeypatch.setattr(_pointer, "_parser", Counting)
    _pointer.parse_pointer.cache_clear()
    first = _pointer.parse_pointer("/counts/accepted_rows")
    assert _pointer.parse_pointer("/counts/accepted_rows") is first
    assert parses == ["/counts/accepted_rows"]
    for _ in range(2):
        with pytest.raises(DponeError):
            _pointer.parse_pointer("/a~2")
    assert parses.count("/a~2") == 2
    _pointer.parse_pointer.cache_clear()
