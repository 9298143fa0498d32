"""The PostgreSQL 15+ delivery journal (production): ``PostgresJournal``."""

from dpone.journal.postgres._connection import ConnectionSource
from dpone.journal.postgres._journal import PostgresJournal

__all__ = ["ConnectionSource", "PostgresJournal"]
