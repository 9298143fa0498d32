"""The closed error catalog against the spec's "Stable errors" list and metadata table."""

from __future__ import annotations

import copy
import json
import pickle
import re

import pytest

from dpone.contracts import (
    COMPILE_ERRORS,
    ERROR_CATALOG,
    REST_DELIVERY_ERRORS,
    DponeError,
    ErrorSpec,
    EvidenceRetention,
    ExitClass,
    Location,
    Retryability,
    Severity,
)

R, S, E = Retryability, Severity, EvidenceRetention

# Hard-coded from the spec's table (code, exit class, retryability, operator action, severity,
# evidence). The spec is the authority; the catalog must match it exactly.
SPEC_TABLE: dict[str, tuple[int, Retryability, str, Severity, EvidenceRetention]] = {
    "REST_DELIVERY_INTENT_CONFLICT": (
        2, R.NEVER, "Correct intent or create an explicit governed generation.",
        S.WARNING, E.OPERATION),
    "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN": (
        4, R.RECONCILIATION_ONLY, "Inspect immutable evidence and reconcile.",
        S.CRITICAL, E.RECONCILIATION),
    "REST_DELIVERY_PARTIALLY_APPLIED": (
        4, R.COMPENSATION_OR_RECONCILIATION_ONLY,
        "Reconcile or run the certified compensation contract.", S.CRITICAL, E.RECONCILIATION),
    "REST_DELIVERY_UNSAFE_RETRY": (
        4, R.NEVER, "Reconcile the delivery key before any resend.",
        S.CRITICAL, E.RECONCILIATION),
    "REST_DELIVERY_SCOPE_EXCEEDS_LIMIT": (
        2, R.NEVER, "Shrink the scope or change the certified receiver atomicity contract.",
        S.WARNING, E.OPERATION),
    "REST_DELIVERY_COUNT_MISMATCH": (
        4, R.RECONCILIATION_ONLY, "Inspect receiver counts and reconcile effect.",
        S.CRITICAL, E.RECONCILIATION),
    "REST_DELIVERY_RECEIPT_EXPIRED": (
        4, R.RECONCILIATION_ONLY, "Query by delivery key when certified or reconcile manually.",
        S.WARNING, E.RECONCILIATION),
    "REST_DELIVERY_PROTOCOL_UNKNOWN": (
        4, R.RECONCILIATION_ONLY, "Inspect protocol evidence and reconcile.",
        S.CRITICAL, E.RECONCILIATION),
    "REST_DELIVERY_STALE_GENERATION": (
        2, R.NEVER, "Inspect the newer overlapping generation.", S.WARNING, E.OPERATION),
    "REST_DELIVERY_OVERLAPPING_EFFECT_IN_FLIGHT": (
        4, R.OBSERVATION_OR_RECONCILIATION_ONLY, "Resolve or observe the older overlap.",
        S.WARNING, E.RECONCILIATION),
    "REST_DELIVERY_RETRY_AFTER_EXCEEDS_BUDGET": (
        4, R.BLOCKED, "Extend the governed budget or wait for the server window.",
        S.WARNING, E.OPERATION),
    "REST_DELIVERY_APPEND_SCOPE_ALREADY_APPLIED": (
        2, R.NEVER, "Use an explicitly certified correction contract.",
        S.WARNING, E.EFFECT_TOMBSTONE),
    "REST_DELIVERY_JOURNAL_EPOCH_BLOCKED": (
        4, R.RECONCILIATION_ONLY, "Complete restore reconciliation and approve the new epoch.",
        S.CRITICAL, E.RECONCILIATION),
}

CRITICAL = {
    "REST_DELIVERY_REMOTE_EFFECT_UNKNOWN",
    "REST_DELIVERY_PARTIALLY_APPLIED",
    "REST_DELIVERY_UNSAFE_RETRY",
    "REST_DELIVERY_COUNT_MISMATCH",
    "REST_DELIVERY_PROTOCOL_UNKNOWN",
    "REST_DELIVERY_JOURNAL_EPOCH_BLOCKED",
}

DOCUMENT_KEYS = {
    "schema", "code", "message", "location", "hint", "operation_id", "exit_code",
    "retryability", "severity", "details",
}
COMPILE_CODE_RE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")


# --------------------------------------------------------------------------------------
# The REST_DELIVERY_* catalog
# --------------------------------------------------------------------------------------


def test_spec_table_is_the_13_stable_codes() -> None:
    assert len(SPEC_TABLE) == 13
    assert {code for code, row in SPEC_TABLE.items() if row[3] is S.CRITICAL} == CRITICAL


