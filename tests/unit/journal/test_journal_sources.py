"""The journal's sources keep in step: migrations between dialects, named queries with code.

Pure: these tests parse the shipped ``.sql`` files and the journal's Python sources; no
database runs. The PostgreSQL and SQLite migrations carry the same numbers, names, tables and
columns (a PostgreSQL ``daterange`` column ``x`` is SQLite's ``x_from``/``x_to`` pair); every
named query a dialect ships is run by the journal, and every name the journal runs exists.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from support.common import ROOT

JOURNAL = ROOT / "dpone" / "journal"
SQL = JOURNAL / "sql"
DIALECTS = ("postgres", "sqlite")
POSTGRES_ONLY_TABLES = frozenset({"rest_delivery_effect_domain_lock"})
"""SQLite serializes every writer with ``BEGIN IMMEDIATE`` instead of effect-domain row locks."""
QUERY_METHODS = frozenset({"one", "all", "run", "run_many", "statement"})
"""``UnitOfWork`` (and dialect ``Tx``) methods whose first argument is a query name."""
FORWARDED = frozenset({"name", "query"})
"""Parameters that forward a caller's query name (the literal is checked at the caller)."""

_MIGRATION = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_NAME = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$", re.MULTILINE)
_CREATE = re.compile(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)\s*\((.*?)\n\);", re.DOTALL)
_ADD = re.compile(r"ALTER TABLE (\w+)\s+ADD COLUMN (\w+)\s+(\w+)", re.IGNORECASE)
_NOT_COLUMNS = frozenset({"CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN", "EXCLUDE"})

Schema = dict[str, set[str]]


def _uncommented(text: str) -> str:
    return "\n".join(line.split("--", 1)[0] for line in text.splitlines())


def _items(body: str) -> Iterator[str]:
    """The comma-separated items of a CREATE TABLE body (commas inside parentheses kept)."""
    depth, item = 0, []
    for char in body:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            yield "".join(item).strip()
            item = []
        else:
            item.append(char)
    yield "".join(item).strip()


def _columns(name: str, kind: str) -> set[str]:
    return {f"{name}_from", f"{name}_to"} if kind.lower() == "daterange" else {name}


def schema_of(text: str) -> Schema:
    """Tables and their columns created or added by one migration's text."""
    text = _uncommented(text)
    schema: Schema = {}
    for table, body in _CREATE.findall(text):
        columns = schema.setdefault(table, set())
        for item in _items(body):
            words = item.split()
            if words and words[0].upper() not in _NOT_COLUMNS:
                columns |= _columns(words[0], words[1])
    for table, column, kind in _ADD.findall(text):
        schema.setdefault(table, set()).update(_columns(column, kind))
    return schema


def differences(postgres: Schema, sqlite: Schema) -> list[str]:
    found = []
    for table in sorted((postgres.keys() | sqlite.keys()) - POSTGRES_ONLY_TABLES):
        theirs, ours = postgres.get(table), sqlite.get(table)
        if theirs is None or ours is None:
            found.append(f"{table} exists only in {'sqlite' if theirs is None else 'postgres'}")
        elif theirs != ours:
            found.append(f"{table}: postgres-only {sorted(theirs - ours)}, "
                         f"sqlite-only {sorted(ours - theirs)}")
    return found


def migrations(dialect: str) -> dict[tuple[int, str], str]:
    found = {}
    for path in sorted((SQL / dialect).iterdir()):
        match = _MIGRATION.match(path.name)
        if match:
            found[(int(match.group(1)), match.group(2))] = path.read_text("utf-8")
    return found


def test_migrations_carry_the_same_numbers_and_names_in_both_dialects() -> None:
    postgres, sqlite = migrations("postgres"), migrations("sqlite")
    assert list(postgres) == list(sqlite)
    assert [version for version, _ in postgres] == list(range(1, len(postgres) + 1))


def test_each_migration_creates_the_same_tables_and_columns_in_both_dialects() -> None:
    postgres, sqlite = migrations("postgres"), migrations("sqlite")
    for key in postgres:
        assert differences(schema_of(postgres[key]), schema_of(sqlite[key])) == [], key
    created = set().union(*(schema_of(text) for text in postgres.values()))
    assert {"rest_delivery_child", "rest_delivery_parent", "rest_delivery_audit"} <= created


def test_the_parity_check_finds_a_column_added_to_one_dialect_only() -> None:
    postgres, sqlite = migrations("postgres"), migrations("sqlite")
    schema = schema_of(postgres[(1, "journal_schema")])
    assert "first_row" in schema["rest_delivery_child"]
    assert {"scope_from", "scope_to"} <= schema["rest_delivery_child"]
    drifted = sqlite[(2, "replay_fence")] + (
        "\nALTER TABLE rest_delivery_parent ADD COLUMN paused integer NOT NULL DEFAULT 0;\n")
    assert differences(schema_of(postgres[(2, "replay_fence")]), schema_of(drifted)) == [
        "rest_delivery_parent: postgres-only [], sqlite-only ['paused']"]
    dropped = sqlite[(1, "journal_schema")].replace(
        "    wire_bytes              INTEGER NOT NULL CHECK (wire_bytes >= 0),\n", "")
    assert differences(schema, schema_of(dropped)) == [
        "rest_delivery_child: postgres-only ['wire_bytes'], sqlite-only []"]


def defined_queries(dialect: str) -> set[str]:
    return set(_NAME.findall((SQL / dialect / "queries.sql").read_text("utf-8")))


def _literals(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.IfExp):
        yield from _literals(node.body)
        yield from _literals(node.orelse)
    else:
        assert isinstance(node, ast.Name) and node.id in FORWARDED, ast.unparse(node)


def _name_argument(call: ast.Call) -> ast.expr | None:
    """The query-name argument of a call, if the call runs a named query."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in QUERY_METHODS and call.args:
        return call.args[0]
    callee = func.id if isinstance(func, ast.Name) else None
    if callee in {"children", "query"} and len(call.args) >= 2:
        return call.args[1]
    return None


def used_queries(paths: list[Path]) -> set[str]:
    used: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if isinstance(node, ast.Call) and (argument := _name_argument(node)) is not None:
                used.update(_literals(argument))
    return used


def _shared_sources() -> list[Path]:
    return sorted([*JOURNAL.glob("*.py"), *(JOURNAL / "_tx").glob("*.py")])


def test_every_named_query_is_used_and_every_used_name_exists() -> None:
    shared = used_queries(_shared_sources())
    assert {"get_child", "insert_children", "clock_now"} <= shared
    for dialect in DIALECTS:
        used = shared | used_queries(sorted((JOURNAL / dialect).glob("*.py")))
        defined = defined_queries(dialect)
        assert sorted(defined - used) == [], f"{dialect} ships named queries nothing runs"
        assert sorted(used - defined) == [], f"{dialect} has no query of these names"


def test_the_journal_s_transactions_read_no_column_by_name() -> None:
    """Rows reach the transactions decoded (``_rows``): no ``row["column"]`` reads there."""
    for path in sorted([JOURNAL / "_port.py", *(JOURNAL / "_tx").glob("*.py")]):
        tree = ast.parse(path.read_text("utf-8"), str(path))
        reads = [ast.unparse(node) for node in ast.walk(tree)
                 if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                 and isinstance(node.slice.value, str)]
        assert reads == [], f"{path.relative_to(ROOT)} reads columns by name: {reads}"
