"""A delivery stopped before SUBMITTING by an overlapping effect proceeds once it is resolved.

Delivery A (revision 0 of a window) is accepted and its job is still running; delivery B
(revision 1 of the same window) is admitted but refused entering SUBMITTING with
``REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT``. Each refused run planned B's first attempt and
published its MAY_ATTEMPT marker; the rerun plans the same never-entered attempt again and must
publish the identical marker, so once A's job is verified B's rerun (``deliver`` or
``delivery resume --apply``) submits and delivers exactly once, on both journals.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dpone.receiver import ReceiverThread
from support.cli import ONE_ASYNC_CHILD, Dpone, Run, posts


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal=journal_url)


def _revise(registry: Path, revision: int) -> None:
    """Set the async workload's correction_revision."""
    workload = registry / "workloads" / "measurements_async.yaml"
    text, replaced = re.subn(r"^(    generation_from: scheduled_interval\n)",
                             rf"\1    correction_revision: {revision}\n",
                             workload.read_text(encoding="utf-8"), flags=re.M)
    assert replaced == 1
    workload.write_text(text, encoding="utf-8")


def _refused_by(run: Run, in_flight: str) -> str:
    """B's stopped child, refused before SUBMITTING because of ``in_flight``."""
    assert run.code == 4, run.out + run.err
    stopped = run.json()["stopped"]
    assert stopped["code"] == "REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT", run.out
    assert stopped["details"]["conflicting_operation_id"] == in_flight
    return str(stopped["operation_id"])


@pytest.mark.parametrize("rerun", ["deliver", "resume"])
def test_a_delivery_refused_by_an_effect_in_flight_proceeds_once_it_is_verified(
        dpone: Dpone, registry: Path, receiver: ReceiverThread, rerun: str) -> None:
    first = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")
    assert first.json()["status"] == "pending", first.out + first.err
    in_flight = first.json()["children"][0]["operation_id"]
    _revise(registry, 1)
    refused = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")
    stopped = _refused_by(refused, in_flight)
    # Rerunning while A is still in flight plans B's same never-entered attempt again.
    _refused_by(dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json"),
                in_flight)
    assert posts(receiver) == 1

    done = dpone.resume(first.json()["parent_id"], "--apply", "--wait", "--format", "json")
    assert done.code == 0 and done.json()["status"] == "completed", done.out + done.err
    if rerun == "deliver":
        run = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--wait", "--format", "json")
    else:
        run = dpone.resume(refused.json()["parent_id"], "--apply", "--wait", "--format", "json")

    assert run.code == 0, run.out + run.err
    assert run.json()["status"] == "completed"
    assert [child["operation_id"] for child in run.json()["children"]] == [stopped]
    ledger = receiver.state.ledger.snapshot()
    assert posts(receiver) == 2
    assert (ledger["mutations_total"], ledger["duplicate_mutations"]) == (2, 0)
    assert len({mutation["key"] for mutation in ledger["mutations"]}) == 2
