"""A duplicate answer (409) naming an existing job under the child's key.

It is that job's same-key receipt (adopted: polled read-only, never resent) when it echoes this
child's payload filename, or, when it echoes nothing to compare, when the profile's fence binds
the key to the payload and is certified in the environment. Otherwise it stays a bare duplicate
that keeps the job id, and the run's next command is the reconcile that reads that job."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace
from typing import cast

from dpone.cli._hints import Locators
from dpone.cli.delivery._delivery_result import next_command
from dpone.compiler import compile_workload
from dpone.contracts import RemoteEffect
from dpone.contracts.profile import OperationProfile
from dpone.contracts.sealed import SealedChild
from dpone.executor.supervisor import DeliveryBlocked, DeliveryCompleted
from dpone.executor.supervisor._submit import classify
from dpone.executor.transport import Response
from support.common import EXAMPLES
from support.supervisor import Supervised, reply

SEALED = cast(SealedChild, SimpleNamespace(
    request=SimpleNamespace(filename="measurements-0001.csv.gz"),
    identities=SimpleNamespace(delivery_key="sha256:" + "1" * 64,
                               receiver_mutation_key="sha256:" + "2" * 64)))
OP = "op_v1_" + "a" * 64


def _profile() -> OperationProfile:
    plan = compile_workload(EXAMPLES / "workloads" / "measurements_async.yaml", EXAMPLES).plan
    return plan.profile.snapshot


def _conflict(body: dict[str, object]) -> Response:
    return Response(status=409, headers={}, body=json.dumps(body).encode())


def test_an_echoed_filename_of_this_child_is_adopted_whatever_the_certification() -> None:
    answer = _conflict({"job_id": "job-7", "filename": "measurements-0001.csv.gz"})
    for bound in (False, True):
        kind, values = classify(_profile(), SEALED, answer, key_bound=bound)
        assert (kind, values["id"]) == ("duplicate_receipt_same_intent", "job-7")


def test_a_job_id_alone_is_adopted_only_under_a_certified_payload_bound_key() -> None:
    answer = _conflict({"job_id": "job-7"})

    assert classify(_profile(), SEALED, answer, key_bound=True)[0] == \
        "duplicate_receipt_same_intent"
    assert classify(_profile(), SEALED, answer, key_bound=False) == (
        "bare_duplicate", {"http_status": 409, "duplicate_job_id": "job-7"})


def test_another_payload_s_filename_is_never_adopted() -> None:
    answer = _conflict({"job_id": "job-8", "filename": "another.csv.gz"})

    assert classify(_profile(), SEALED, answer, key_bound=True) == (
        "bare_duplicate", {"http_status": 409, "duplicate_job_id": "job-8"})


def test_a_kept_job_id_makes_the_next_command_the_reconcile_that_reads_it() -> None:
    blocked = DeliveryBlocked(code="REST_DELIVERY_UNSAFE_RETRY", parent_id=OP,
                              operation_id=f"{OP}_0001", remote_effect=RemoteEffect.UNKNOWN,
                              evidence={"http_status": 409, "duplicate_job_id": "job-7"},
                              allowed_actions=("inspect_evidence", "reconcile_delivery_key"),
                              checkpoint_frontier=0)

    assert next_command(blocked, Locators(), wait=False) == (
        f"dpone delivery reconcile --operation-id {OP}_0001 --receipt-id job-7 --apply")


def test_a_job_id_alone_under_the_certified_fence_is_polled_and_verified(
        supervised: Callable[..., Supervised]) -> None:
    s = supervised("async")
    assert s.plan.fence.certified_in_environment  # the example's local-dev certification
    s.receiver.jobs["job-earlier"] = s.topology.children[0].request.filename or ""
    s.receiver.submits = [reply(409, {"job_id": "job-earlier"})]

    result = s.run()

    assert isinstance(result, DeliveryCompleted), result
    assert s.outcomes(1) == [(1, "submitting_duplicate_receipt_same_intent")]
    assert result.children[0].receipt["id"] == "job-earlier"
    assert str(s.receiver.requests[1].url).endswith("/dataset-jobs/job-earlier")
