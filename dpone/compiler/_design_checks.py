"""The named semantic checks of the delivery state-machine contract.

Each check reads the schema-valid plain mapping and yields findings as (message, YAML path);
the caller turns paths into file lines. The checks restate the specification's normative
invariants independently of the contract's own lists, so deleting a rule from the contract
cannot hide a violation of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from dpone.compiler._design_model import (
    Model,
    is_orphan_marker_consumed,
    is_orphan_marker_found,
    is_receipt_found_running,
    is_reconciled_resubmit,
)
from dpone.compiler._yaml import YamlPath
from dpone.contracts import (
    AcknowledgementState,
    CheckpointState,
    ExecutionState,
    RemoteEffect,
    VerificationState,
)
from dpone.contracts._axes import AXES

Finding = tuple[str, YamlPath]

INITIAL_VALUES = {"execution_state": "PLANNED", "remote_effect": "NONE_PROVEN",
                  "acknowledgement_state": "NOT_ACCEPTED", "verification_state": "NOT_RUN",
                  "checkpoint_state": "BLOCKED"}
RUNTIME_AXES = {"execution_state": ExecutionState, "remote_effect": RemoteEffect,
                "acknowledgement_state": AcknowledgementState,
                "verification_state": VerificationState, "checkpoint_state": CheckpointState}
_ALL_EFFECTS = frozenset({"NONE_PROVEN", "FULLY_APPLIED", "PARTIALLY_APPLIED", "UNKNOWN"})
# Spec "Outcome model": how each acknowledgement may finalize (acknowledgement preservation).
REQUIRED_RESOLUTIONS: dict[str, frozenset[str]] = {
    "SUCCEEDED": frozenset({"FULLY_APPLIED", "PARTIALLY_APPLIED", "UNKNOWN"}),
    "RUNNING": frozenset(),
    **dict.fromkeys(("NOT_ACCEPTED", "ACCEPTED", "FAILED", "CANCELLED", "EXPIRED",
                     "PROTOCOL_UNKNOWN"), _ALL_EFFECTS),
}
# Spec "Failure and partial-result policy": the rows every contract must map.
SPEC_FAILURE_ROWS = (
    "validation_or_admission_failed_before_transport", "transport_proves_request_not_started",
    "request_may_have_reached_receiver_without_fence", "accepted_receipt_persisted",
    "duplicate_with_receipt_same_key_and_intent", "bare_duplicate_or_conflict_response",
    "receiver_says_failed_cancelled_or_expired", "partial_or_per_record_rejection",
    "all_rows_accounted_and_verification_passes", "verification_counters_missing_or_contradictory",
)
MONOTONIC_FIELDS = frozenset({"journal_revision", "journal_epoch", "attempt_ordinal",
                              "observation_ordinal", "correction_revision",
                              "highest_applied_generation", "checkpoint_frontier"})
_ACK_EVIDENCE_KINDS = frozenset({"submit_response", "observation"})


def spec_invariant_violations(state: dict[str, str]) -> list[str]:
    """The spec's model-wide invariants that ``state`` breaks, as sentences."""
    out = []
    if state["execution_state"] == "FINALIZED" and state["acknowledgement_state"] == "RUNNING":
        out.append("FINALIZED + RUNNING is illegal")
    if state["remote_effect"] == "UNKNOWN" and state["acknowledgement_state"] == "RUNNING":
        out.append("UNKNOWN + RUNNING is illegal")
    if state["checkpoint_state"] in {"ELIGIBLE", "PROMOTED"} and (
            state["remote_effect"] != "FULLY_APPLIED" or state["verification_state"] != "PASSED"):
        out.append(f"checkpoint {state['checkpoint_state']} requires FULLY_APPLIED + PASSED")
    return out


def check_axes(m: Model) -> Iterator[Finding]:
    for axis, enum in RUNTIME_AXES.items():
        declared, runtime = list(m.data["axes"][axis]), [member.value for member in enum]
        if declared != runtime:
            yield (f"axis {axis} lists {declared}; the runtime enum is {runtime}", ("axes", axis))


