"""The empty-input journal suite, collected here so it runs against the SQLite ``journal``."""

from integration.journal.test_journal_empty_input import *  # noqa: F403
