"""Negative fixtures: mutated copies of the shipped contract, each caught by its named check.

The semantic fixtures are small snippet edits of the shipped contract applied at test time (the
contract is long; `apply_edits` refuses a snippet that does not occur exactly once, so a fixture
cannot silently stop mutating anything). The byte-level fixtures are literal files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from support.design import FIXTURES, line_of, run_check

_CAS_OBS = "    cas: {expected_revision: true, journal_epoch: true, lease: observation}\n"


@dataclass(frozen=True)
class Case:
    id: str
    edits: tuple[tuple[str, str], ...]
    check: str
    finding: str
    at: str | None = None  # a snippet of the mutated text the finding's line must point at
    code: str = "contract.semantic_invalid"


CASES = (
    Case("unreachable_tuple",
         (("  - {name: waiting, execution_state: WAITING,",
           "  - {name: orphan_queued, execution_state: WAITING, remote_effect: UNDETERMINED, "
           "acknowledgement_state: ACCEPTED, verification_state: NOT_RUN, checkpoint_state: "
           "BLOCKED}\n  - {name: waiting, execution_state: WAITING,"),),
         "reachability", "tuple 'orphan_queued' is unreachable", "{name: orphan_queued"),
    Case("no_path_to_terminal",
         (("  - {name: waiting, execution_state: WAITING,",
           "  - {name: waiting_stuck, execution_state: WAITING, remote_effect: UNDETERMINED, "
           "acknowledgement_state: ACCEPTED, verification_state: NOT_RUN, checkpoint_state: "
           "BLOCKED}\n  - {name: waiting, execution_state: WAITING,"),
          ("  - id: accepted_poll_queued\n    from: accepted\n    to: accepted\n",
           "  - id: accepted_poll_queued\n    from: accepted\n    to: waiting_stuck\n")),
         "terminal_closure", "tuple 'waiting_stuck' has no path to a terminal tuple",
         "{name: waiting_stuck"),
    Case("transition_names_illegal_tuple",
         (("    from: verifying_failed\n    to: final_failed_partial\n",
           "    from: verifying_failed\n    to: final_failed_partially\n"),),
         "transitions_name_legal_tuples", "to 'final_failed_partially' is not a legal tuple",
         "to: final_failed_partially"),
    Case("automatic_transition_rewrites_acknowledgement",
         (("  - id: submitting_mutation_lease_lost\n    from: submitting\n"
           "    to: final_not_accepted_unknown_unverified\n",
           "  - id: submitting_mutation_lease_lost\n    from: submitting\n"
           "    to: final_protocol_unknown_unknown_unverified\n"),),
         "acknowledgement_preservation",
         "rewrites acknowledgement NOT_ACCEPTED -> PROTOCOL_UNKNOWN on lease_expiry evidence"),
    Case("automatic_unknown_to_none_proven",
         (("\nautomatic_transitions:\n",
           "\nautomatic_transitions:\n  - id: restart_assumes_nothing_sent\n"
           "    from: final_not_accepted_unknown_unverified\n    to: final_not_started\n"
           "    trigger: {kind: lease_expiry, evidence: WORKER_RESTARTED}\n"
           "    guard: A restarted worker assumes nothing was sent.\n" + _CAS_OBS),),
         "remote_effect_guards", "automatic transition moves remote_effect UNKNOWN -> NONE_PROVEN",
         "    to: final_not_started\n    trigger: {kind: lease_expiry"),
    Case("automatic_partial_to_full",
         (("\nautomatic_transitions:\n",
           "\nautomatic_transitions:\n  - id: late_rows_assumed_applied\n"
           "    from: final_succeeded_partial\n    to: final_succeeded_full_eligible\n"
           "    trigger: {kind: verification, evidence: FULL_EFFECT_VERIFIED}\n"
           "    guard: Later counters look complete.\n" + _CAS_OBS),),
         "remote_effect_guards", "moves remote_effect PARTIALLY_APPLIED -> FULLY_APPLIED"),
    Case("missing_error_metadata_field",
         (("    operator_action: Inspect immutable evidence and reconcile.\n    severity: critical\n",
           "    operator_action: Inspect immutable evidence and reconcile.\n"),),
         "schema", "'severity' is a required property",
         "  - code: REST_DELIVERY_REMOTE_EFFECT_UNKNOWN", code="contract.schema_invalid"),
    Case("extra_unknown_key",
         (("    refusal_codes: [REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT, "
           "REST_DELIVERY_JOURNAL_EPOCH_BLOCKED]\n\n  # --- empty input",
           "    refusal_codes: [REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT, "
           "REST_DELIVERY_JOURNAL_EPOCH_BLOCKED]\n    retry_forever: true\n\n"
           "  # --- empty input"),),
         "schema", "unknown field 'retry_forever'", "retry_forever: true",
         code="contract.schema_invalid"),
    Case("missing_stable_error_code",
         (("  - code: REST_DELIVERY_JOURNAL_EPOCH_BLOCKED\n    exit_class: 4\n"
           "    retryability: reconciliation_only\n"
           "    operator_action: Complete restore reconciliation and approve the new epoch.\n"
           "    severity: critical\n    evidence: reconciliation\n", ""),
          ("  - REST_DELIVERY_JOURNAL_EPOCH_BLOCKED\n", "")),
         "error_catalog",
         "stable error code REST_DELIVERY_JOURNAL_EPOCH_BLOCKED of the specification is missing"),
    Case("extra_code_not_in_spec",
         (("    operator_action: Complete restore reconciliation and approve the new epoch.\n"
           "    severity: critical\n    evidence: reconciliation\n",
           "    operator_action: Complete restore reconciliation and approve the new epoch.\n"
           "    severity: critical\n    evidence: reconciliation\n"
           "  - code: REST_DELIVERY_QUOTA_EXHAUSTED\n    exit_class: 4\n    retryability: blocked\n"
           "    operator_action: Raise the quota.\n    severity: warning\n"
           "    evidence: operation\n"),
          ("  - REST_DELIVERY_JOURNAL_EPOCH_BLOCKED\n",
           "  - REST_DELIVERY_JOURNAL_EPOCH_BLOCKED\n  - REST_DELIVERY_QUOTA_EXHAUSTED\n")),
         "error_catalog",
         "REST_DELIVERY_QUOTA_EXHAUSTED is not a stable error code of the specification",
         "code: REST_DELIVERY_QUOTA_EXHAUSTED"),
    Case("error_metadata_drift",
         (("  - code: REST_DELIVERY_INTENT_CONFLICT\n    exit_class: 2\n",
           "  - code: REST_DELIVERY_INTENT_CONFLICT\n    exit_class: 4\n"),),
         "error_catalog", "exit_class is 4; the runtime catalog says 2"),
    Case("forbidden_combination_listed_as_legal",
         (("  - {name: waiting, execution_state: WAITING,",
           "  - {name: final_running_unknown, execution_state: FINALIZED, remote_effect: UNKNOWN, "
           "acknowledgement_state: RUNNING, verification_state: NOT_PROVABLE, checkpoint_state: "
           "BLOCKED}\n  - {name: waiting, execution_state: WAITING,"),),
         "model_invariants",
         "'final_running_unknown' is the forbidden combination 'finalized_running'",
         "{name: final_running_unknown"),
    Case("eligible_without_passed",
         (("{name: final_succeeded_full_eligible, execution_state: FINALIZED, remote_effect: "
           "FULLY_APPLIED, acknowledgement_state: SUCCEEDED, verification_state: PASSED",
           "{name: final_succeeded_full_eligible, execution_state: FINALIZED, remote_effect: "
           "FULLY_APPLIED, acknowledgement_state: SUCCEEDED, verification_state: NOT_PROVABLE"),),
         "model_invariants", "checkpoint ELIGIBLE requires FULLY_APPLIED + PASSED",
         "{name: final_succeeded_full_eligible"),
    Case("retry_wait_without_request_not_started",
         (("    to: retry_wait\n    trigger: {kind: transport, evidence: REQUEST_NOT_STARTED}\n",
           "    to: retry_wait\n"
           "    trigger: {kind: transport, evidence: REQUEST_MAY_HAVE_REACHED_RECEIVER}\n"),),
         "retry_wait_guard",
         "RETRY_WAIT is entered only from SUBMITTING on REQUEST_NOT_STARTED or certified "
         "REJECTED_BEFORE_EFFECT evidence"),
    Case("refusal_enters_retry_wait_uncertified",
         (("    requires: [response_recorded, rejection_certified_before_effect]\n",
           "    requires: [response_recorded]\n"),),
         "retry_wait_guard",
         "submitting_rejected_before_effect: RETRY_WAIT entry requires "
         "rejection_certified_before_effect, response_recorded and NONE_PROVEN",
         "    requires: [response_recorded]\n    cas: {expected_revision: true, journal_epoch: "
         "true, lease: mutation}\n\n  # --- safe retry"),
    Case("axis_drift_from_runtime_enum",
         (("[PLANNED, SEALED, SUBMITTING, RETRY_WAIT, ACCEPTED, WAITING, VERIFYING, FINALIZED]",
           "[PLANNED, SEALED, SUBMITTING, ACCEPTED, WAITING, VERIFYING, FINALIZED]"),),
         "axes_match_runtime", "axis execution_state lists"),
    Case("second_continuation_kind",
         (("continuation_kinds: [poll_receipt]",
           "continuation_kinds: [poll_receipt, observe_external_cancel]"),),
         "continuation_poll_receipt_only", "poll_receipt is the only automatic continuation",
         "continuation_kinds:"),
    Case("operator_reconciliation_rewrites_acknowledgement",
         (("    from: reconciling_failed_unknown\n    to: final_failed_full_eligible\n",
           "    from: reconciling_failed_unknown\n    to: final_succeeded_full_eligible\n"),),
         "acknowledgement_preservation",
         "operator reconciliation must preserve the acknowledgement (FAILED -> SUCCEEDED)"),
    Case("transition_without_journal_epoch",
         (("    requires: [may_attempt_marker_durable, capacity_reserved, mutation_gate_open]\n"
           "    cas: {expected_revision: true, journal_epoch: true, lease: mutation}\n",
           "    requires: [may_attempt_marker_durable, capacity_reserved, mutation_gate_open]\n"
           "    cas: {expected_revision: true, journal_epoch: false, lease: mutation}\n"),),
         "cas_and_leases", "sealed_submit: every transition is a CAS on the expected revision",
         "journal_epoch: false"),
    Case("promotion_under_mutation_lease",
         (("    to: final_succeeded_full_promoted\n"
           "    trigger: {kind: checkpoint, evidence: CONTIGUOUS_FRONTIER_REACHED}\n"
           "    guard: Every earlier child of the parent is promoted, so this child extends the "
           "contiguous frontier.\n    requires: [contiguous_frontier]\n"
           "    cas: {expected_revision: true, journal_epoch: true, lease: checkpoint}\n",
           "    to: final_succeeded_full_promoted\n"
           "    trigger: {kind: checkpoint, evidence: CONTIGUOUS_FRONTIER_REACHED}\n"
           "    guard: Every earlier child of the parent is promoted, so this child extends the "
           "contiguous frontier.\n    requires: [contiguous_frontier]\n"
           "    cas: {expected_revision: true, journal_epoch: true, lease: mutation}\n"),),
         "cas_and_leases",
         "final_succeeded_promote: the checkpoint lease performs exactly the ELIGIBLE -> PROMOTED"),
    Case("retry_without_new_attempt_ordinal",
         (("    requires: [retry_delay_elapsed, retry_budget_remaining, may_attempt_marker_durable, "
           "capacity_reserved, mutation_gate_open]\n"
           "    cas: {expected_revision: true, journal_epoch: true, lease: mutation}\n"
           "    advances: [attempt_ordinal]\n",
           "    requires: [retry_delay_elapsed, retry_budget_remaining, may_attempt_marker_durable, "
           "capacity_reserved, mutation_gate_open]\n"
           "    cas: {expected_revision: true, journal_epoch: true, lease: mutation}\n"),),
         "monotonic_fields", "retry_wait_due: attempt_ordinal must advance exactly on entering "
         "SUBMITTING"),
    Case("failure_row_contradicts_transition",
         (("    transitions: [submitting_bare_duplicate, replay_bare_duplicate]",
           "    transitions: [submitting_bare_duplicate, submitting_async_receipt_accepted]"),),
         "failure_mapping",
         "bare_duplicate_or_conflict_response: submitting_async_receipt_accepted ends in "
         "UNDETERMINED", "submitting_async_receipt_accepted]"),
    Case("terminal_tuple_with_automatic_exit",
         (("  - final_succeeded_full_promoted\n",
           "  - final_succeeded_full_eligible\n  - final_succeeded_full_promoted\n"),),
         "terminal_tuples",
         "terminal tuple 'final_succeeded_full_eligible' has the automatic transition "
         "'final_succeeded_promote'"),
)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_mutation_is_caught_by_its_check(case: Case, mutate, write_contract) -> None:
    text = mutate(case.edits)
    exit_code, report, _ = run_check(write_contract(text))
    assert exit_code == 2
    assert report["schema"] == "dpone.design-contract-report.v1"
    assert report["status"] == "FAIL"
    assert report["error"]["code"] == case.code
    assert report["error"]["exit_code"] == 2
    check = next(c for c in report["checks"] if c["id"] == case.check)
    assert check["status"] == "FAIL", check
    matching = [f for f in check["findings"] if case.finding in f["message"]]
    assert matching, check["findings"]
    assert all(f["check"] == case.check and f["path"] for f in matching)
    if case.at is not None:
        assert matching[0]["line"] == line_of(text, case.at)


def test_there_are_at_least_twelve_negative_fixtures() -> None:
    literal = sorted(p.name for p in FIXTURES.glob("*.yaml"))
    assert literal == ["duplicate_key.yaml", "invalid_utf8.yaml"]
    assert len(CASES) + len(literal) >= 12
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize(
    ("name", "code", "line"),
    [("duplicate_key.yaml", "yaml.duplicate_key", 13), ("invalid_utf8.yaml", "yaml.invalid_utf8", 4)],
)
def test_byte_level_fixture_is_refused_without_traceback(name: str, code: str, line: int) -> None:
    exit_code, document, stderr = run_check(FIXTURES / name)
    assert exit_code == 2
    assert document["schema"] == "dpone.error.v1"
    assert document["code"] == code
    assert document["location"]["line"] == line
    assert document["exit_code"] == 2
    exit_code, text, stderr = run_check(FIXTURES / name, "text")
    assert exit_code == 2
    assert code in stderr
    assert "Traceback" not in text + stderr


def test_duplicate_key_names_both_lines() -> None:
    _, document, _ = run_check(FIXTURES / "duplicate_key.yaml")
    assert document["details"] == {"first_line": 6, "second_line": 13}


def test_text_output_lists_the_failing_check_and_exits_2(mutate, write_contract) -> None:
    case = CASES[0]
    exit_code, text, stderr = run_check(write_contract(mutate(case.edits)), "text")
    assert exit_code == 2
    assert "FAIL    reachability:" in text
    assert "tuple 'orphan_queued' is unreachable" in text
    assert "contract.semantic_invalid" in stderr
    assert "Traceback" not in text + stderr


def test_missing_file_is_input_not_found(tmp_path: Path) -> None:
    exit_code, document, _ = run_check(tmp_path / "absent.yaml")
    assert (exit_code, document["code"]) == (2, "input.not_found")


@pytest.mark.parametrize("edits", [(("no such snippet", "x"),), (("  - id:", "x"),)])
def test_mutation_helper_refuses_absent_or_ambiguous_snippets(edits, mutate) -> None:
    with pytest.raises(ValueError, match="expected once"):
        mutate(edits)


def test_mutation_helper_applies_each_edit_once(mutate, shipped_text: str) -> None:
    text = mutate((("continuation_kinds: [poll_receipt]", "continuation_kinds: [x]"),))
    assert text.count("continuation_kinds: [x]") == 1
    assert len(text) == len(shipped_text) - len("poll_receipt") + 1