def test_catalog_holds_exactly_the_spec_rest_delivery_codes() -> None:
    codes = [spec.code for spec in REST_DELIVERY_ERRORS]
    assert len(codes) == len(set(codes)) == 13
    assert set(codes) == set(SPEC_TABLE)
    assert {code for code in ERROR_CATALOG if code.startswith("REST_DELIVERY_")} == set(SPEC_TABLE)
    # spec listing order is preserved
    assert codes == list(SPEC_TABLE)


@pytest.mark.parametrize("code", list(SPEC_TABLE))
def test_rest_delivery_metadata_matches_the_spec(code: str) -> None:
    exit_class, retry, action, severity, evidence = SPEC_TABLE[code]
    spec = ERROR_CATALOG[code]
    assert spec.exit_class == exit_class
    assert isinstance(spec.exit_class, ExitClass)
    assert spec.retryability is retry
    assert spec.operator_action == action
    assert spec.severity is severity
    assert spec.severity is (S.CRITICAL if code in CRITICAL else S.WARNING)
    assert spec.evidence is evidence
    assert DponeError(code=code, message="m").exit_code == exit_class


# --------------------------------------------------------------------------------------
# Whole-catalog invariants
# --------------------------------------------------------------------------------------


def test_catalog_has_no_silently_shadowed_duplicates() -> None:
    everything = [spec.code for spec in REST_DELIVERY_ERRORS + COMPILE_ERRORS]
    assert len(everything) == len(set(everything)) == len(ERROR_CATALOG)
    assert all(ERROR_CATALOG[spec.code] is spec for spec in REST_DELIVERY_ERRORS + COMPILE_ERRORS)


@pytest.mark.parametrize("code", sorted(ERROR_CATALOG))
def test_every_entry_has_complete_metadata(code: str) -> None:
    spec = ERROR_CATALOG[code]
    assert isinstance(spec, ErrorSpec)
    assert spec.code == code
    assert isinstance(spec.exit_class, ExitClass)
    assert spec.exit_class is not ExitClass.OK
    assert isinstance(spec.retryability, Retryability)
    assert isinstance(spec.severity, Severity)
    assert isinstance(spec.evidence, EvidenceRetention)
    assert isinstance(spec.operator_action, str)
    assert spec.operator_action.strip()
    assert spec.operator_action == spec.operator_action.strip()


def test_error_spec_is_immutable() -> None:
    spec = ERROR_CATALOG["REST_DELIVERY_INTENT_CONFLICT"]
    with pytest.raises(AttributeError):
        spec.exit_class = ExitClass.OK  # type: ignore[misc]


# Dotted codes whose retryability is not the one their exit class implies.
RETRYABILITY_EXCEPTIONS = {
    # The receiver refused the credential: unavailable (exit 3), but waiting fixes nothing.
    "credential.rejected": R.AFTER_FIX,
    # A platform operator's revocation or an expired identity attestation: unavailable
    # (exit 3, nothing was sent), but only the operator's fix lifts it.
    "governance.profile_revoked": R.AFTER_FIX,
    "governance.binding_revoked": R.AFTER_FIX,
    "governance.identity_expired": R.AFTER_FIX,
}


@pytest.mark.parametrize("spec", COMPILE_ERRORS, ids=lambda spec: spec.code)
def test_compile_codes_are_dotted_lowercase_errors(spec: ErrorSpec) -> None:
    assert COMPILE_CODE_RE.fullmatch(spec.code)
    assert spec.severity is S.ERROR
    assert spec.evidence is E.NONE
    expected_retry = {ExitClass.INVALID: R.AFTER_FIX, ExitClass.UNAVAILABLE: R.WHEN_AVAILABLE,
                      ExitClass.EFFECT_UNCERTAIN: R.RECONCILIATION_ONLY,
                      ExitClass.TERMINAL_FAILURE: R.NEVER}[spec.exit_class]
    assert spec.retryability is RETRYABILITY_EXCEPTIONS.get(spec.code, expected_retry)


def test_a_rejected_credential_is_fixed_by_the_operator_not_by_waiting() -> None:
    spec = ERROR_CATALOG["credential.rejected"]
    assert (spec.exit_class, spec.retryability) == (ExitClass.UNAVAILABLE, R.AFTER_FIX)
    assert "credential_ref" in spec.operator_action
    assert "same delivery key" in spec.operator_action


