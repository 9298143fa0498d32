"""Render docs/reference/authoring-fields.md from the authoring JSON Schemas (review the diff).

Every field's type, bounds, default and whether it is required come from the checked-in schemas
in dpone/contracts/schemas/ (themselves generated from the models by scripts/generate_schemas.py);
its meaning comes from docs/reference/authoring-fields.meanings.yaml, which must name every field
and nothing else. The refusal index comes from the negative fixtures of `dpone check`
(tests/unit/compiler/negative/*/expect.json).

    .venv/bin/python scripts/generate_authoring_reference.py            # write the reference
    .venv/bin/python scripts/generate_authoring_reference.py --check    # exit 1 when it is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "dpone" / "contracts" / "schemas"
MEANINGS = ROOT / "docs" / "reference" / "authoring-fields.meanings.yaml"
NEGATIVE = ROOT / "tests" / "unit" / "compiler" / "negative"
OUTPUT = ROOT / "docs" / "reference" / "authoring-fields.md"
SCRIPT = "scripts/generate_authoring_reference.py"

AUTHORING_SCHEMAS = (
    "dpone.batch.v1",
    "dpone.payload_mapping.v1",
    "dpone.operation_profile.v1",
    "dpone.connection_binding.v1",
    "dpone.environment.v1",
)
"""The files people write, in the order the reference shows them."""


class MeaningsMismatch(ValueError):
    """The meanings file and the schemas do not name the same fields."""


def _ref_name(node: Mapping[str, Any]) -> str:
    return str(node["$ref"]).rsplit("/", 1)[-1]


def _code(text: str) -> str:
    """``text`` as an inline code span that is safe inside a Markdown table cell."""
    return "`" + text.replace("|", "\\|") + "`"


def _value(value: Any) -> str:
    """A literal as an author writes it: bare words stay bare, anything else is JSON."""
    if isinstance(value, str) and value and value.isprintable() and value.strip() == value \
            and not any(ch in value for ch in "`\"'") and value not in ("null", "true", "false"):
        return _code(value)
    return _code(json.dumps(value, ensure_ascii=False))


class _Schema:
    """One authoring schema and its meanings, rendered as one section of tables."""

    def __init__(self, schema_id: str, schema: Mapping[str, Any], meanings: Mapping[str, Any]) -> None:
        self.schema_id = schema_id
        self.schema = schema
        self.defs: Mapping[str, Any] = schema.get("$defs", {})
        self.meta = meanings
        self.objects: Mapping[str, Any] = meanings.get("objects") or {}
        self.root = str(schema["title"])

    # ----------------------------------------------------------------- structure
    def node(self, name: str) -> Mapping[str, Any]:
        return self.schema if name == self.root else self.defs[name]

    def anchor(self, name: str) -> str:
        return f"{self.schema_id.replace('.', '-')}-{name.lower()}"

    def _children(self, field: Mapping[str, Any], path: str) -> Iterator[tuple[str, str]]:
        """(object name, path) of every object a field holds, with the path it sits at."""
        if "$ref" in field:
            yield _ref_name(field), path
        for key in ("anyOf", "oneOf"):
            for member in field.get(key, ()):
                yield from self._children(member, path)
        if "items" in field:
            yield from self._children(field["items"], path + "[]")
        for value in field.get("patternProperties", {}).values():
            yield from self._children(value, path + ".<name>")

    def _field_order(self, name: str) -> list[str]:
        properties = list(self.node(name).get("properties", {}))
        described = [key for key in self.objects.get(name) or {} if key != "_"]
        return [key for key in described if key in properties] + \
               [key for key in properties if key not in described]

    def walk(self) -> list[tuple[str, list[str]]]:
        """Every object reachable from the root, depth first in field order, with every path it
        sits at."""
        order: list[str] = []
        paths: dict[str, list[str]] = {}

        def visit(name: str, path: str) -> None:
            if name in paths:
                paths[name].append(path)
                return
            order.append(name)
            paths[name] = [path]
            for field in self._field_order(name):
                schema = self.node(name)["properties"][field]
                for child, at in self._children(schema, f"{path}.{field}" if path else field):
                    visit(child, at)

        visit(self.root, "")
        return [(name, paths[name]) for name in order]

    def check(self) -> list[str]:
        """Every gap between the schema's fields and the meanings, as readable lines."""
        gaps: list[str] = []
        reachable = [name for name, _ in self.walk()]
        for name in reachable:
            fields = set(self.node(name).get("properties", {}))
            described = self.objects.get(name) or {}
            gaps += [f"{self.schema_id}: {name}.{f} has no meaning" for f in sorted(fields - set(described))]
            gaps += [f"{self.schema_id}: {name}.{f} is described but the schema has no such field"
                     for f in sorted(set(described) - fields - {"_"})]
            if not described.get("_"):
                gaps.append(f"{self.schema_id}: {name} has no `_` (what the object is)")
        gaps += [f"{self.schema_id}: {name} is described but not part of the schema"
                 for name in sorted(set(self.objects) - set(reachable))]
        gaps += [f"{self.schema_id}: `{key}` is missing" for key in ("title", "owner", "where")
                 if not self.meta.get(key)]
        return gaps

    # ----------------------------------------------------------------- cells
    def type_of(self, node: Mapping[str, Any]) -> str:
        if "$ref" in node:
            name = _ref_name(node)
            return f"[{name}](#{self.anchor(name)})"
        if "oneOf" in node:
            return "one of " + ", ".join(self.type_of(member) for member in node["oneOf"])
        if "anyOf" in node:
            members = [m for m in node["anyOf"] if m.get("type") != "null"]
            nullable = len(members) < len(node["anyOf"])
            text = " or ".join(self.type_of(member) for member in members)
            return text + (" or null" if nullable else "")
        kind = node.get("type")
        if kind == "array":
            return "list of " + self.type_of(node.get("items", {}))
        if kind == "object" and "patternProperties" in node:
            (value,) = node["patternProperties"].values()
            return "map of name to " + self.type_of(value)
        if "format" in node:
            return f"{kind} ({node['format']})"
        return str(kind)

    def bounds_of(self, node: Mapping[str, Any]) -> list[str]:
        if "anyOf" in node:
            return [b for m in node["anyOf"] if m.get("type") != "null" for b in self.bounds_of(m)]
        found: list[str] = []
        if "const" in node:
            found.append("exactly " + _value(node["const"]))
        if "enum" in node:
            found.append("one of " + ", ".join(_value(v) for v in node["enum"]))
        low, high = node.get("minimum"), node.get("maximum")
        if low is not None or high is not None:
            found.append(f"{_fmt(low)}..{_fmt(high)}" if low is not None and high is not None
                         else (f">= {_fmt(low)}" if low is not None else f"<= {_fmt(high)}"))
        short, long = node.get("minLength"), node.get("maxLength")
        if short is not None and long is not None:
            found.append(f"{short}..{_fmt(long)} characters")
        elif long is not None:
            found.append(f"at most {_fmt(long)} characters")
        elif short is not None:
            found.append(f"at least {short} character(s)")
        if "pattern" in node:
            found.append("pattern " + _code(node["pattern"]))
        few, many = node.get("minItems"), node.get("maxItems")
        if few is not None or many is not None:
            found.append(f"{few or 0}..{_fmt(many)} items" if many is not None
                         else f"at least {few} item" + ("s" if few != 1 else ""))
        if node.get("type") == "array" and "items" in node and "$ref" not in node["items"]:
            found += ["each " + b for b in self.bounds_of(node["items"])]
        if node.get("type") == "object" and "patternProperties" in node:
            (key_pattern,) = node["patternProperties"]
            found.append("names match " + _code(key_pattern))
            if "maxLength" in node.get("propertyNames", {}):
                found.append(f"names at most {node['propertyNames']['maxLength']} characters")
            (value,) = node["patternProperties"].values()
            if "$ref" not in value:
                found += ["each value " + b for b in self.bounds_of(value)]
        return found

    def _object_defaults(self, name: str) -> dict[str, Any] | None:
        """The value an object takes when every field keeps its default (None if one has none)."""
        values: dict[str, Any] = {}
        for field, schema in self.node(name).get("properties", {}).items():
            if "default" not in schema:
                return None
            values[field] = schema["default"]
        return values

    def default_of(self, node: Mapping[str, Any], required: bool) -> str:
        if required:
            return "required"
        if "default" not in node:
            return "optional"
        default = node["default"]
        if isinstance(default, dict) and default and "$ref" in node \
                and default == self._object_defaults(_ref_name(node)):
            return "optional; each field at its default"
        return "default " + _value(default)

    # ----------------------------------------------------------------- rendering
    def render(self) -> list[str]:
        meta = self.meta
        lines = [
            f"## {meta['title']}: `{self.schema_id}`",
            "",
            f"Written by {meta['owner']}. File: {meta['where']}. Schema: "
            f"[`{self.schema_id}.schema.json`](../../dpone/contracts/schemas/{self.schema_id}.schema.json). "
            f"Format version {self.schema['x-dpone-format-version']}; changes that require editing "
            "such files: [migration notes](../migrations/README.md).",
            "",
        ]
        for name, paths in self.walk():
            node = self.node(name)
            described = self.objects.get(name) or {}
            where = "the file itself" if paths == [""] else \
                "at " + ", ".join(_code(p) for p in paths)
            lines += [f'<a id="{self.anchor(name)}"></a>', "", f"### `{name}`: {where}", "",
                      _cell(described["_"]), "",
                      "| field | type | required / default | bounds | meaning |",
                      "|---|---|---|---|---|"]
            required = set(node.get("required", ()))
            for field in self._field_order(name):
                schema = node["properties"][field]
                bounds = "; ".join(self.bounds_of(schema)) or ""
                lines.append(
                    f"| {_code(field)} | {self.type_of(schema)} | "
                    f"{self.default_of(schema, field in required)} | {bounds} | "
                    f"{_cell(described[field])} |")
            lines.append("")
        return lines


