"""The shipped contract passes every check and encodes the specification's frozen decisions."""

from __future__ import annotations

import json
import tomllib
from importlib.resources import files
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from dpone.compiler.design_contract import (
    SPEC_ERROR_CODES,
    check_contract,
    contract_json_schema,
    package_error_codes,
    shipped_contract_bytes,
)
from dpone.contracts import (
    ERROR_CATALOG,
    AcknowledgementState,
    CheckpointState,
    ExecutionState,
    RemoteEffect,
    VerificationState,
)
from dpone.contracts.design import load_state_contract
from dpone.contracts.state import LeaseKind, StateContract, TriggerKind
from support.common import ROOT

DESIGN = files("dpone.contracts").joinpath("design")
EXPECTED_CHECKS = [
    "schema", "axes_match_runtime", "tuples_well_formed", "transitions_name_legal_tuples",
    "reachability", "terminal_closure", "terminal_tuples", "acknowledgement_preservation",
    "remote_effect_guards", "verification_guards", "model_invariants", "retry_wait_guard",
    "continuation_poll_receipt_only", "cas_and_leases", "monotonic_fields", "failure_mapping",
    "error_catalog", "runtime_contract",
]


def test_every_check_passes_on_the_shipped_contract(shipped_report) -> None:
    assert [c.id for c in shipped_report.checks] == EXPECTED_CHECKS
    assert [c.status for c in shipped_report.checks] == ["PASS"] * len(EXPECTED_CHECKS)
    assert shipped_report.error is None
    document = shipped_report.to_document()
    assert document["status"] == "PASS"
    assert document["contract"]["schema_id"] == "dpone.rest-bulk-delivery-design.v1"
    report_schema = json.loads(DESIGN.joinpath("design-contract-report.v1.schema.json")
                               .read_text("utf-8"))
    Draft202012Validator(report_schema).validate(document)


def test_axes_equal_the_runtime_enums(shipped_report) -> None:
    axes = shipped_report.data["axes"]
    for name, enum in [("execution_state", ExecutionState), ("remote_effect", RemoteEffect),
                       ("acknowledgement_state", AcknowledgementState),
                       ("verification_state", VerificationState),
                       ("checkpoint_state", CheckpointState)]:
        assert axes[name] == [member.value for member in enum]


def test_error_catalog_equals_the_runtime_catalog(shipped_report) -> None:
    data = shipped_report.data
    entries = {entry["code"]: entry for entry in data["error_catalog"]}
    runtime = {code: spec for code, spec in ERROR_CATALOG.items()
               if code.startswith("REST_DELIVERY_")}
    assert set(entries) == set(runtime) == SPEC_ERROR_CODES == set(data["stable_error_codes"])
    assert len(SPEC_ERROR_CODES) == 13
    for code, spec in runtime.items():
        assert entries[code] == {
            "code": code, "exit_class": int(spec.exit_class),
            "retryability": spec.retryability.value, "operator_action": spec.operator_action,
            "severity": spec.severity.value, "evidence": spec.evidence.value,
        }