@pytest.mark.parametrize("code", ["yaml.invalid_utf8", "yaml.duplicate_key"])
def test_spec_named_compile_codes_exit_2(code: str) -> None:
    """Spec: malformed UTF-8 returns exit 2 plus yaml.invalid_utf8; duplicate keys are rejected."""
    assert code in ERROR_CATALOG
    assert ERROR_CATALOG[code].exit_class == 2
    assert DponeError(code=code, message="m").exit_code == 2


# --------------------------------------------------------------------------------------
# DponeError
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code", ["REST_DELIVERY_NOPE", "rest_delivery_intent_conflict", "yaml", "", "YAML.SYNTAX"])
def test_dpone_error_refuses_unknown_codes(code: str) -> None:
    with pytest.raises(ValueError, match="not in the error catalog"):
        DponeError(code=code, message="boom")


def test_dpone_error_is_an_exception_with_the_message() -> None:
    err = DponeError(code="REST_DELIVERY_UNSAFE_RETRY", message="resend refused")
    assert isinstance(err, Exception)
    assert err.args == ("resend refused",)
    assert str(err) == "REST_DELIVERY_UNSAFE_RETRY: resend refused"
    assert err.spec is ERROR_CATALOG["REST_DELIVERY_UNSAFE_RETRY"]
    assert err.fix_hint == "Reconcile the delivery key before any resend."
    with pytest.raises(DponeError) as caught:
        raise err
    assert caught.value.exit_code == 4


def test_to_document_full() -> None:
    err = DponeError(
        code="yaml.duplicate_key",
        message="duplicate key 'id'",
        location=Location(file="w.yaml", line=3, column=5, path="$.id"),
        hint="remove the second 'id'",
        operation_id="op-1",
        details={"key": "id", "lines": [2, 3]},
    )
    document = err.to_document()
    assert set(document) == DOCUMENT_KEYS
    assert json.loads(json.dumps(document)) == document
    assert document == {
        "schema": "dpone.error.v1",
        "code": "yaml.duplicate_key",
        "message": "duplicate key 'id'",
        "location": {"file": "w.yaml", "line": 3, "column": 5, "path": "$.id"},
        "hint": "remove the second 'id'",
        "operation_id": "op-1",
        "exit_code": 2,
        "retryability": "after_fix",
        "severity": "error",
        "details": {"key": "id", "lines": [2, 3]},
    }
    assert str(err) == "w.yaml:3:5 ($.id): yaml.duplicate_key: duplicate key 'id'"


@pytest.mark.parametrize("code", sorted(ERROR_CATALOG))
def test_to_document_minimal_is_json_for_every_code(code: str) -> None:
    document = DponeError(code=code, message="m").to_document()
    assert set(document) == DOCUMENT_KEYS
    text = json.dumps(document, allow_nan=False)
    assert json.loads(text) == document
    spec = ERROR_CATALOG[code]
    assert document["schema"] == "dpone.error.v1"
    assert document["location"] is None
    assert document["operation_id"] is None
    assert document["details"] == {}
    assert document["hint"] == spec.operator_action
    assert document["exit_code"] == int(spec.exit_class)
    assert type(document["exit_code"]) is int
    assert document["retryability"] == spec.retryability.value
    assert document["severity"] == spec.severity.value
    assert type(document["retryability"]) is str
    assert type(document["severity"]) is str


def test_default_details_are_not_shared_between_errors() -> None:
    a = DponeError(code="yaml.syntax", message="a")
    b = DponeError(code="yaml.syntax", message="b")
    a.details["x"] = 1
    assert b.details == {}


@pytest.mark.parametrize(
    ("location", "rendered"),
    [
        (Location(), "<input>"),
        (Location(file="f.yaml"), "f.yaml"),
        (Location(file="f.yaml", line=2), "f.yaml:2"),
        (Location(file="f.yaml", line=2, column=7), "f.yaml:2:7"),
        (Location(file="f.yaml", column=7), "f.yaml"),
        (Location(line=1, path="$.a"), "<input>:1 ($.a)"),
    ],
)
def test_location_rendering(location: Location, rendered: str) -> None:
    assert location.render() == rendered
    assert set(location.to_document()) == {"file", "line", "column", "path"}


def test_dpone_error_survives_pickle_and_copy() -> None:
    err = DponeError(code="REST_DELIVERY_UNSAFE_RETRY", message="m", operation_id="op")
    for clone in (pickle.loads(pickle.dumps(err)), copy.copy(err)):
        assert clone.to_document() == err.to_document()
