"""A delivery refused entering SUBMITTING proceeds once the effect in its way is resolved.

On both journals: delivery A (revision 0 of a window) is accepted and its job is not verified
yet; delivery B (revision 1 of the same window) is refused entering SUBMITTING with
``REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT`` after publishing its first attempt's MAY_ATTEMPT
marker. Every rerun plans that same never-entered attempt again and publishes the identical
marker, so once A's job is verified B submits its first attempt and each delivery's mutation is
applied exactly once.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import pytest

from dpone.contracts import DponeError
from dpone.executor.supervisor import DeliveryCompleted
from support.common import EXAMPLES
from support.delivery import Harness, HarnessFactory

ONE_JOB = (dt.date(2026, 8, 1), dt.date(2026, 8, 4))  # one 3-day window


def _revised(root: Path, revision: int) -> Path:
    """The example registry whose async workload has ``correction_revision: revision``."""
    registry = root / f"registry-{revision}"
    shutil.copytree(EXAMPLES, registry)
    workload = registry / "workloads" / "measurements_async.yaml"
    text, replaced = re.subn(r"^(    generation_from: scheduled_interval\n)",
                             rf"\1    correction_revision: {revision}\n",
                             workload.read_text(encoding="utf-8"), flags=re.M)
    assert replaced == 1
    workload.write_text(text, encoding="utf-8")
    return registry


def _refused(b: Harness, in_flight: str) -> None:
    with pytest.raises(DponeError) as refused:
        b.run()
    assert refused.value.code == "REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT"
    assert refused.value.details["conflicting_operation_id"] == in_flight
    child = b.child(1)
    assert (child.state_name, child.attempt_ordinal) == ("sealed", 0)


def test_a_delivery_refused_by_an_accepted_job_delivers_once_the_job_is_verified(
        harness: HarnessFactory, tmp_path: Path) -> None:
    a = harness("async", ONE_JOB, store="a")
    a.fail_poll("status", status=503, times=a.plan.profile.snapshot.retry.observation.max_attempts)
    with pytest.raises(DponeError) as unanswered:
        a.run()
    assert unanswered.value.code == "receiver.unavailable"
    in_flight = a.child(1)
    assert in_flight.state_name == "accepted"
    b = harness("async", ONE_JOB, registry=_revised(tmp_path, 1), store="b")
    _refused(b, in_flight.operation_id)
    _refused(b, in_flight.operation_id)  # the same attempt, planned again, is refused again

    assert isinstance(a.run(), DeliveryCompleted)
    result = b.run()

    assert isinstance(result, DeliveryCompleted), result
    assert b.outcomes(1) == [(1, "submitting_async_receipt_accepted")]  # its first attempt
    ledger = b.ledger()
    assert ledger["requests"]["POST /mock/v1/dataset-jobs"] == 2
    assert [(m["key"], m["duplicate"]) for m in ledger["mutations"]] == [
        (a.sealed.mutation_key(1), False), (b.sealed.mutation_key(1), False)]
    assert a.sealed.mutation_key(1) != b.sealed.mutation_key(1)
