"""The bounded YAML loader: strict UTF-8, unique keys, no aliases or tags, bounded size and depth."""

from __future__ import annotations

import pytest

from dpone.compiler import _yaml
from dpone.compiler._yaml import load_yaml_bytes
from dpone.contracts import DponeError


def _code(raw: bytes) -> DponeError:
    with pytest.raises(DponeError) as caught:
        load_yaml_bytes(raw, "doc.yaml")
    return caught.value


def test_plain_document_loads_with_positions() -> None:
    doc = load_yaml_bytes(b"a:\n  b: [1, x, null, true, 2.5]\n  c: 2026-08-01\n", "doc.yaml")
    assert doc.data == {"a": {"b": [1, "x", None, True, 2.5], "c": "2026-08-01"}}
    assert doc.locate(("a", "c")).line == 3
    assert doc.locate(("a", "b", 1)).column == 10
    assert doc.locate(("a", "missing")).line == 1


def test_byte_order_mark_is_accepted() -> None:
    assert load_yaml_bytes("\ufeffa: 1\n".encode(), "doc.yaml").data == {"a": 1}


def test_invalid_utf8_names_line_and_column() -> None:
    error = _code(b"a: 1\nb: caf\xc3\n")
    assert error.code == "yaml.invalid_utf8"
    assert (error.location.line, error.location.column) == (2, 7)
    assert error.exit_code == 2


def test_duplicate_key_names_both_lines() -> None:
    error = _code(b"a:\n  x: 1\n  y: 2\n  x: 3\n")
    assert error.code == "yaml.duplicate_key"
    assert error.location.line == 4 and error.location.path == "a.x"
    assert error.details == {"first_line": 2, "second_line": 4}


def test_alias_bomb_is_refused_before_expansion() -> None:
    bomb = b"a: &a [x, x, x, x, x, x, x, x, x]\n" + b"".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n".encode()
        for i in range(8))
    assert _code(bomb).code == "yaml.alias_forbidden"


@pytest.mark.parametrize(("raw", "code"), [
    (b"a: !!python/object:os.system x\n", "yaml.custom_tag"),
    (b"a: !!binary aGk=\n", "yaml.custom_tag"),
    (b"a: !custom 1\n", "yaml.custom_tag"),
    (b"<<: {a: 1}\n", "yaml.syntax"),
    (b"a: [1\n", "yaml.syntax"),
    (b"a: 1\n---\nb: 2\n", "yaml.multiple_documents"),
    (b"- 1\n- 2\n", "yaml.not_a_mapping"),
    (b"", "yaml.not_a_mapping"),
    (b"? [1, 2]\n: x\n", "yaml.syntax"),
])
def test_refusals(raw: bytes, code: str) -> None:
    assert _code(raw).code == code


def test_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_yaml, "MAX_BYTES", 64)
    assert _code(b"a: " + b"x" * 80 + b"\n").code == "yaml.too_large"


def test_too_many_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_yaml, "MAX_NODES", 10)
    assert _code(b"a: [" + b", ".join(b"1" for _ in range(20)) + b"]\n").code == "yaml.too_large"


def test_too_deep() -> None:
    depth = _yaml.MAX_DEPTH + 2
    raw = "".join(f"{'  ' * i}k{i}:\n" for i in range(depth)) + f"{'  ' * depth}1\n"
    error = _code(raw.encode())
    assert error.code == "yaml.too_deep"
    assert error.location.line is not None


_THOUSAND = 1000


@pytest.mark.parametrize(("raw", "line", "column", "path_prefix"), [
    pytest.param(f"a: {'[' * _THOUSAND}x{']' * _THOUSAND}\n", 1, 4 + _yaml.MAX_DEPTH, "a[0][0]",
                 id="flow-sequence"),
    pytest.param(f"a: {'{a: ' * _THOUSAND}x{'}' * _THOUSAND}\n", 1, 4 + 4 * _yaml.MAX_DEPTH,
                 "a.a.a", id="flow-mapping"),
    pytest.param(f"a:\n  {'- ' * _THOUSAND}x\n", 2, 3 + 2 * _yaml.MAX_DEPTH, "a[0][0]",
                 id="block-sequence"),
    pytest.param("".join(f"{' ' * i}a:\n" for i in range(_THOUSAND)) + f"{' ' * _THOUSAND}x\n",
                 _yaml.MAX_DEPTH + 2, _yaml.MAX_DEPTH + 2, "a.a.a", id="block-mapping"),
])
def test_thousand_levels_are_refused_before_composing(raw: str, line: int, column: int,
                                                      path_prefix: str) -> None:
    """A small document nested far beyond the bound is refused with its location: composing it
    would exhaust the interpreter's stack (a RecursionError, not a catalog code)."""
    error = _code(raw.encode())
    assert error.code == "yaml.too_deep"
    assert error.exit_code == 2
    assert (error.location.line, error.location.column) == (line, column)
    assert error.location.path is not None and error.location.path.startswith(path_prefix)


def test_nesting_at_the_bound_loads() -> None:
    depth = _yaml.MAX_DEPTH
    doc = load_yaml_bytes(f"a: {'[' * (depth - 1)}x{']' * (depth - 1)}\n".encode(), "doc.yaml")
    value = doc.data["a"]
    for _ in range(depth - 2):
        value = value[0]
    assert value == ["x"]
