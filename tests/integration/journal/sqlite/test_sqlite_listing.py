"""The delivery listing suite, collected here so it runs against the SQLite ``journal``."""

from integration.journal.test_journal_listing import *  # noqa: F403
