"""Named SQL blocks and numbered migrations, read from the package's ``sql/<dialect>/`` files.

``queries.sql`` holds blocks introduced by ``-- name: <name>`` lines; migrations are files named
``NNNN_<name>.sql``. The text comes only from files shipped inside this package, never from
data, so it is handed to the driver as a literal query string.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from typing import TYPE_CHECKING, LiteralString

from dpone.contracts._errors import DponeError

if TYPE_CHECKING:
    from dpone.journal._unit import UnitOfWork

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


def apply_pending(tx: UnitOfWork, dialect: str,
                  execute: Callable[[Migration], None]) -> tuple[int, ...]:
    """Apply the migrations of ``dialect`` not yet recorded; refuse a changed checksum.

    The dialect has created the migrations table (and taken its migration lock) in ``tx``;
    ``execute`` runs one migration's text with the dialect's driver.
    """
    applied = {row["version"]: row for row in tx.all("migration_applied")}
    done: list[int] = []
    for migration in migrations(dialect):
        recorded = applied.get(migration.version)
        if recorded is not None:
            if recorded["checksum"] != migration.checksum:
                raise DponeError(
                    code="journal.unavailable",
                    message=f"migration {migration.version:04d}_{migration.name} differs "
                    "from the one applied to this journal; migrations are never edited",
                    details={"applied": recorded["checksum"], "shipped": migration.checksum})
            continue
        execute(migration)
        tx.run("migration_record", version=migration.version, name=migration.name,
               checksum=migration.checksum)
        done.append(migration.version)
    return tuple(done)