def check_tuples(m: Model) -> Iterator[Finding]:
    seen_names: set[str] = set()
    seen_values: dict[tuple[str, ...], str] = {}
    for i, obj in enumerate(m.data["legal_tuples"]):
        values = tuple(obj[axis] for axis in AXES)
        if obj["name"] in seen_names:
            yield f"tuple name {obj['name']!r} is listed twice", ("legal_tuples", i, "name")
        if values in seen_values:
            yield (f"tuple {obj['name']!r} repeats {seen_values[values]!r} "
                   f"({'/'.join(values)})", ("legal_tuples", i))
        for axis in AXES:
            if obj[axis] not in m.data["axes"][axis]:
                yield f"{obj[axis]} is not a declared {axis} value", ("legal_tuples", i, axis)
        seen_names.add(obj["name"])
        seen_values.setdefault(values, obj["name"])
    if m.initial not in m.tuples:
        yield f"initial tuple {m.initial!r} is not a legal tuple", ("initial_tuple",)
    elif m.tuples[m.initial] != INITIAL_VALUES:
        yield ("the initial tuple must be PLANNED/NONE_PROVEN/NOT_ACCEPTED/NOT_RUN/BLOCKED",
               ("initial_tuple",))
    for i, name in enumerate(m.data["terminal_tuples"]):
        if name not in m.tuples:
            yield f"terminal tuple {name!r} is not a legal tuple", ("terminal_tuples", i)


def check_transition_names(m: Model) -> Iterator[Finding]:
    seen: set[str] = set()
    for edge in m.edges:
        if edge.id in seen:
            yield f"transition id {edge.id!r} is listed twice", (*edge.path, "id")
        seen.add(edge.id)
        for key, name in (("from", edge.source), ("to", edge.target)):
            if name not in m.tuples:
                yield f"{edge.id}: {key} {name!r} is not a legal tuple", (*edge.path, key)


def check_reachability(m: Model) -> Iterator[Finding]:
    reached = m.reach(m.initial, automatic_only=False) if m.initial in m.tuples else set()
    for name, path in m.tuple_paths.items():
        if name not in reached:
            yield f"tuple {name!r} is unreachable from the initial tuple {m.initial!r}", path


def check_terminal_closure(m: Model) -> Iterator[Finding]:
    for name, path in m.tuple_paths.items():
        if name in m.terminal:
            continue
        if not m.reach(name, automatic_only=False) & m.terminal:
            yield f"tuple {name!r} has no path to a terminal tuple", path
            continue
        automatic = any(e.automatic and e.source == name for e in m.edges)
        if automatic and not m.reach(name, automatic_only=True) & m.terminal:
            yield (f"tuple {name!r} reaches no terminal tuple through automatic transitions "
                   "(an automatic dead end)", path)


def check_terminal_tuples(m: Model) -> Iterator[Finding]:
    for edge, src, dst in m.pairs(automatic_only=True):
        if is_reconciled_resubmit(edge, src, dst) or is_orphan_marker_found(edge, src, dst):
            continue
        if edge.source in m.terminal:
            yield (f"terminal tuple {edge.source!r} has the automatic transition {edge.id!r}",
                   edge.path)
        elif src["execution_state"] == "FINALIZED" and not _is_promotion(src, dst):
            yield (f"{edge.id}: the only automatic transition out of FINALIZED is checkpoint "
                   "promotion ELIGIBLE -> PROMOTED", edge.path)
    automatic_sources = {e.source for e in m.edges if e.automatic}
    for name, state in m.tuples.items():
        if name in m.terminal and state["execution_state"] != "FINALIZED":
            yield f"terminal tuple {name!r} is not FINALIZED", m.tuple_paths[name]
        if (name not in m.terminal and state["execution_state"] == "FINALIZED"
                and name not in automatic_sources):
            yield (f"FINALIZED tuple {name!r} has no automatic transition but is not listed "
                   "as terminal", m.tuple_paths[name])


def _is_promotion(src: dict[str, str], dst: dict[str, str]) -> bool:
    same = all(src[a] == dst[a] for a in AXES if a != "checkpoint_state")
    return same and (src["checkpoint_state"], dst["checkpoint_state"]) == ("ELIGIBLE", "PROMOTED")


