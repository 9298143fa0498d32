"""The runtime guard of the delivery state machine.

``StateContract.from_document(data)`` builds the typed contract from the parsed
``dpone.rest-bulk-delivery-design.v1`` mapping; ``TransitionGuard.check(...)`` answers whether
one listed transition may be taken from one tuple under the caller's CAS view. A transition not
listed in the contract, from another tuple, under another lease, without its guard facts or its
reconciliation evidence is refused with ``IllegalTransition``; a stale revision or journal epoch
is refused with ``RevisionConflict``. ``Counters`` carries the monotonic fields and refuses any
decrease. Pure: no I/O, no YAML library; the journal adapters call it before their CAS update.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any

from dpone.contracts._axes import StateTuple
from dpone.contracts._names import StateName, Transition
from dpone.contracts._state_model import (
    SCHEMA_ID,
    FailureRow,
    ForbiddenCombination,
    ListedTransition,
    MonotonicField,
    MonotonicRule,
    ReconciliationStep,
    TransitionClass,
    Trigger,
    make_reader,
    parse_failure_row,
    parse_forbidden,
    parse_monotonic,
    parse_state,
    parse_transition,
)
from dpone.contracts._terms import EvidenceName, Fact, LeaseKind, TriggerKind

__all__ = [
    "SCHEMA_ID",
    "Counters",
    "Evidence",
    "EvidenceName",
    "Fact",
    "FailureRow",
    "ForbiddenCombination",
    "IllegalTransition",
    "LeaseKind",
    "ListedTransition",
    "MonotonicField",
    "MonotonicRule",
    "MonotonicityViolation",
    "ReconciliationStep",
    "RefusalReason",
    "RevisionConflict",
    "StateContract",
    "StateName",
    "StateTuple",
    "Transition",
    "TransitionClass",
    "TransitionDecision",
    "TransitionGuard",
    "TransitionRefused",
    "Trigger",
    "TriggerKind",
]


class RefusalReason(StrEnum):
    UNKNOWN_TRANSITION = "unknown_transition"
    ILLEGAL_TUPLE = "illegal_tuple"
    WRONG_SOURCE_TUPLE = "wrong_source_tuple"
    WRONG_LEASE = "wrong_lease"
    EVIDENCE_MISMATCH = "evidence_mismatch"
    GUARD_NOT_SATISFIED = "guard_not_satisfied"
    RECONCILIATION_ID_REQUIRED = "reconciliation_id_required"
    RECONCILIATION_ID_REUSED = "reconciliation_id_reused"
    EVIDENCE_DIGEST_REQUIRED = "evidence_digest_required"
    EVIDENCE_DIGEST_REUSED = "evidence_digest_reused"
    STALE_REVISION = "stale_revision"
    STALE_EPOCH = "stale_epoch"
    MONOTONIC_DECREASE = "monotonic_decrease"


class TransitionRefused(Exception):
    """A refused transition; the caller's state is unchanged."""

    def __init__(self, *, reason: RefusalReason, transition_id: str, message: str) -> None:
        super().__init__(f"{transition_id}: {message}")
        self.reason = reason
        self.transition_id = transition_id
        self.message = message


class IllegalTransition(TransitionRefused):
    """The transition is not listed for this tuple, lease, evidence or guard."""


class RevisionConflict(TransitionRefused):
    """The CAS predicate failed: the caller's revision or journal epoch is stale."""


class MonotonicityViolation(TransitionRefused):
    """A monotonic field would decrease (or skip where it must advance by one)."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the caller proves: the trigger, the guard facts that hold, reconciliation ids."""

    kind: TriggerKind
    name: str
    facts: frozenset[str] = frozenset()
    reconciliation_id: str | None = None
    evidence_digest: str | None = None

    @classmethod
    def listed(cls, transition: ListedTransition, facts: Collection[str] = (), *,
               reconciliation_id: str | None = None,
               evidence_digest: str | None = None) -> Evidence:
        """The trigger and evidence name the contract lists for ``transition``, with the facts
        (and reconciliation ids) the caller proves."""
        return cls(kind=transition.trigger.kind, name=transition.trigger.evidence,
                   facts=frozenset(facts), reconciliation_id=reconciliation_id,
                   evidence_digest=evidence_digest)


@dataclass(frozen=True, slots=True)
class TransitionDecision:
    """An admitted transition: the journal applies ``target`` with revision + 1."""

    transition: ListedTransition
    source: StateTuple
    target: StateTuple

    @property
    def transition_id(self) -> str:
        return self.transition.id

    @property
    def advances(self) -> tuple[str, ...]:
        return self.transition.advances

    @property
    def error_codes(self) -> tuple[str, ...]:
        return self.transition.error_codes


