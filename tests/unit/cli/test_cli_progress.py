"""Progress on stderr stays bounded whatever the number of children: plain lines when stderr
is not a terminal, a live bar when it is; a large delivery counts finished children."""

from __future__ import annotations

import datetime as dt
import io

import pytest

from dpone.cli._progress import MAX_LINES, Progress
from dpone.cli.delivery._delivery_run import SealedShape, StepPrinter
from dpone.contracts.children import ChildDescriptor
from dpone.contracts.design import load_state_contract
from dpone.contracts.journal import ChildOperation
from dpone.contracts.sealed import SealedChild
from dpone.executor.supervisor import RetryWait


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("total", [1, 7, MAX_LINES, MAX_LINES + 1, 1_079, 117_865])
def test_plain_progress_prints_at_most_max_lines_and_always_the_last(total: int) -> None:
    stream = io.StringIO()
    progress = Progress("sealing", "sealed child", stream)
    for done in range(1, total + 1):
        progress(done, total)
    progress.close()

    lines = stream.getvalue().splitlines()
    assert len(lines) == min(total, MAX_LINES)
    assert lines[-1] == f"sealed child {total}/{total}"
    done = [int(line.split()[-1].split("/")[0]) for line in lines]
    assert done == sorted(set(done))


def test_a_terminal_gets_a_bar_not_a_line_per_child() -> None:
    stream = _Terminal()
    progress = Progress("sealing", "sealed child", stream)
    for done in range(1, 2_001):
        progress(done, 2_000)
    progress.note("a note above the bar")
    progress.close()

    shown = stream.getvalue()
    assert "2000/2000" in shown and "a note above the bar" in shown
    assert "sealed child 1/2000" not in shown


def _shape(total: int) -> SealedShape:
    day = dt.date(2026, 8, 1)
    children = tuple(SealedChild.model_construct(descriptor=ChildDescriptor.model_construct(
        ordinal=n, scope_from=day, scope_to=day + dt.timedelta(days=1))) for n in range(1, total + 1))
    return SealedShape(day, day + dt.timedelta(days=1), children, total)


def _finished(ordinal: int) -> ChildOperation:
    return ChildOperation.model_construct(
        ordinal=ordinal, state_name="final_succeeded_full_promoted", receipt=None,
        attempt_ordinal=1, axes=load_state_contract().tuples["final_succeeded_full_promoted"])


def test_a_large_delivery_counts_finished_children_in_bounded_lines(
        capsys: pytest.CaptureFixture[str]) -> None:
    total = 1_500
    printer = StepPrinter(_shape(total))
    for ordinal in range(1, total + 1):
        for transition in ("enter_submitting", "submitting_sync_success", "verified"):
            printer(_finished(ordinal), transition)
    printer.wait(RetryWait(operation_id="op", ordinal=7, action="poll_receipt",
                           reason="HTTP 503", attempt=1, max_attempts=20, delay_s=1.25,
                           next_attempt_at=dt.datetime(2026, 8, 1, 12, 0, 1, tzinfo=dt.UTC)))
    printer.close()

    lines = capsys.readouterr().err.splitlines()
    finished = [line for line in lines if line.startswith("finished child ")]
    assert len(finished) == MAX_LINES and finished[-1] == f"finished child {total}/{total}"
    assert ("  child 7/1500 [2026-08-01, 2026-08-02) receipt poll failed (1 of 20 in a row) "
            "(HTTP 503); next poll at 2026-08-01T12:00:01Z (in 1.2 s)") in lines
    assert len(lines) == MAX_LINES + 1
