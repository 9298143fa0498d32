"""The fenced-replay contract tests, collected here so they run against the SQLite ``journal``."""

from integration.journal.test_journal_fenced_replay import *  # noqa: F403