@dataclass(frozen=True, slots=True)
class Counters:
    """The monotonic fields of one operation's journal row."""

    journal_revision: int = 0
    journal_epoch: int = 0
    attempt_ordinal: int = 0
    observation_ordinal: int = 0
    correction_revision: int = 0
    highest_applied_generation: int = 0
    checkpoint_frontier: int = 0

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def advanced(self, decision: TransitionDecision) -> Counters:
        """The counters after ``decision``: revision + 1 and each advanced ordinal + 1."""
        bumped = {"journal_revision", *decision.advances}
        return replace(self, **{name: getattr(self, name) + 1 for name in bumped})

    def ensure_monotonic(self, after: Counters, transition_id: str = "<counters>") -> None:
        """Refuse ``after`` if any monotonic field decreased."""
        for name in self.field_names():
            if getattr(after, name) < getattr(self, name):
                raise MonotonicityViolation(
                    reason=RefusalReason.MONOTONIC_DECREASE, transition_id=transition_id,
                    message=f"{name} would decrease from {getattr(self, name)} to "
                    f"{getattr(after, name)}")


@dataclass(frozen=True, eq=False)
class StateContract:
    """The legal tuples and transitions of ``dpone.rest-bulk-delivery-design.v1``."""

    tuples: Mapping[str, StateTuple]
    transitions: Mapping[str, ListedTransition]
    initial: str
    terminal: frozenset[str]
    forbidden: tuple[ForbiddenCombination, ...]
    monotonic_fields: tuple[MonotonicField, ...]
    failure_mapping: tuple[FailureRow, ...]
    continuation_kinds: tuple[str, ...]
    _names: Mapping[StateTuple, str] = field(repr=False, compare=False)
    _outgoing: Mapping[str, tuple[ListedTransition, ...]] = field(repr=False, compare=False)

    @classmethod
    def from_document(cls, data: Mapping[str, Any]) -> StateContract:
        """Build the contract from its parsed mapping; refuse dangling names or duplicates."""
        reader = make_reader(data)
        if data.get("schema") != SCHEMA_ID:
            raise reader.fail("schema", f"expected {SCHEMA_ID!r}")
        tuples: dict[str, StateTuple] = {}
        for i, obj in enumerate(reader.items(data, "legal_tuples", "<root>")):
            path = f"legal_tuples[{i}]"
            name = reader.text(obj, "name", path)
            if name in tuples:
                raise reader.fail(f"{path}.name", f"tuple {name!r} is listed twice")
            tuples[name] = parse_state(reader, obj, path)
        names = {state: name for name, state in tuples.items()}
        if len(names) != len(tuples):
            raise reader.fail("legal_tuples", "two names denote the same tuple")
        transitions: dict[str, ListedTransition] = {}
        for key, cls_ in (("automatic_transitions", TransitionClass.AUTOMATIC),
                          ("operator_transitions", TransitionClass.OPERATOR)):
            for i, obj in enumerate(reader.items(data, key, "<root>")):
                transition = parse_transition(reader, obj, f"{key}[{i}]", cls_)
                if transition.id in transitions:
                    raise reader.fail(f"{key}[{i}].id", f"{transition.id!r} is listed twice")
                for end in (transition.source, transition.target):
                    if end not in tuples:
                        raise reader.fail(f"{key}[{i}]", f"{end!r} is not a legal tuple")
                transitions[transition.id] = transition
        initial = reader.text(data, "initial_tuple", "<root>")
        terminal = frozenset(reader.texts(data, "terminal_tuples", "<root>"))
        for name in {initial} | terminal:
            if name not in tuples:
                raise reader.fail("terminal_tuples", f"{name!r} is not a legal tuple")
        monotonic = tuple(parse_monotonic(reader, obj, f"monotonic_fields[{i}]")
                          for i, obj in enumerate(reader.items(data, "monotonic_fields", "")))
        if {m.name for m in monotonic} != set(Counters.field_names()):
            raise reader.fail("monotonic_fields", "must list exactly the fields of Counters: "
                              + ", ".join(Counters.field_names()))
        outgoing: dict[str, list[ListedTransition]] = {name: [] for name in tuples}
        for transition in transitions.values():
            outgoing[transition.source].append(transition)
        return cls(
            tuples=tuples,
            transitions=transitions,
            initial=initial,
            terminal=terminal,
            forbidden=tuple(parse_forbidden(reader, obj, f"forbidden_combinations[{i}]") for i, obj
                            in enumerate(reader.items(data, "forbidden_combinations", ""))),
            monotonic_fields=monotonic,
            failure_mapping=tuple(parse_failure_row(reader, obj, f"failure_mapping[{i}]") for i, obj
                                  in enumerate(reader.items(data, "failure_mapping", ""))),
            continuation_kinds=reader.texts(data, "continuation_kinds", "<root>"),
            _names=names,
            _outgoing={name: tuple(items) for name, items in outgoing.items()},
        )

    @property
    def initial_tuple(self) -> StateTuple:
        return self.tuples[self.initial]

    def name_of(self, state: StateTuple) -> str | None:
        """The contract name of ``state``, or None when the tuple is not legal."""
        return self._names.get(state)

    def is_legal(self, state: StateTuple) -> bool:
        return state in self._names

    def is_terminal(self, state: StateTuple) -> bool:
        return self._names.get(state) in self.terminal

    def outgoing(self, state: StateTuple | str) -> tuple[ListedTransition, ...]:
        name = state if isinstance(state, str) else self._names.get(state)
        return self._outgoing.get(name, ()) if name is not None else ()

    def violated_combinations(self, state: StateTuple) -> tuple[str, ...]:
        return tuple(rule.id for rule in self.forbidden if rule.matches(state))


