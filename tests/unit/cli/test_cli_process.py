"""A console script's process keeps the collector away from what its imports made
(:mod:`dpone.cli._process`) and starts Arrow's allocator with the product's options
(:mod:`dpone.cli._console`); a process the script does not own imports as usual and keeps its
own allocator options."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from dpone._allocator import JEMALLOC_OPTIONS, OPTIONS_VARIABLE, start_arrow_allocator
from dpone.cli._process import import_command, owned_process
from support.common import ROOT

# A module no other test imports: its import is really made here, once per test.
FRESH = "dpone.cli.admin_prune"


@pytest.fixture
def collector() -> Iterator[None]:
    """Leave the test process as it was: the collector enabled, nothing frozen, the module the
    test imports afresh back as every other test knows it."""
    before = sys.modules.pop(FRESH, None)
    yield
    gc.unfreeze()
    gc.enable()
    if before is not None:
        sys.modules[FRESH] = before


def test_outside_an_owned_process_a_command_imports_as_usual(collector: None) -> None:
    frozen = gc.get_freeze_count()
    import_command(FRESH)
    assert gc.get_freeze_count() == frozen
    assert gc.isenabled()


def test_an_owned_process_freezes_what_a_command_import_made(collector: None) -> None:
    with owned_process():
        after_entry = gc.get_freeze_count()
        assert after_entry > 0  # what was imported before the script ran
        import_command(FRESH)
        assert gc.get_freeze_count() > after_entry
        assert gc.isenabled()  # the collector is back for what the command itself makes
    tracked = {id(obj) for obj in gc.get_objects()}
    assert id(sys.modules[FRESH].__dict__) not in tracked  # frozen: in no generation


def test_a_paused_collector_stays_paused(collector: None) -> None:
    gc.disable()
    with owned_process():
        import_command(FRESH)
        assert not gc.isenabled()


def test_a_failed_import_leaves_the_collector_running(collector: None) -> None:
    with owned_process(), pytest.raises(ModuleNotFoundError):
        import_command("dpone.cli.no_such_command")
    assert gc.isenabled()


@pytest.mark.parametrize(("entry", "argv"), [
    ("dpone.cli.main", ["delivery", "list", "--help"]),
    ("dpone.cli.main", ["--version"]),
    ("dpone.cli.executor_app", ["--help"]),
])
def test_each_console_script_runs_its_command_in_an_owned_process(entry: str,
                                                                   argv: list[str]) -> None:
    """`dpone` and `dpone-executor` as their entry points run them: at exit the collector runs
    and the imported modules are frozen out of it."""
    probe = (
        "import atexit, gc, json, sys\n"
        "atexit.register(lambda: print(json.dumps({'enabled': gc.isenabled(), "
        "'frozen': gc.get_freeze_count(), 'tracked': len(gc.get_objects())}), "
        "file=sys.stderr))\n"
        f"sys.argv = ['dpone', *{argv!r}]\n"
        f"from {entry} import main\n"
        "main()\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            cwd=ROOT, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    state = json.loads(result.stderr.strip().splitlines()[-1])
    assert state["enabled"]
    assert state["frozen"] > state["tracked"]  # most of the process is out of every collection


_ALLOCATOR_PROBE = (
    "import atexit, json, os, sys\n"
    "atexit.register(lambda: print(json.dumps({{'options': os.environ.get({variable!r}), "
    "'arrow_loaded': 'pyarrow' in sys.modules}}), file=sys.stderr))\n"
    "sys.argv = ['dpone', *{argv!r}]\n"
    "from {entry} import {function}\n"
    "{function}()\n"
)


@pytest.mark.parametrize(("entry", "function", "argv"), [
    ("dpone.cli._console", "dpone", ["deliver", "--help"]),  # pyarrow loads with the command
    ("dpone.cli._console", "executor", ["--help"]),  # pyarrow loads with the app module
])
def test_each_console_script_starts_arrow_allocator_with_the_product_options(
        entry: str, function: str, argv: list[str]) -> None:
    """Set before pyarrow loads (its jemalloc reads the options then, and never again)."""
    probe = _ALLOCATOR_PROBE.format(variable=OPTIONS_VARIABLE, argv=argv, entry=entry,
                                    function=function)
    env = {key: value for key, value in os.environ.items() if key != OPTIONS_VARIABLE}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            cwd=ROOT, env=env, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    state = json.loads(result.stderr.strip().splitlines()[-1])
    assert state == {"options": JEMALLOC_OPTIONS, "arrow_loaded": True}


def _unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """No options set, and none left behind in this test process when the test ends."""
    monkeypatch.setenv(OPTIONS_VARIABLE, "")
    monkeypatch.delenv(OPTIONS_VARIABLE)


def test_options_an_operator_set_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "pyarrow", raising=False)  # as before pyarrow loads
    monkeypatch.setenv(OPTIONS_VARIABLE, "narenas:4")
    assert start_arrow_allocator()
    assert os.environ[OPTIONS_VARIABLE] == "narenas:4"


def test_a_process_that_loaded_pyarrow_keeps_its_allocator(monkeypatch: pytest.MonkeyPatch) -> None:
    """Too late to choose: the host's options stay as they are, and the caller is told."""
    monkeypatch.setitem(sys.modules, "pyarrow", sys.modules.get("pyarrow", object()))
    _unset(monkeypatch)
    assert not start_arrow_allocator()
    assert OPTIONS_VARIABLE not in os.environ


def test_before_pyarrow_loads_the_product_options_are_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "pyarrow", raising=False)
    _unset(monkeypatch)
    assert start_arrow_allocator()
    assert os.environ[OPTIONS_VARIABLE] == JEMALLOC_OPTIONS
    assert JEMALLOC_OPTIONS.startswith("narenas:1,")
