"""A bounded, strict YAML loader on ruamel.yaml.

Reads bytes, validates UTF-8 itself, composes the node tree (never constructs arbitrary
objects), and converts it to plain JSON-compatible data while recording the line and column of
every value. Duplicate keys, anchors/aliases, custom tags, multiple documents and documents over
the byte, depth or node bounds are refused with a catalog code and the location.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    CollectionEndEvent,
    CollectionStartEvent,
    Event,
    MappingStartEvent,
    NodeEvent,
    ScalarEvent,
)
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from dpone.contracts import DponeError, Location

MAX_BYTES = 1_048_576
MAX_DEPTH = 32
MAX_NODES = 100_000

YamlPath = tuple[str | int, ...]

_CORE = "tag:yaml.org,2002:"
_CONSTRUCTED = {_CORE + t for t in ("int", "float", "bool", "null")}
_AS_TEXT = {_CORE + "str", _CORE + "timestamp"}


def render_path(path: YamlPath) -> str:
    """``sink.mutation.scope`` / ``columns[2].name``: the dotted YAML path of a value."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out or "<root>"


@dataclass(frozen=True)
class LoadedDocument:
    """Plain data plus where every value came from."""

    data: dict[str, Any]
    file: str
    positions: dict[YamlPath, tuple[int, int]] = field(repr=False)

    def locate(self, path: YamlPath) -> Location:
        """The nearest recorded position at or above ``path``."""
        probe = tuple(path)
        while probe not in self.positions and probe:
            probe = probe[:-1]
        line, column = self.positions.get(probe, (1, 1))
        return Location(file=self.file, line=line, column=column, path=render_path(tuple(path)))


def _error(code: str, message: str, file: str, line: int | None, column: int | None = None,
           path: YamlPath = (), **details: Any) -> DponeError:
    return DponeError(
        code=code,
        message=message,
        location=Location(file=file, line=line, column=column,
                          path=render_path(path) if path else None),
        details=details,
    )


def _decode(raw: bytes, file: str) -> str:
    if len(raw) > MAX_BYTES:
        raise _error("yaml.too_large", f"document is {len(raw)} bytes; the bound is {MAX_BYTES}",
                     file, None)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise _error("yaml.invalid_utf8", f"invalid UTF-8 byte 0x{raw[exc.start]:02x} at offset "
                     f"{exc.start}", file, line, column) from None
    return text.removeprefix("\ufeff")


class _Converter:
    def __init__(self, yaml: YAML, file: str) -> None:
        self._yaml = yaml
        self._file = file
        self._nodes = 0
        self.positions: dict[YamlPath, tuple[int, int]] = {}

    def _where(self, node: Node) -> tuple[int, int]:
        return node.start_mark.line + 1, node.start_mark.column + 1

    def convert(self, node: Node, path: YamlPath) -> Any:
        self._nodes += 1
        line, column = self._where(node)
        if self._nodes > MAX_NODES:
            raise _error("yaml.too_large", f"more than {MAX_NODES} YAML nodes", self._file, line)
        # Composing never expands aliases (an alias is the anchored node object again), and
        # every anchored node is refused where it is first met, so alias bombs cannot grow.
        if getattr(node, "anchor", None):
            raise _error("yaml.alias_forbidden", "anchors and aliases are not accepted",
                         self._file, line, column, path)
        self.positions.setdefault(path, (line, column))
        if isinstance(node, MappingNode):
            return self._mapping(node, path)
        if isinstance(node, SequenceNode):
            self._check_tag(node, _CORE + "seq", path)
            return [self.convert(item, (*path, i)) for i, item in enumerate(node.value)]
        assert isinstance(node, ScalarNode)
        if node.tag in _AS_TEXT:
            return str(node.value)
        if node.tag in _CONSTRUCTED:
            return self._yaml.constructor.construct_object(node, deep=True)
        raise _error("yaml.custom_tag", f"tag {node.tag!r} is not accepted",
                     self._file, line, column, path)

    def _check_tag(self, node: Node, expected: str, path: YamlPath) -> None:
        if node.tag != expected:
            line, column = self._where(node)
            raise _error("yaml.custom_tag", f"tag {node.tag!r} is not accepted",
                         self._file, line, column, path)

    def _mapping(self, node: MappingNode, path: YamlPath) -> dict[str, Any]:
        self._check_tag(node, _CORE + "map", path)
        out: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        for key_node, value_node in node.value:
            line, column = self._where(key_node)
            if not isinstance(key_node, ScalarNode) or key_node.tag == _CORE + "merge":
                raise _error("yaml.syntax", "mapping keys must be plain scalars",
                             self._file, line, column, path)
            key = str(key_node.value)
            if key in first_line:
                raise _error("yaml.duplicate_key",
                             f"key {key!r} appears twice (lines {first_line[key]} and {line})",
                             self._file, line, column, (*path, key),
                             first_line=first_line[key], second_line=line)
            first_line[key] = line
            self.positions[(*path, key)] = (line, column)
            out[key] = self.convert(value_node, (*path, key))
        return out


