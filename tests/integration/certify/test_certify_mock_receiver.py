"""The mock receiver certifies PASS on what it really does, and each variant that contradicts
one claim of the async profile fails exactly the case that tests that claim."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpone.contracts.certification import FENCE_CASES
from dpone.executor.certify import applies
from support.certify import (
    ASYNC,
    SYNC,
    certify,
    edit,
    mock_receiver,
    reason,
    registry_for,
    short_receipt_ttl,
    verdicts,
    written,
)
from support.cli import posts, receiver_requests

KEY_CASES = ("key_retention", "key_payload_binding", "concurrent_duplicates")


def test_the_mock_certifies_pass_on_every_case_the_async_profile_claims(tmp_path: Path) -> None:
    with mock_receiver(receipt_ttl_seconds=2.0) as receiver:
        dpone = registry_for(tmp_path, receiver)
        short_receipt_ttl(dpone.registry, 2)

        run = certify(dpone, ASYNC, "local-live", "--retention-delay", "0.5")

        assert run.code == 0, run.out + run.err
        certification = written(dpone, ASYNC)
        assert certification.result == "PASS"
        assert all(case.verdict == "PASS" for case in certification.cases), verdicts(
            certification)
        assert certification.measured("key_retention", "retention_tested_s") == 0
        assert "HTTP 410" in reason(certification, "receipt_ttl")
        assert f"{ASYNC} through mock_measurements in local-dev at local-live" in run.out
        assert "case" in run.out and "claim" in run.out and "verdict" in run.out
        # every live submit went to the receiver's dataset jobs, with synthetic rows only
        assert receiver.state.ledger.snapshot()["mutations_total"] >= 1


def test_the_example_profile_is_unverified_only_where_its_receipt_ttl_outlasts_the_wait(
        tmp_path: Path) -> None:
    with mock_receiver() as receiver:
        dpone = registry_for(tmp_path, receiver)

        run = certify(dpone, ASYNC, "local-live", "--retention-delay", "1", "--max-wait", "5")

    assert run.code == 0, run.out + run.err
    certification = written(dpone, ASYNC)
    assert certification.result == "UNVERIFIED"
    assert {case: v for case, v in verdicts(certification).items() if v != "PASS"} == {
        "receipt_ttl": "UNVERIFIED"}
    assert "86400 s is beyond --max-wait 5 s" in reason(certification, "receipt_ttl")
    assert certification.measured("key_retention", "retention_tested_s") == 1
    assert all(certification.verdict(case) == "PASS" for case in FENCE_CASES)


def test_a_receiver_that_forgets_keys_after_one_second_fails_key_retention_only(
        tmp_path: Path) -> None:
    with mock_receiver(forget_keys_after_seconds=1.0) as receiver:
        dpone = registry_for(tmp_path, receiver)

        run = certify(dpone, ASYNC, "local-live", "--max-wait", "5")

    assert run.code == 1, run.out + run.err
    certification = written(dpone, ASYNC)
    assert certification.result == "FAIL"
    assert [case for case, v in verdicts(certification).items() if v == "FAIL"] == [
        "key_retention"]
    assert "was accepted as new" in reason(certification, "key_retention")
    assert certification.measured("key_retention", "retention_tested_s") is None
    assert "the receiver contradicts these claims of the profile:\n  key_retention: " \
           "mutation_fence.type: receiver_duplicate_key" in run.out


def test_a_receiver_that_takes_the_same_key_with_other_bytes_fails_key_payload_binding_only(
        tmp_path: Path) -> None:
    with mock_receiver(rebind_keys=True) as receiver:
        dpone = registry_for(tmp_path, receiver)

        run = certify(dpone, ASYNC, "local-live", "--retention-delay", "0.5", "--max-wait", "5")

    assert run.code == 1, run.out + run.err
    certification = written(dpone, ASYNC)
    assert [case for case, v in verdicts(certification).items() if v == "FAIL"] == [
        "key_payload_binding"]
    assert "the key is not bound to the payload" in reason(certification, "key_payload_binding")
    assert "  key_payload_binding: mutation_fence.key_payload_binding: required" in run.out


def test_a_receiver_whose_receipts_expire_before_the_claim_fails_receipt_ttl_only(
        tmp_path: Path) -> None:
    with mock_receiver(receipt_ttl_seconds=1.0) as receiver:
        dpone = registry_for(tmp_path, receiver)
        short_receipt_ttl(dpone.registry, 4)

        run = certify(dpone, ASYNC, "local-live", "--retention-delay", "0.5", "--max-wait", "8")

    assert run.code == 1, run.out + run.err
    certification = written(dpone, ASYNC)
    assert [case for case, v in verdicts(certification).items() if v == "FAIL"] == [
        "receipt_ttl"]
    assert "the profile claims 4 s" in reason(certification, "receipt_ttl")


def test_without_a_query_by_key_read_after_write_consistency_is_unverified_never_pass(
        tmp_path: Path) -> None:
    with mock_receiver() as receiver:
        dpone = registry_for(tmp_path, receiver)
        edit(dpone.registry / "profiles" / f"{ASYNC}.yaml",
             r"^  # Read-only lookup of the job.*?skew_margin_s: 60\n", "")

        run = certify(dpone, ASYNC, "local-live", "--retention-delay", "0.5", "--max-wait", "5")

    assert run.code == 0, run.out + run.err
    certification = written(dpone, ASYNC)
    assert certification.verdict("query_consistency") == "UNVERIFIED"
    assert reason(certification, "query_consistency") == (
        "not applicable: the profile declares no query by key")
    assert not any("dataset-job-keys" in line for line in receiver_requests(receiver))


def test_the_sync_profile_claims_no_fence_so_its_key_cases_are_unverified(
        tmp_path: Path) -> None:
    with mock_receiver() as receiver:
        dpone = registry_for(tmp_path, receiver)

        run = certify(dpone, SYNC, "local-live")

        assert run.code == 0, run.out + run.err
        assert receiver_requests(receiver) == {"POST /mock/v1/batches/dpone_certification": 1}
    certification = written(dpone, SYNC)
    for case in KEY_CASES:
        assert certification.verdict(case) == "UNVERIFIED"
        assert reason(certification, case) == (
            "not applicable: the profile claims no fence (mutation_fence.type: none)")
    assert certification.verdict("operation_duration") == "PASS"
    assert certification.verdict("clock_skew") == "PASS"
    assert certification.result == "PASS"
    assert [case.case for case in certification.cases if applies(case)] == [
        "static_profile", "operation_duration", "clock_skew"]


def test_level_static_sends_nothing_and_needs_no_credential(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DPONE_CONN_MOCK_MEASUREMENTS_TOKEN")
    with mock_receiver() as receiver:
        dpone = registry_for(tmp_path, receiver)

        run = certify(dpone, ASYNC, "static")

        assert run.code == 0, run.out + run.err
        assert receiver.state.ledger.snapshot()["requests"] == {}
        assert receiver.state.exchanges.snapshot() == []
        assert posts(receiver) == 0
    certification = written(dpone, ASYNC, "static")
    assert certification.result == "PASS"
    assert certification.verdict("static_profile") == "PASS"
    assert all(case.verdict == "UNVERIFIED" and case.evidence == ()
               for case in certification.cases if case.case != "static_profile")
    assert "next: dpone profile certify mock.dataset-jobs@1" in run.out
    assert run.out.rstrip().endswith("--level local-live")
