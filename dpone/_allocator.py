"""The options Arrow's jemalloc starts with: read once, when pyarrow loads.

Freezing and sealing allocate Arrow memory from jemalloc (``source._arrow.bounded_memory_pool``).
jemalloc reads its options from ``JE_ARROW_MALLOC_CONF`` when pyarrow is first imported, so a
process that wants them sets them before that import: a console script's process does
(``dpone.cli._console``); a host process (an Airflow worker, a test run) keeps its own.
"""

from __future__ import annotations

import os
import sys
from typing import Final

JEMALLOC_DECAY_MS: Final = 300
"""How long jemalloc keeps freed pages before handing them back (pyarrow's default is 1 s): the
sealer's encoders free a block's texts every few milliseconds, so a shorter delay keeps the
peak about 20 MB lower at no cost in time; 0 (hand back at once) triples the system time."""
JEMALLOC_OPTIONS: Final = f"narenas:1,dirty_decay_ms:{JEMALLOC_DECAY_MS},muzzy_decay_ms:0"
"""One arena for every thread, so a page one freeze or seal thread frees is reused by the next
allocation of any other (with an arena each, up to 8 on 2 cores, each keeps its own); freed
pages go back after :data:`JEMALLOC_DECAY_MS` and are then dropped at once
(``muzzy_decay_ms:0``), not left lazily freed, where they still count in the resident memory.
At 2M rows: a peak about 30 MB lower, in the same time (``benchmarks/README.md``)."""
OPTIONS_VARIABLE: Final = "JE_ARROW_MALLOC_CONF"


def start_arrow_allocator() -> bool:
    """Set :data:`JEMALLOC_OPTIONS` for this process unless the variable is set already; True
    when the options in force are this process's choice: pyarrow not loaded yet (later its
    jemalloc reads no option again)."""
    if "pyarrow" in sys.modules:
        return False
    os.environ.setdefault(OPTIONS_VARIABLE, JEMALLOC_OPTIONS)
    return True