def _fmt(number: Any) -> str:
    return f"{number:,}".replace(",", "_") if isinstance(number, int) and abs(number) >= 100_000 \
        else str(number)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _refusals(negative: Path) -> list[str]:
    lines = [
        "## What `dpone check` refuses",
        "",
        "Each row is a case of the negative fixture matrix (`tests/unit/compiler/negative/<case>/`: "
        "the files that differ from `examples/`, and the expected refusal). Every case exits 2 "
        "with the code, the file and line, the YAML path and no plan written "
        "(`tests/unit/compiler/test_negative_matrix.py`).",
        "",
        "| case | refused file | YAML path | code |",
        "|---|---|---|---|",
    ]
    for case in sorted(p for p in negative.iterdir() if (p / "expect.json").is_file()):
        expect = json.loads((case / "expect.json").read_text("utf-8"))
        path = expect.get("path")
        lines.append(f"| [`{case.name}`](../../tests/unit/compiler/negative/{case.name}/) | "
                     f"`{expect['file']}`:{expect['line']} | "
                     f"{_code(path) if path else '(the document)'} | `{expect['code']}` |")
    return [*lines, ""]


def load_meanings(path: Path = MEANINGS) -> dict[str, Any]:
    loaded = YAML(typ="safe", pure=True).load(path.read_text("utf-8"))
    return dict(loaded or {})


