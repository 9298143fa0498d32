"""``spans``: dpone's spans of one test, recorded in memory (see ``support.spans``)."""

from support.spans import spans  # noqa: F401 - the fixture