@dataclass
class _Open:
    """A collection the depth pass is inside: its YAML path and the nodes met in it so far."""

    mapping: bool
    path: YamlPath
    seen: int = 0
    key: str = ""

    def place(self, event: Event) -> YamlPath:
        """The YAML path of the next node in this collection (a key sits at the mapping's)."""
        self.seen += 1
        if not self.mapping:
            return (*self.path, self.seen - 1)
        if self.seen % 2:
            self.key = str(event.value) if isinstance(event, ScalarEvent) else "?"
            return self.path
        return (*self.path, self.key)


def _check_depth(yaml: YAML, text: str, file: str) -> None:
    """Refuse nesting beyond ``MAX_DEPTH`` before composing.

    The composer recurses once per level, so a small document nested a thousand levels deep
    (flow ``[[[...]]]``, ``{a: {a: ...}}`` or block form) would exhaust Python's stack inside
    ruamel; the parser's event stream is flat, so this pass is bounded by the document's size.
    """
    open_: list[_Open] = []
    for event in yaml.parse(io.StringIO(text)):
        if isinstance(event, CollectionEndEvent):
            open_.pop()
            continue
        if not isinstance(event, NodeEvent):
            continue
        path = open_[-1].place(event) if open_ else ()
        if len(path) > MAX_DEPTH:
            mark = event.start_mark
            raise _error("yaml.too_deep", f"nesting deeper than {MAX_DEPTH} levels", file,
                         mark.line + 1, mark.column + 1, path)
        if isinstance(event, CollectionStartEvent):
            open_.append(_Open(isinstance(event, MappingStartEvent), path))


class _TooDeep(Exception):
    """The composer went past ``MAX_DEPTH``: the depth pass names where."""


class _BoundedComposer(Composer):
    """ruamel's composer, refusing to recurse past ``MAX_DEPTH`` (+1: the composer counts a
    mapping's keys one level below the mapping, where a YAML path places them at it)."""

    _level = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._level += 1
        try:
            if self._level > MAX_DEPTH + 1:
                raise _TooDeep
            return super().compose_node(parent, index)
        finally:
            self._level -= 1


def _compose(yaml: YAML, text: str, file: str) -> Node | None:
    """One pass over a document of ordinary depth; only a too-deep one is read again, by the
    event pass that names its path."""
    try:
        return cast("Node | None", yaml.compose(io.StringIO(text)))
    except _TooDeep:
        _check_depth(yaml, text, file)
        raise _error("yaml.too_deep", f"nesting deeper than {MAX_DEPTH} levels", file,
                     None) from None


def load_yaml_bytes(raw: bytes, file: str) -> LoadedDocument:
    """Load one bounded YAML mapping from bytes; ``file`` names it in errors."""
    text = _decode(raw, file)
    yaml = YAML(typ="safe", pure=True)
    yaml.Composer = _BoundedComposer
    try:
        node = _compose(yaml, text, file)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if "single document" in str(exc.context):
            code, message = "yaml.multiple_documents", "a file must hold exactly one YAML document"
        else:
            code, message = "yaml.syntax", (exc.problem or str(exc)).strip()
        raise _error(code, message, file, mark.line + 1 if mark else None,
                     mark.column + 1 if mark else None) from None
    except YAMLError as exc:
        raise _error("yaml.syntax", str(exc).splitlines()[0], file, None) from None
    if not isinstance(node, MappingNode):
        line = node.start_mark.line + 1 if node is not None else 1
        raise _error("yaml.not_a_mapping", "the document must be a mapping", file, line)
    converter = _Converter(yaml, file)
    data = converter.convert(node, ())
    return LoadedDocument(data=data, file=file, positions=converter.positions)


def load_yaml_file(path: Path, display: str | None = None) -> LoadedDocument:
    name = display or str(path)
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        raise _error("input.not_found", f"no such file: {name}", name, None) from None
    except IsADirectoryError:
        raise _error("input.not_found", f"{name} is a directory, not a YAML file", name,
                     None) from None
    except OSError as exc:
        raise _error("filesystem.unavailable", f"cannot read {name}: "
                     f"{exc.strerror or type(exc).__name__}", name, None) from None
    return load_yaml_bytes(raw, name)


def iter_paths(data: Any, path: YamlPath = ()) -> Iterator[tuple[YamlPath, Any]]:
    """Every (path, value) in plain data, depth first."""
    yield path, data
    if isinstance(data, dict):
        for key, value in data.items():
            yield from iter_paths(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from iter_paths(value, (*path, index))
