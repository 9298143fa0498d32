"""The fault suites' journals: a fresh one per cell, dropped at the end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from support.fault_matrix import Journals


@pytest.fixture
def journals(postgres_dsn: str) -> Iterator[Journals]:
    made = Journals(postgres_dsn)
    yield made
    made.drop()