def check_acknowledgement(m: Model) -> Iterator[Finding]:
    for edge, src, dst in m.pairs():
        changed = src["acknowledgement_state"] != dst["acknowledgement_state"]
        if is_reconciled_resubmit(edge, src, dst) or is_receipt_found_running(edge, src, dst):
            changed = False
        if changed and not edge.automatic:
            yield (f"{edge.id}: operator reconciliation must preserve the acknowledgement "
                   f"({src['acknowledgement_state']} -> {dst['acknowledgement_state']})",
                   edge.path)
        elif changed and edge.kind not in _ACK_EVIDENCE_KINDS:
            yield (f"{edge.id}: automatic transition rewrites acknowledgement "
                   f"{src['acknowledgement_state']} -> {dst['acknowledgement_state']} on "
                   f"{edge.kind} evidence; only submit_response or observation evidence may",
                   (*edge.path, "trigger", "kind"))
        if changed and dst["acknowledgement_state"] == "CANCELLED" and edge.kind != "observation":
            yield (f"{edge.id}: CANCELLED is only observed externally by poll_receipt, "
                   "never invoked", edge.path)
    found: dict[str, set[str]] = {ack: set() for ack in REQUIRED_RESOLUTIONS}
    for state in m.tuples.values():
        if state["execution_state"] == "FINALIZED":
            found.setdefault(state["acknowledgement_state"], set()).add(state["remote_effect"])
    for ack, required in REQUIRED_RESOLUTIONS.items():
        if found[ack] != required:
            yield (f"acknowledgement {ack} must finalize as exactly "
                   f"{sorted(required) or 'nothing'}; the contract has {sorted(found[ack])}",
                   ("legal_tuples",))


def check_remote_effect(m: Model) -> Iterator[Finding]:
    for edge, src, dst in m.pairs():
        before, after = src["remote_effect"], dst["remote_effect"]
        if before == after:
            continue
        if edge.automatic and before == "UNKNOWN":
            yield (f"{edge.id}: automatic transition moves remote_effect UNKNOWN -> {after}; "
                   "only operator reconciliation with new evidence may refine UNKNOWN",
                   (*edge.path, "to"))
        elif edge.automatic and before in {"FULLY_APPLIED", "PARTIALLY_APPLIED"}:
            yield (f"{edge.id}: automatic transition moves remote_effect {before} -> {after}",
                   (*edge.path, "to"))
        if not edge.automatic and edge.obj.get("reconciliation") != "resolve":
            yield (f"{edge.id}: an operator transition changes remote_effect only as a "
                   "reconciliation resolve step with a new evidence digest", edge.path)


def check_verification(m: Model) -> Iterator[Finding]:
    for edge, src, dst in m.pairs():
        before, after = src["verification_state"], dst["verification_state"]
        if is_reconciled_resubmit(edge, src, dst) or is_orphan_marker_found(edge, src, dst):
            continue
        if edge.automatic and before in {"FAILED", "NOT_PROVABLE"} and after != before:
            yield (f"{edge.id}: verification {before} -> {after} is only an operator "
                   "reconciliation", edge.path)
        if (not edge.automatic and src["execution_state"] == "FINALIZED"
                and dst["execution_state"] == "VERIFYING"):
            if src["remote_effect"] not in {"UNKNOWN", "PARTIALLY_APPLIED"}:
                yield (f"{edge.id}: only a finalized UNKNOWN or PARTIALLY_APPLIED tuple may be "
                       "reopened for reconciliation", edge.path)
            if edge.obj.get("reconciliation") != "open":
                yield f"{edge.id}: reopening needs a new reconciliation id (open)", edge.path


def check_invariants(m: Model) -> Iterator[Finding]:
    rules = m.data["forbidden_combinations"]
    for name, state in m.tuples.items():
        for rule in rules:
            if all(state[axis] in values for axis, values in rule["when"].items()):
                yield (f"legal tuple {name!r} is the forbidden combination {rule['id']!r}: "
                       f"{rule['reason']}", m.tuple_paths[name])
        for sentence in spec_invariant_violations(state):
            yield f"legal tuple {name!r}: {sentence}", m.tuple_paths[name]