def _objects(node: Any, path: str = "#") -> list[tuple[str, dict[str, Any]]]:
    found = []
    if isinstance(node, dict):
        if node.get("type") == "object" or "properties" in node:
            found.append((path, node))
        for key, value in node.items():
            found += _objects(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _objects(value, f"{path}/{i}")
    return found


def test_schemas_are_draft_2020_12_and_closed_on_every_object() -> None:
    for schema in (contract_json_schema(),
                   json.loads(DESIGN.joinpath("design-contract-report.v1.schema.json")
                              .read_text("utf-8"))):
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        objects = _objects(schema)
        assert len(objects) >= 5
        open_objects = [p for p, obj in objects if obj.get("additionalProperties") is not False]
        assert open_objects == []


def test_initial_tuple_and_counts(contract: StateContract) -> None:
    assert contract.initial_tuple.render() == "PLANNED/NONE_PROVEN/NOT_ACCEPTED/NOT_RUN/BLOCKED"
    assert len(contract.tuples) == 64
    assert len(set(contract.tuples.values())) == 64
    assert all(contract.tuples[name].execution_state is ExecutionState.FINALIZED
               for name in contract.terminal)


def _only(contract: StateContract, source: str, evidence: str) -> list[str]:
    return [t.target for t in contract.outgoing(source) if t.trigger.evidence == evidence]


def test_safe_retry_path_is_guarded_and_advances_the_attempt_ordinal(contract) -> None:
    into = {t.id: t for t in contract.transitions.values() if t.target == "retry_wait"}
    assert sorted(into) == ["submitting_not_started_retry", "submitting_rejected_before_effect"]
    assert into["submitting_not_started_retry"].trigger.evidence == "REQUEST_NOT_STARTED"
    assert {"request_not_started_proof", "retry_budget_remaining"} <= into[
        "submitting_not_started_retry"].requires
    rejected = into["submitting_rejected_before_effect"]
    assert (rejected.source, rejected.trigger.evidence) == ("submitting", "REJECTED_BEFORE_EFFECT")
    assert {"response_recorded", "rejection_certified_before_effect"} <= rejected.requires
    assert rejected.lease is LeaseKind.MUTATION
    due = contract.transitions["retry_wait_due"]
    assert (due.source, due.target, due.advances) == ("retry_wait", "submitting",
                                                       ("attempt_ordinal",))
    assert "retry_budget_remaining" in due.requires and due.lease is LeaseKind.MUTATION
    final = contract.transitions["submitting_not_started_final"]
    assert final.target in contract.terminal and "retry_unavailable" in final.requires


def test_sync_async_and_certified_replay_paths(contract) -> None:
    assert _only(contract, "submitting", "SYNC_SUCCESS_WITH_COUNTERS") == ["verifying_succeeded"]
    assert _only(contract, "submitting", "REQUEST_MAY_HAVE_REACHED_RECEIVER") == [
        "final_not_accepted_unknown_unverified"]
    assert _only(contract, "submitting", "ASYNC_RECEIPT_PERSISTED") == ["accepted"]
    assert contract.tuples["accepted"].render() == "ACCEPTED/UNDETERMINED/ACCEPTED/NOT_RUN/BLOCKED"
    replay = contract.transitions["submitting_fenced_replay"]
    assert "certified_remote_fence" in replay.requires and replay.advances == ("attempt_ordinal",)
    assert contract.transitions["replay_again"].source == "submitting_fenced_replay"


def test_a_throttle_beyond_the_budget_ends_unknown_without_replay(contract) -> None:
    for transition_id, source in (("submitting_throttled_beyond_budget", "submitting"),
                                  ("replay_throttled_beyond_budget", "submitting_fenced_replay")):
        throttled = contract.transitions[transition_id]
        assert (throttled.source, throttled.target) == (
            source, "final_not_accepted_unknown_unverified")
        assert throttled.automatic and throttled.lease is LeaseKind.MUTATION
        assert (throttled.trigger.kind, throttled.trigger.evidence) == (
            TriggerKind.SUBMIT_RESPONSE, "RETRY_AFTER_EXCEEDS_BUDGET")
        assert throttled.requires == frozenset({"response_recorded", "retry_unavailable"})
        assert throttled.advances == ()
        assert throttled.error_codes == ("REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET",)
        assert _only(contract, source, "RETRY_AFTER_EXCEEDS_BUDGET") == [
            "final_not_accepted_unknown_unverified"]


def test_acknowledgement_is_preserved_through_effect_resolution(contract) -> None:
    finals: dict[str, set[str]] = {}
    for state in contract.tuples.values():
        if state.execution_state is ExecutionState.FINALIZED:
            finals.setdefault(state.acknowledgement_state.value, set()).add(
                state.remote_effect.value)
    four = {"NONE_PROVEN", "FULLY_APPLIED", "PARTIALLY_APPLIED", "UNKNOWN"}
    assert finals.pop("SUCCEEDED") == four - {"NONE_PROVEN"}
    assert finals == dict.fromkeys(["NOT_ACCEPTED", "ACCEPTED", "FAILED", "CANCELLED", "EXPIRED",
                                    "PROTOCOL_UNKNOWN"], four)
    found_running = []
    for transition in contract.transitions.values():
        if transition.automatic:
            continue
        if transition.trigger.evidence == "RECEIPT_FOUND_RUNNING":
            # A receipt the operator found and polled read-only: the receiver's own answer
            # (a running job) becomes the acknowledgement and poll_receipt continues.
            found_running.append(transition.source)
            assert transition.target == "waiting"
            assert "receipt_persisted" in transition.requires
            continue
        assert (contract.tuples[transition.source].acknowledgement_state
                == contract.tuples[transition.target].acknowledgement_state)
    assert sorted(found_running) == ["reconciling_accepted_unknown",
                                     "reconciling_not_accepted_unknown",
                                     "reconciling_protocol_unknown_unknown"]


def test_unknown_leaves_only_by_operator_reconciliation(contract) -> None:
    for transition in contract.transitions.values():
        source = contract.tuples[transition.source]
        target = contract.tuples[transition.target]
        if source.remote_effect is RemoteEffect.UNKNOWN and target.remote_effect != source.remote_effect:
            assert not transition.automatic and transition.lease is LeaseKind.OPERATOR
            assert transition.reconciliation is not None and transition.reconciliation.value == "resolve"


def test_every_finalized_unknown_or_partial_tuple_can_be_reopened(contract) -> None:
    for name, state in contract.tuples.items():
        if (state.execution_state is ExecutionState.FINALIZED
                and state.remote_effect in {RemoteEffect.UNKNOWN, RemoteEffect.PARTIALLY_APPLIED}):
            reopen = [t for t in contract.outgoing(name) if not t.automatic]
            assert len(reopen) == 1, name
            target = contract.tuples[reopen[0].target]
            assert target.execution_state is ExecutionState.VERIFYING
            assert reopen[0].reconciliation is not None and reopen[0].reconciliation.value == "open"


def test_cancellation_is_observed_never_invoked(contract) -> None:
    assert contract.continuation_kinds == ("poll_receipt",)
    for transition in contract.transitions.values():
        target = contract.tuples[transition.target]
        if target.acknowledgement_state is AcknowledgementState.CANCELLED and (
                contract.tuples[transition.source].acknowledgement_state
                is not AcknowledgementState.CANCELLED):
            assert transition.trigger.kind is TriggerKind.OBSERVATION
            assert transition.continuation == "poll_receipt"


def test_promotion_is_checkpoint_leased_from_every_eligible_tuple(contract) -> None:
    eligible = [n for n, s in contract.tuples.items()
                if s.checkpoint_state is CheckpointState.ELIGIBLE]
    assert len(eligible) == 7
    for name in eligible:
        (promote,) = contract.outgoing(name)
        assert promote.lease is LeaseKind.CHECKPOINT
        assert promote.advances == ("checkpoint_frontier",)
        assert contract.tuples[promote.target].checkpoint_state is CheckpointState.PROMOTED


def test_load_state_contract_is_cached() -> None:
    assert load_state_contract() is load_state_contract()


def test_contract_and_schema_ship_as_package_data() -> None:
    assert DESIGN.joinpath("__init__.py").is_file()
    assert DESIGN.joinpath("rest-bulk-delivery-design.v1.schema.json").is_file()
    assert shipped_contract_bytes().startswith(b"# The delivery state machine")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["*"]
    assert {"*.yaml", "*.json"} <= set(patterns)


def test_package_scan_counts_literals_and_comments_not_identifiers(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "fixtures").mkdir()
    (package / "a.py").write_text(
        '__all__ = ["REST_DELIVERY_ERRORS"]\nREST_DELIVERY_ERRORS = ("REST_DELIVERY_UNSAFE_RETRY",)\n'
        "# raises REST_DELIVERY_COUNT_MISMATCH\n", encoding="utf-8")
    (package / "sub" / "b.yaml").write_text("code: REST_DELIVERY_STALE_GENERATION\n")
    (package / "fixtures" / "c.yaml").write_text("code: REST_DELIVERY_FIXTURE_ONLY\n")
    found = package_error_codes(package)
    assert set(found) == {"REST_DELIVERY_UNSAFE_RETRY", "REST_DELIVERY_COUNT_MISMATCH",
                          "REST_DELIVERY_STALE_GENERATION"}
    assert found["REST_DELIVERY_STALE_GENERATION"] == "dpone/sub/b.yaml"


def test_installed_package_references_only_stable_codes() -> None:
    found = package_error_codes()
    assert set(found) == SPEC_ERROR_CODES


def test_schema_failure_skips_the_semantic_checks(shipped_report) -> None:
    raw = b"schema: dpone.rest-bulk-delivery-design.v1\ntitle: only a title\n"
    report = check_contract(raw, "tiny.yaml")
    statuses = {c.id: c.status for c in report.checks}
    assert statuses.pop("schema") == "FAIL"
    assert set(statuses.values()) == {"SKIPPED"}
    error = report.error
    assert error is not None and error.code == "contract.schema_invalid"
    assert report.to_document()["summary"] == {"passed": 0, "failed": 1,
                                               "skipped": len(EXPECTED_CHECKS) - 1}
