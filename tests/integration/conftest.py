"""Integration fixtures: a throwaway PostgreSQL 15 cluster for the whole test session.

``postgres_dsn`` is ``$DPONE_TEST_POSTGRES_DSN`` when that is set; otherwise a cluster started
from the machine's binaries (see ``tests/support/postgres_cluster.py``) on a free loopback port, stopped
and removed at the end of the session. fsync is off unless a suite turns it on, either by
overriding the ``postgres_fsync`` fixture in its own conftest or by parametrizing
``postgres_dsn`` indirectly with ``True``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from support.postgres_cluster import ThrowawayCluster


@pytest.fixture(scope="session")
def postgres_fsync() -> bool:
    """Whether the session's cluster fsyncs (durability suites override this with True)."""
    return False


@pytest.fixture(scope="session")
def postgres_dsn(request: pytest.FixtureRequest) -> Iterator[str]:
    configured = os.environ.get("DPONE_TEST_POSTGRES_DSN")
    if configured:
        yield configured
        return
    fsync = getattr(request, "param", None)
    if fsync is None:
        fsync = request.getfixturevalue("postgres_fsync")
    with ThrowawayCluster(fsync=bool(fsync)) as cluster:
        yield cluster.dsn


# Tests that build this checkout's wheel (``pip wheel`` writes build/ and dpone.egg-info into the
# checkout itself) share one pytest-xdist worker (``--dist loadgroup``), so two builds never
# overlap; their module and session venvs are then built once.
CHECKOUT_BUILDS = ("tests/integration/test_wheel.py",
                   "tests/integration/executor/test_executor_image.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.nodeid.split("::", 1)[0] in CHECKOUT_BUILDS:
            item.add_marker(pytest.mark.xdist_group("checkout-build"))