# What proves that nothing was applied, by the evidence that enters RETRY_WAIT: the transport's
# REQUEST_NOT_STARTED proof within the retry budget, or a recorded response whose status the
# profile certifies as refused before any effect (the retry then waits for a fixed credential).
RETRY_WAIT_ENTRY_PROOFS: dict[tuple[str, str], frozenset[str]] = {
    ("transport", "REQUEST_NOT_STARTED"): frozenset({"request_not_started_proof",
                                                     "retry_budget_remaining"}),
    ("submit_response", "REJECTED_BEFORE_EFFECT"): frozenset({"response_recorded",
                                                              "rejection_certified_before_effect"}),
}


def check_retry_wait(m: Model) -> Iterator[Finding]:
    entries = exits = no_retry = 0
    for edge, src, dst in m.pairs():
        into = dst["execution_state"] == "RETRY_WAIT" and src["execution_state"] != "RETRY_WAIT"
        if into:
            entries += 1
            needs = RETRY_WAIT_ENTRY_PROOFS.get((edge.kind, edge.evidence))
            if src["execution_state"] != "SUBMITTING" or needs is None:
                yield (f"{edge.id}: RETRY_WAIT is entered only from SUBMITTING on "
                       "REQUEST_NOT_STARTED or certified REJECTED_BEFORE_EFFECT evidence",
                       (*edge.path, "trigger"))
            elif not needs <= set(edge.get("requires")) or dst["remote_effect"] != "NONE_PROVEN":
                yield (f"{edge.id}: RETRY_WAIT entry requires {', '.join(sorted(needs))} and "
                       "NONE_PROVEN", (*edge.path, "requires"))
        if src["execution_state"] == "RETRY_WAIT" and dst["execution_state"] == "SUBMITTING":
            exits += 1
            if "retry_budget_remaining" not in edge.get("requires"):
                yield f"{edge.id}: the due retry requires remaining budget", edge.path
        if (edge.evidence == "REQUEST_NOT_STARTED" and dst["execution_state"] == "FINALIZED"
                and dst["remote_effect"] == "NONE_PROVEN"):
            no_retry += 1
    if not (entries and exits and no_retry):
        yield ("safe retry needs SUBMITTING -> RETRY_WAIT -> SUBMITTING and a terminal "
               "no-retry path on REQUEST_NOT_STARTED", ("automatic_transitions",))


def check_continuation(m: Model) -> Iterator[Finding]:
    if list(m.data["continuation_kinds"]) != ["poll_receipt"]:
        yield "poll_receipt is the only automatic continuation", ("continuation_kinds",)
    for edge in m.edges:
        named = edge.obj.get("continuation")
        if edge.kind == "observation" and (named != "poll_receipt" or not edge.automatic):
            yield (f"{edge.id}: an observation is an automatic poll_receipt continuation",
                   edge.path)
        if named is not None and edge.kind != "observation":
            yield f"{edge.id}: continuation {named!r} on {edge.kind} evidence", edge.path
        if edge.kind == "observation" and edge.lease != "observation":
            yield f"{edge.id}: poll_receipt runs under the observation lease", edge.path


def check_cas_and_leases(m: Model) -> Iterator[Finding]:
    for edge, src, dst in m.pairs():
        cas = edge.obj["cas"]
        if cas["expected_revision"] is not True or cas["journal_epoch"] is not True:
            yield (f"{edge.id}: every transition is a CAS on the expected revision under the "
                   "current journal epoch", (*edge.path, "cas"))
        if (edge.lease == "operator") != (not edge.automatic):
            yield f"{edge.id}: operator transitions and only they use the operator lease", (
                *edge.path, "cas", "lease")
        if (edge.lease == "checkpoint") != _is_promotion(src, dst):
            yield (f"{edge.id}: the checkpoint lease performs exactly the ELIGIBLE -> PROMOTED "
                   "promotion", (*edge.path, "cas", "lease"))
        if dst["execution_state"] in {"SUBMITTING", "RETRY_WAIT"} and (
                edge.lease != "mutation" or edge.kind == "lease_expiry"):
            yield (f"{edge.id}: only the mutation lease may enter {dst['execution_state']}; "
                   "lease expiry never authorizes a mutation", (*edge.path, "cas", "lease"))
        if edge.kind == "lease_expiry" and edge.lease != "observation":
            yield f"{edge.id}: takeover after lease expiry is observation only", edge.path