def render(schema_dir: Path = SCHEMA_DIR, meanings_path: Path = MEANINGS,
           negative: Path = NEGATIVE) -> str:
    """The reference as Markdown; raises :class:`MeaningsMismatch` listing every gap."""
    meanings = load_meanings(meanings_path)
    schemas = [_Schema(schema_id,
                       json.loads((schema_dir / f"{schema_id}.schema.json").read_text("utf-8")),
                       meanings.get(schema_id) or {})
               for schema_id in AUTHORING_SCHEMAS]
    gaps = [gap for schema in schemas for gap in schema.check()]
    gaps += [f"{key}: not an authoring schema" for key in sorted(set(meanings) - set(AUTHORING_SCHEMAS))]
    if gaps:
        raise MeaningsMismatch("\n".join(gaps))
    lines = [
        "# Authoring field reference",
        "",
        f"Generated by `{SCRIPT}` from the JSON Schemas in `dpone/contracts/schemas/` (types, "
        "bounds, defaults), `docs/reference/authoring-fields.meanings.yaml` (meanings) and the "
        "negative fixtures of `dpone check`. Do not edit by hand; change the model (then "
        "`scripts/generate_schemas.py`) or the meanings, and regenerate. The guide is "
        "[`docs/authoring.md`](../authoring.md).",
        "",
        "Every object is closed: a field not listed here is refused (`schema.unknown_field`, "
        "with a \"did you mean\" hint). A field marked \"required\" has no default; any other "
        "field may be left out, and a default of `null` means unset. Bounds are inclusive.",
        "",
        "Contents: " + ", ".join(
            f"[{schema.meta['title']}](#{schema.anchor(schema.root)})" for schema in schemas)
        + ", [what `dpone check` refuses](#what-dpone-check-refuses).",
        "",
    ]
    for schema in schemas:
        lines += schema.render()
    lines += _refusals(negative)
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when the file differs from the schemas")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    try:
        text = render()
    except MeaningsMismatch as exc:
        print(f"{MEANINGS.relative_to(ROOT)} does not match the schemas:\n{exc}", file=sys.stderr)
        return 1
    if args.check:
        current = args.output.read_text("utf-8") if args.output.is_file() else None
        if current != text:
            print(f"{args.output} is stale; run {SCRIPT}", file=sys.stderr)
            return 1
        print(f"{args.output} is current")
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
