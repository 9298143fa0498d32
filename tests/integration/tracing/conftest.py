"""``spans`` (dpone's spans of one test, recorded in memory: ``support.spans``), one authenticated
mock receiver per module (reset per test) and a copy of the example registry bound to it."""

from __future__ import annotations

from support.cli_receiver import module_receiver, receiver, registry  # noqa: F401 - fixtures
from support.spans import spans  # noqa: F401 - the fixture