def check_monotonic(m: Model) -> Iterator[Finding]:
    rules = {f["name"]: f["rule"] for f in m.data["monotonic_fields"]}
    if set(rules) != MONOTONIC_FIELDS or len(rules) != len(m.data["monotonic_fields"]):
        yield (f"monotonic fields must be exactly {sorted(MONOTONIC_FIELDS)}",
               ("monotonic_fields",))
    advanced: set[str] = set()
    for edge, src, dst in m.pairs():
        adv = set(edge.get("advances"))
        advanced |= adv
        for name in sorted(adv):
            if rules.get(name) != "increment_by_one" or name == "journal_revision":
                yield (f"{edge.id}: advances {name!r}, which is not an explicitly advanced "
                       "increment_by_one field", (*edge.path, "advances"))
        required = {
            "attempt_ordinal": (dst["execution_state"] == "SUBMITTING"
                                or is_orphan_marker_consumed(edge, src, dst)),
            "observation_ordinal": edge.kind == "observation",
            "checkpoint_frontier": _is_promotion(src, dst),
        }
        for name, needed in required.items():
            if needed != (name in adv):
                where = ("entering SUBMITTING (or consuming an orphan marker)"
                         if name == "attempt_ordinal" else name)
                yield (f"{edge.id}: {name} must advance exactly on {where} transitions",
                       (*edge.path, "advances"))
    for name, rule in rules.items():
        if rule == "increment_by_one" and name != "journal_revision" and name not in advanced:
            yield f"monotonic field {name!r} is never advanced", ("monotonic_fields",)


def check_failure_mapping(m: Model) -> Iterator[Finding]:
    rows = {row["id"]: (i, row) for i, row in enumerate(m.data["failure_mapping"])}
    for row_id in SPEC_FAILURE_ROWS:
        if row_id not in rows:
            yield f"failure row {row_id!r} of the specification is missing", ("failure_mapping",)
    edges = {edge.id: edge for edge in m.edges}
    for row_id, (i, row) in rows.items():
        for j, tid in enumerate(row["transitions"]):
            edge, path = edges.get(tid), ("failure_mapping", i, "transitions", j)
            if edge is None or not m.legal(edge) or not edge.automatic:
                yield f"{row_id}: {tid!r} is not a listed automatic transition", path
                continue
            dst = m.tuples[edge.target]
            if dst["remote_effect"] not in row["remote_effects"]:
                yield (f"{row_id}: {tid} ends in {dst['remote_effect']}, the row says "
                       f"{row['remote_effects']}", path)
            if dst["checkpoint_state"] not in row["checkpoint_states"]:
                yield (f"{row_id}: {tid} ends with checkpoint {dst['checkpoint_state']}, the row "
                       f"says {row['checkpoint_states']}", path)


Check = Callable[[Model], Iterable[Finding]]
MODEL_CHECKS: tuple[tuple[str, str, Check], ...] = (
    ("axes_match_runtime", "axes equal the runtime enums", check_axes),
    ("tuples_well_formed", "legal tuples are named, distinct and declared", check_tuples),
    ("transitions_name_legal_tuples", "every transition names legal tuples",
     check_transition_names),
    ("reachability", "every legal tuple is reachable from the initial tuple", check_reachability),
    ("terminal_closure", "every non-terminal tuple reaches a terminal tuple",
     check_terminal_closure),
    ("terminal_tuples", "terminal tuples have no automatic exit", check_terminal_tuples),
    ("acknowledgement_preservation", "acknowledgement changes only on response/observation",
     check_acknowledgement),
    ("remote_effect_guards", "UNKNOWN and applied effects never change automatically",
     check_remote_effect),
    ("verification_guards", "failed/unprovable verification changes only by reconciliation",
     check_verification),
    ("model_invariants", "no legal tuple is a forbidden combination", check_invariants),
    ("retry_wait_guard", "RETRY_WAIT entry requires proof that nothing was applied",
     check_retry_wait),
    ("continuation_poll_receipt_only", "poll_receipt is the only automatic continuation",
     check_continuation),
    ("cas_and_leases", "CAS preconditions and lease separation", check_cas_and_leases),
    ("monotonic_fields", "monotonic fields advance where they must", check_monotonic),
    ("failure_mapping", "failure rows map to matching transitions", check_failure_mapping),
)
