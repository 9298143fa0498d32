"""A journal URL is shown with its password masked (`dpone delivery list`, hints)."""

from __future__ import annotations

from dpone.cli._hints import redact


def test_a_postgres_journal_is_shown_with_its_password_masked() -> None:
    assert redact("postgresql://ops:s3cret@db:5432/j?password=s3cret&sslmode=require"
                  ) == "postgresql://ops:***@db:5432/j?password=***&sslmode=require"
    assert redact("postgres://db/j") == "postgres://db/j"
    assert redact(".dpone/journal.sqlite3") == ".dpone/journal.sqlite3"