class TransitionGuard:
    """Admits or refuses one transition; it never mutates anything."""

    def __init__(self, contract: StateContract) -> None:
        self.contract = contract

    def listed(self, transition_id: str) -> ListedTransition:
        """The contract's entry for ``transition_id``; an unlisted id is refused."""
        transition = self.contract.transitions.get(transition_id)
        if transition is None:
            raise IllegalTransition(reason=RefusalReason.UNKNOWN_TRANSITION,
                                    transition_id=transition_id,
                                    message="the transition is not listed in the contract")
        return transition

    def check(
        self,
        from_tuple: StateTuple,
        transition_id: str,
        *,
        expected_revision: int,
        actual_revision: int,
        lease_kind: LeaseKind,
        journal_epoch: int,
        current_epoch: int,
        evidence: Evidence,
        prior_reconciliation_ids: Collection[str] = (),
        prior_evidence_digests: Collection[str] = (),
    ) -> TransitionDecision:
        """The decision for ``transition_id`` from ``from_tuple``, or a typed refusal."""
        transition = self.listed(transition_id)
        if transition.journal_epoch and journal_epoch != current_epoch:
            raise RevisionConflict(reason=RefusalReason.STALE_EPOCH, transition_id=transition_id,
                                   message=f"journal epoch {journal_epoch} is not the current "
                                   f"epoch {current_epoch}")
        if transition.expected_revision and expected_revision != actual_revision:
            raise RevisionConflict(reason=RefusalReason.STALE_REVISION,
                                   transition_id=transition_id,
                                   message=f"expected revision {expected_revision}, the journal "
                                   f"holds {actual_revision}")
        source = self.contract.name_of(from_tuple)
        if source is None:
            raise IllegalTransition(reason=RefusalReason.ILLEGAL_TUPLE,
                                    transition_id=transition_id,
                                    message=f"{from_tuple.render()} is not a legal tuple")
        self._check_listed(transition, source, lease_kind, evidence)
        self._check_reconciliation(transition, evidence, prior_reconciliation_ids,
                                   prior_evidence_digests)
        return TransitionDecision(transition=transition, source=from_tuple,
                                  target=self.contract.tuples[transition.target])

    @staticmethod
    def _check_listed(transition: ListedTransition, source: str, lease_kind: LeaseKind,
                      evidence: Evidence) -> None:
        tid = transition.id
        if transition.source != source:
            raise IllegalTransition(reason=RefusalReason.WRONG_SOURCE_TUPLE, transition_id=tid,
                                    message=f"listed from {transition.source!r}, not {source!r}")
        if lease_kind is not transition.lease:
            raise IllegalTransition(reason=RefusalReason.WRONG_LEASE, transition_id=tid,
                                    message=f"needs the {transition.lease} lease, "
                                    f"not {lease_kind}")
        if (evidence.kind, evidence.name) != (transition.trigger.kind, transition.trigger.evidence):
            raise IllegalTransition(reason=RefusalReason.EVIDENCE_MISMATCH, transition_id=tid,
                                    message=f"triggered by {transition.trigger.kind}:"
                                    f"{transition.trigger.evidence}, not "
                                    f"{evidence.kind}:{evidence.name}")
        missing = sorted(transition.requires - evidence.facts)
        if missing:
            raise IllegalTransition(reason=RefusalReason.GUARD_NOT_SATISFIED, transition_id=tid,
                                    message="guard facts not proven: " + ", ".join(missing))

    @staticmethod
    def _check_reconciliation(transition: ListedTransition, evidence: Evidence,
                              prior_ids: Collection[str], prior_digests: Collection[str]) -> None:
        step, tid = transition.reconciliation, transition.id
        if step is None:
            return
        if not evidence.reconciliation_id:
            raise IllegalTransition(reason=RefusalReason.RECONCILIATION_ID_REQUIRED,
                                    transition_id=tid, message="a reconciliation id is required")
        if step is ReconciliationStep.OPEN and evidence.reconciliation_id in prior_ids:
            raise IllegalTransition(reason=RefusalReason.RECONCILIATION_ID_REUSED,
                                    transition_id=tid,
                                    message="a reconciliation opens with a new id")
        if step is ReconciliationStep.RESOLVE:
            if not evidence.evidence_digest:
                raise IllegalTransition(reason=RefusalReason.EVIDENCE_DIGEST_REQUIRED,
                                        transition_id=tid,
                                        message="a resolution needs a new evidence digest")
            if evidence.evidence_digest in prior_digests:
                raise IllegalTransition(reason=RefusalReason.EVIDENCE_DIGEST_REUSED,
                                        transition_id=tid,
                                        message="the evidence digest was already recorded; "
                                        "prior evidence is never reused")

