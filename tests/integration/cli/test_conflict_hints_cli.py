"""What a refusal names next, on both journals: the delivery or operation it is about.

A changed source for keys already admitted is an intent conflict: its hint resumes the admitted
delivery, or, when that delivery is complete, inspects it and names the explicit way to deliver
new bytes. An unresolved effect that stops another delivery is the operation to inspect, and a
stale generation names the highest overlapping generation that refuses it.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from dpone.receiver import ReceiverThread
from support.cli import ONE_ASYNC_CHILD, Dpone, Run, posts

ONE_SYNC_CHILD = ("2026-08-01", "2026-08-08")
WINDOWS = {"measurements_async": ONE_ASYNC_CHILD, "measurements_sync": ONE_SYNC_CHILD}


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str) -> Dpone:
    return Dpone(registry, tmp_path / "state", journal=journal_url)


def _change_source(registry: Path) -> None:
    """Alter one row of 2026-08-01 in the registry's copy of the source file."""
    data = registry / "data" / "measurements.csv"
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[5].startswith("2026-08-01,")
    lines[5] = lines[5].replace(",", ",9", 1)
    data.write_text("".join(lines), encoding="utf-8")


def _revise(registry: Path, revision: int) -> None:
    """Set the async workload's correction_revision (0 removes it)."""
    workload = registry / "workloads" / "measurements_async.yaml"
    text = re.sub(r"^    correction_revision: \d+\n", "", workload.read_text(encoding="utf-8"),
                  flags=re.M)
    if revision:
        text, replaced = re.subn(r"^(    generation_from: scheduled_interval\n)",
                                 rf"\1    correction_revision: {revision}\n", text, flags=re.M)
        assert replaced == 1
    workload.write_text(text, encoding="utf-8")


def _run_printed(dpone: Dpone, printed: str) -> Run:
    """Run a printed `dpone ...` command as it is."""
    words = shlex.split(printed)
    assert words[0] == "dpone"
    return dpone(*words[1:], "--format", "json")


def _commands(text: str) -> list[str]:
    return re.findall(r"dpone delivery \w+ [^`]*?(?=\. |$)", text)


@pytest.mark.parametrize(("workload", "new_bytes"), [
    ("measurements_async", "raise the workload's sink.mutation.correction_revision"),
    ("measurements_sync", "An appended scope is delivered once")])
def test_a_changed_source_after_a_completed_delivery_points_to_inspect_not_resume(
        dpone: Dpone, registry: Path, receiver: ReceiverThread, workload: str,
        new_bytes: str) -> None:
    done = dpone.deliver(workload, WINDOWS[workload], "--wait", "--format", "json")
    assert done.code == 0 and done.json()["status"] == "completed", done.out + done.err
    parent_id = done.json()["parent_id"]
    _change_source(registry)

    run = dpone.deliver(workload, WINDOWS[workload], "--wait", "--format", "json")

    assert run.code == 2, run.out + run.err
    error = run.json()
    assert error["code"] == "REST_DELIVERY_INTENT_CONFLICT"
    hint = error["hint"]
    assert f"The admitted delivery {parent_id} of these keys is complete" in hint
    assert "delivery resume" not in hint
    assert new_bytes in hint and "docs/generations.md" in hint
    [printed] = _commands(hint)
    assert printed.startswith(f"dpone delivery inspect --operation-id {parent_id} --journal ")
    inspected = _run_printed(dpone, printed)
    assert inspected.code == 0, inspected.out + inspected.err
    assert inspected.json()["parent_id"] == parent_id and inspected.json()["complete"] is True


def test_a_changed_source_while_the_delivery_is_pending_resumes_its_parent(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    pending = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")
    assert pending.json()["status"] == "pending", pending.out + pending.err
    parent_id = pending.json()["parent_id"]
    _change_source(registry)

    run = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")

    assert run.code == 2, run.out + run.err
    [printed] = _commands(run.json()["hint"])
    assert printed.startswith(f"dpone delivery resume --operation-id {parent_id} --journal ")
    assert printed.endswith(" --apply")
    resumed = _run_printed(dpone, printed + " --wait")
    assert resumed.code == 0, resumed.out + resumed.err
    assert resumed.json()["status"] == "completed"
    assert posts(receiver) == 1


def test_an_unresolved_effect_in_the_domain_points_to_the_operation_to_reconcile(
        dpone: Dpone, receiver: ReceiverThread) -> None:
    receiver.state.faults.install([{"match": {"method": "POST", "path_prefix": "/mock/v1/batches/"},
                                    "fault": "commit_then_drop"}])
    first = dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json")
    assert first.code == 4, first.out + first.err
    unknown = first.json()["blocked"]["operation_id"]

    run = dpone.deliver("measurements_sync", ("2026-08-08", "2026-08-15"), "--format", "json")

    assert run.code == 4, run.out + run.err
    document = run.json()
    stopped = document["stopped"]
    assert stopped["code"] == "REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT"
    assert stopped["operation_id"] != unknown  # the stopped delivery's own child
    assert stopped["details"]["conflicting_operation_id"] == unknown
    assert document["next_command"].startswith(
        f"dpone delivery inspect --operation-id {unknown} --journal ")
    inspected = _run_printed(dpone, document["next_command"])
    assert inspected.code == 0, inspected.out + inspected.err
    assert inspected.json()["children"][0]["operation_id"] == unknown
    assert posts(receiver) == 1


def test_a_stale_generation_names_the_highest_overlapping_generation(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    """Revisions 0 and 1 of [2026-08-01, 2026-08-04) are delivered; revision 0 of
    [2026-08-01, 2026-08-03) is stale because of revision 1, the highest admitted."""
    for revision in (0, 1):
        _revise(registry, revision)
        done = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--wait", "--format", "json")
        assert done.code == 0 and done.json()["status"] == "completed", done.out + done.err
    newest = done.json()["children"][0]["operation_id"]
    _revise(registry, 0)

    run = dpone.deliver("measurements_async", ("2026-08-01", "2026-08-03"), "--format", "json")

    assert run.code == 2, run.out + run.err
    error = run.json()
    assert error["code"] == "REST_DELIVERY_STALE_GENERATION"
    assert error["message"] == ("generation (2026-08-04T00:00:00+00:00, 1) is admitted for an "
                                "overlapping scope; (2026-08-03T00:00:00+00:00, 0) is stale")
    assert error["details"]["conflicting_operation_id"] == newest
    assert posts(receiver) == 2


def test_a_lower_generation_in_flight_points_to_its_operation(
        dpone: Dpone, registry: Path, receiver: ReceiverThread) -> None:
    pending = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")
    assert pending.json()["status"] == "pending", pending.out + pending.err
    in_flight = pending.json()["children"][0]["operation_id"]
    _revise(registry, 1)

    run = dpone.deliver("measurements_async", ONE_ASYNC_CHILD, "--format", "json")

    assert run.code == 4, run.out + run.err
    document = run.json()
    stopped = document["stopped"]
    assert stopped["code"] == "REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT"
    assert stopped["details"]["conflicting_operation_id"] == in_flight
    assert in_flight in stopped["message"]
    assert document["next_command"].startswith(
        f"dpone delivery inspect --operation-id {in_flight} --journal ")
    inspected = _run_printed(dpone, document["next_command"])
    assert inspected.code == 0, inspected.out + inspected.err
    assert inspected.json()["children"][0]["operation_id"] == in_flight
    assert posts(receiver) == 1
