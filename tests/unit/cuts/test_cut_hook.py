"""The process-cut hook: off unless DPONE_TEST_CUT names a point; then it fires once, at exactly
that point and occurrence, and nowhere else."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from dpone.artifacts import LocalArtifactStore
from dpone.cli.delivery._delivery_run import delivery_ports
from dpone.compiler import compile_workload
from dpone.contracts import DponeError
from dpone.contracts.journal import SupervisorJournal
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.executor.cuts import (
    CUT_ENV,
    PASSAGE_PREFIX,
    TRACE,
    Cut,
    CutHook,
    CuttingArtifacts,
    CuttingJournal,
    When,
    cut_points,
    hook_from,
    parse_cut,
)
from dpone.executor.transport import HttpTransport, Response
from support.common import EXAMPLES, ROOT
from support.transport import binding, credential, post


class Killed(Exception):
    """Raised by :class:`RecordingHook` instead of a SIGKILL: the passage at which it fired."""


class RecordingHook(CutHook):
    """A hook for ``spec`` that records every passage and raises :class:`Killed` instead of
    killing the process."""

    def __init__(self, spec: str) -> None:
        super().__init__(parse_cut(spec, cut_points()), kill=self._killed)
        self.log: list[str] = []

    def __call__(self, when: When, point: str) -> None:
        self.log.append(f"{when}:{point}")
        super().__call__(when, point)

    def _killed(self) -> None:
        raise Killed(self.log[-1])


def test_unset_or_empty_variable_makes_no_hook() -> None:
    assert hook_from({}, cut_points()) is None
    assert hook_from({CUT_ENV: ""}, cut_points()) is None


@pytest.mark.parametrize("spec", ["after:submiting", "during:submitting", "after:submitting@0",
                                  "after:send@x", "before:response", "after:transition.nothing"])
def test_a_cut_the_code_does_not_have_is_refused(spec: str) -> None:
    with pytest.raises(DponeError) as refused:
        hook_from({CUT_ENV: spec}, cut_points())
    assert refused.value.code == "input.invalid_argument"
    assert "after:submitting" in refused.value.message  # the known points are listed


def test_parse_reads_point_and_occurrence() -> None:
    assert parse_cut("before:send@2", cut_points()) == Cut("before", "send", 2)
    assert parse_cut("after:transition.observation", cut_points()) == Cut(
        "after", "transition.observation", 1)


def test_the_hook_fires_only_at_its_point_and_occurrence() -> None:
    hook = RecordingHook("after:submitting@2")
    hook("before", "submitting")
    hook("after", "submitting")
    hook("after", "attempt_plan")
    hook("before", "submitting")
    with pytest.raises(Killed) as killed:
        hook("after", "submitting")
    assert str(killed.value) == "after:submitting"
    assert hook.passages[("after", "submitting")] == 2
    hook("after", "submitting")  # the third passage is not the named one: nothing happens


def test_a_fired_cut_kills_the_process_with_sigkill(tmp_path: Path) -> None:
    script = ("from dpone.executor.cuts import hook_from, cut_points\n"
              "import os\n"
              "hook = hook_from(os.environ, cut_points())\n"
              "hook('before', 'send')\n"
              "print('survived one', flush=True)\n"
              "try:\n"
              "    hook('before', 'send')\n"
              "finally:\n"
              "    print('finally ran', flush=True)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT), CUT_ENV: "before:send@2"})
    assert done.returncode == -signal.SIGKILL
    assert done.stdout == "survived one\n"  # no finally block ran
    assert "test cut before:send@2" in done.stderr


def test_transport_tells_send_boundary_in_order() -> None:
    hook = RecordingHook("after:response@2")
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        request.read()
        seen.append(hook.log[-1])  # the body was read: the last cut passage before the answer
        return httpx.Response(202, json={"job_id": "j"})

    with HttpTransport(binding(), credential(), transport=httpx.MockTransport(handler),
                       cut=hook) as transport:
        outcome = transport.send(post(body=b"abc"))
    assert isinstance(outcome, Response)
    assert seen == ["after:send"]
    assert hook.log == ["before:send", "after:send", "after:response"]


def test_transport_without_a_hook_sends_as_before() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(202, content=request.read())

    with HttpTransport(binding(), credential(), transport=httpx.MockTransport(handler)) as transport:
        outcome = transport.send(post(body=b"abc"))
    assert isinstance(outcome, Response) and outcome.body == b"abc"


@contextmanager
def _ports(tmp_path: Path) -> Iterator[tuple[ImmutableArtifactPort, SupervisorJournal,
                                             ImmutableArtifactPort]]:
    """The store, and the journal and store a run drives."""
    plan = compile_workload(EXAMPLES / "workloads" / "measurements_sync.yaml", EXAMPLES).plan
    store = LocalArtifactStore(tmp_path / "artifacts")
    with delivery_ports(plan, str(tmp_path / "journal.sqlite3"), store,
                        environment_id="local-dev", announce="test") as (_, journal, _, run_store):
        yield store, journal, run_store


def test_delivery_ports_wrap_nothing_when_the_variable_is_unset(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CUT_ENV, raising=False)
    with _ports(tmp_path) as (store, journal, run_store):
        assert run_store is store
        assert not isinstance(journal, CuttingJournal)


def test_delivery_ports_wrap_journal_and_store_when_a_cut_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CUT_ENV, "after:marker")
    with _ports(tmp_path) as (_, journal, run_store):
        assert isinstance(journal, CuttingJournal)
        assert isinstance(run_store, CuttingArtifacts)


def test_trace_names_every_passage_and_cuts_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    hook = hook_from({CUT_ENV: TRACE}, cut_points())
    assert hook is not None and hook.cut is None
    hook("before", "submitting")
    hook("before", "submitting")
    hook("after", "send")
    assert capfd.readouterr().err.splitlines() == [
        f"{PASSAGE_PREFIX}before:submitting@1", f"{PASSAGE_PREFIX}before:submitting@2",
        f"{PASSAGE_PREFIX}after:send@1"]
