"""The SQLite delivery journal (local development only): ``SqliteJournal``."""

from dpone.journal.sqlite._journal import SqliteJournal

__all__ = ["SqliteJournal"]
