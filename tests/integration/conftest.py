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


@pytest.fixture(scope="session", autouse=True)
def _checkout_builds_out_of_tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Builds of this checkout during the run (``pip wheel`` in the wheel and executor-image
    tests) keep their build/ and egg-info directories in this process's temporary directory, not
    in the checkout: under pytest-xdist two workers may build at the same time, and one build's
    clean-up must not remove the other's files. The wheel is the same either way."""
    scratch = tmp_path_factory.mktemp("checkout-build")
    config = scratch / "setuptools.cfg"
    config.write_text(f"[build]\nbuild_base = {scratch / 'build'}\n"
                      f"[egg_info]\negg_base = {scratch}\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DIST_EXTRA_CONFIG", str(config))
        yield


def _start_rank(item: pytest.Item) -> int:
    if item.get_closest_marker("fault_matrix") is not None:
        return 0
    return 1 if item.get_closest_marker("slow") is not None else 2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``scripts/test``: ``--dist loadscope --no-loadscope-reorder``, one
    module per worker at a time) the modules of the longest tests (the fault matrix, then the
    other ``slow`` ones) are handed out first, so the run does not end waiting on one of them
    while the other workers are idle. Run in one process, the order is the collection order."""
    if hasattr(config, "workerinput"):
        items.sort(key=_start_rank)
