"""Freezing and sealing allocate Arrow memory from jemalloc when pyarrow has it (a lower peak
RSS than the mimalloc default), unless ARROW_DEFAULT_MEMORY_POOL names a pool: checked in fresh
interpreters, since the choice is made once per process."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pytest

_PROBE = ("from dpone.executor.source import bounded_memory_pool; "
          "import pyarrow as pa; bounded_memory_pool(); "
          "print(pa.default_memory_pool().backend_name)")


def _backend(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    done = subprocess.run([sys.executable, "-c", _PROBE], env={**clean, **env},
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _has_jemalloc() -> bool:
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        return False
    return True


@pytest.mark.skipif(not _has_jemalloc(), reason="this pyarrow is built without jemalloc")
def test_the_freeze_and_seal_pool_is_jemalloc() -> None:
    assert _backend() == "jemalloc"


def test_an_explicit_pool_choice_is_kept() -> None:
    assert _backend(ARROW_DEFAULT_MEMORY_POOL="system") == "system"


@pytest.mark.skipif(not _has_jemalloc(), reason="this pyarrow is built without jemalloc")
def test_freed_pages_go_back_after_the_pool_decay() -> None:
    probe = ("import pyarrow as pa; seen = []; pa.jemalloc_set_decay_ms = seen.append; "
             "from dpone.executor.source import bounded_memory_pool; "
             "from dpone.executor.source._arrow import JEMALLOC_DECAY_MS; "
             "bounded_memory_pool(); print(seen == [JEMALLOC_DECAY_MS] and 0 < seen[0] < 1000)")
    clean = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    done = subprocess.run([sys.executable, "-c", probe], env=clean, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "True"
