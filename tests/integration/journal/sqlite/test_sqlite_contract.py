"""The shared journal contract suite, collected here so it runs against the SQLite ``journal``."""

from integration.journal.test_journal_contract import *  # noqa: F403
