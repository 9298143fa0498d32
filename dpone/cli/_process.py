"""A console script's process: what its imports make lives until it exits, so the cyclic garbage
collector leaves it alone.

Importing a command creates some 70,000 objects the collector tracks (modules, classes, pydantic
schemas) and none of them ever becomes garbage. Left as they are, the collector walks them in
every full collection of the run and three more times while the interpreter shuts down: about
0.05 s during the imports, 0.1 s in a long delivery and 0.13 s at exit, the same for every
command (``benchmarks/README.md``, "The collector and a command's cold process"). In a process
a console script owns (:func:`owned_process`), a command's module is imported with the
collector paused and what the import made is then frozen (:func:`gc.freeze`): moved out of
every later collection. The frozen objects are freed at exit as before, by reference counting;
the import's own cyclic garbage (about 700 objects for ``dpone deliver``) stays until then
instead of being collected.

A command run in a process the script does not own (a test's ``CliRunner``, an Airflow worker)
imports as usual: freezing there would keep any garbage the host had not collected yet.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import ModuleType

_OWNED: ContextVar[bool] = ContextVar("dpone_cli_process_owned", default=False)


@contextmanager
def owned_process() -> Iterator[None]:
    """The whole run of a console script, whose process ends when the command does: what the
    script imported so far is frozen now, each command module :func:`import_command` imports
    as it loads."""
    gc.freeze()
    token = _OWNED.set(True)
    try:
        yield
    finally:
        _OWNED.reset(token)


def import_command(module_name: str) -> ModuleType:
    """Import a command's module; in an owned process, with the collector paused while the
    module's objects are made, and those objects then frozen."""
    if not _OWNED.get():
        return importlib.import_module(module_name)
    enabled = gc.isenabled()
    gc.disable()
    try:
        return importlib.import_module(module_name)
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
