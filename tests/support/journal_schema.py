"""A fresh, migrated PostgreSQL journal schema reached through the DSN's ``search_path``."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from dpone.journal.postgres import PostgresJournal


@contextmanager
def migrated_schema(postgres_dsn: str, environment_id: str, prefix: str = "journal_", *,
                    migrate: bool = True) -> Iterator[str]:
    """Create a randomly named schema, migrate the journal into it (unless ``migrate`` is
    False), yield its DSN, drop it."""
    schema = prefix + secrets.token_hex(6)
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    dsn = make_conninfo(postgres_dsn, options=f"-c search_path={schema},public")
    if migrate:
        migrating = PostgresJournal(dsn, environment_id=environment_id)
        migrating.migrate()
        migrating.close()
    try:
        yield dsn
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
