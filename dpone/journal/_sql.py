"""Named SQL blocks and numbered migrations, read from the package's ``sql/<dialect>/`` files.

``queries.sql`` holds blocks introduced by ``-- name: <name>`` lines; migrations are files named
``NNNN_<name>.sql``. The text comes only from files shipped inside this package, never from
data, so it is handed to the driver as a literal query string.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from importlib.resources import files
from typing import LiteralString

from dpone.contracts._errors import DponeError

_NAME = re.compile(r"^--\s*name:\s*([a-z_][a-z0-9_]*)\s*$")
_MIGRATION = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    text: LiteralString
    checksum: str


def parse_queries(text: str) -> dict[str, LiteralString]:
    """The named blocks of one queries file; a repeated name is refused."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        match = _NAME.match(line)
        if match:
            if match.group(1) in blocks:
                raise ValueError(f"query {match.group(1)!r} is defined twice")
            current = blocks.setdefault(match.group(1), [])
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines).strip() for name, lines in blocks.items()}


@functools.cache
def queries(dialect: str) -> dict[str, LiteralString]:
    resource = files("dpone.journal.sql").joinpath(dialect, "queries.sql")
    return parse_queries(resource.read_text(encoding="utf-8"))


def query(dialect: str, name: str) -> LiteralString:
    """One named query of ``dialect``; an unknown name is a programming error of the adapter."""
    try:
        return queries(dialect)[name]
    except KeyError:
        raise DponeError(code="journal.unavailable",
                         message=f"the {dialect} journal has no query named {name!r}") from None


@functools.cache
def migrations(dialect: str) -> tuple[Migration, ...]:
    """The numbered migrations of ``dialect`` in version order (versions must be 1..n)."""
    found: list[Migration] = []
    for entry in files("dpone.journal.sql").joinpath(dialect).iterdir():
        match = _MIGRATION.match(entry.name)
        if match is None:
            continue
        data = entry.read_bytes()
        found.append(Migration(version=int(match.group(1)), name=match.group(2),
                               text=data.decode("utf-8"),
                               checksum="sha256:" + hashlib.sha256(data).hexdigest()))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise DponeError(code="journal.unavailable",
                         message=f"{dialect} migrations are not numbered 0001..{len(found):04d}")
    return tuple(found)
