"""The marker re-plan tests, collected here so they run against the SQLite ``journal``."""

from integration.journal.test_journal_marker_replan import *  # noqa: F403
