"""The typed model of ``dpone.rest-bulk-delivery-design.v1``, built from its parsed mapping.

Pure: it takes the plain data the bounded YAML loader produced (or any equal mapping) and never
reads a file. A malformed mapping is refused with ``contract.schema_invalid`` and the YAML path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from dpone.contracts._axes import (
    AXES,
    AcknowledgementState,
    CheckpointState,
    ExecutionState,
    RemoteEffect,
    StateTuple,
    VerificationState,
)
from dpone.contracts._errors import DponeError, Location
from dpone.contracts._terms import LeaseKind, TriggerKind

SCHEMA_ID = "dpone.rest-bulk-delivery-design.v1"


class TransitionClass(StrEnum):
    AUTOMATIC = "automatic"
    OPERATOR = "operator"


class ReconciliationStep(StrEnum):
    """``open`` needs a new reconciliation id; ``resolve`` needs it and a new evidence digest."""

    OPEN = "open"
    RESOLVE = "resolve"


class MonotonicRule(StrEnum):
    INCREMENT_BY_ONE = "increment_by_one"
    NON_DECREASING = "non_decreasing"


@dataclass(frozen=True, slots=True)
class Trigger:
    kind: TriggerKind
    evidence: str


@dataclass(frozen=True, slots=True)
class ListedTransition:
    """The contract's entry for one transition: its guard facts and CAS preconditions.

    ``id`` is a :class:`~dpone.contracts._names.Transition` value; it stays a string here so a
    contract file under check may list ids the generated symbols do not know yet.
    """

    id: str
    transition_class: TransitionClass
    source: str
    target: str
    trigger: Trigger
    guard: str
    requires: frozenset[str]
    lease: LeaseKind
    expected_revision: bool
    journal_epoch: bool
    advances: tuple[str, ...]
    error_codes: tuple[str, ...]
    refusal_codes: tuple[str, ...]
    continuation: str | None
    reconciliation: ReconciliationStep | None

    @property
    def automatic(self) -> bool:
        return self.transition_class is TransitionClass.AUTOMATIC


@dataclass(frozen=True, slots=True)
class ForbiddenCombination:
    id: str
    when: Mapping[str, frozenset[str]]
    reason: str

    def matches(self, state: StateTuple) -> bool:
        return all(state.axis(axis) in values for axis, values in self.when.items())


@dataclass(frozen=True, slots=True)
class MonotonicField:
    name: str
    rule: MonotonicRule
    scope: str
    description: str


@dataclass(frozen=True, slots=True)
class FailureRow:
    id: str
    evidence: str
    remote_effects: tuple[str, ...]
    automatic_action: str
    checkpoint_states: tuple[str, ...]
    error_codes: tuple[str, ...]
    transitions: tuple[str, ...]


_E = TypeVar("_E", bound=StrEnum)


class _Reader:
    """Typed access to the plain mapping; every refusal names the YAML path."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data

    @staticmethod
    def fail(path: str, message: str) -> DponeError:
        return DponeError(code="contract.schema_invalid", message=f"{path}: {message}",
                          location=Location(path=path))

    def get(self, obj: Any, key: str, path: str) -> Any:
        if not isinstance(obj, Mapping) or key not in obj:
            raise self.fail(path, f"missing field {key!r}")
        return obj[key]

    def text(self, obj: Any, key: str, path: str) -> str:
        value = self.get(obj, key, path)
        if not isinstance(value, str):
            raise self.fail(f"{path}.{key}", "expected a string")
        return value

    def items(self, obj: Any, key: str, path: str, *, optional: bool = False) -> list[Any]:
        if optional and (not isinstance(obj, Mapping) or key not in obj):
            return []
        value = self.get(obj, key, path)
        if not isinstance(value, list):
            raise self.fail(f"{path}.{key}", "expected a list")
        return value

    def texts(self, obj: Any, key: str, path: str, *, optional: bool = False) -> tuple[str, ...]:
        values = self.items(obj, key, path, optional=optional)
        if not all(isinstance(v, str) for v in values):
            raise self.fail(f"{path}.{key}", "expected a list of strings")
        return tuple(values)

    def enum(self, kind: type[_E], obj: Any, key: str, path: str) -> _E:
        value = self.text(obj, key, path)
        try:
            return kind(value)
        except ValueError:
            raise self.fail(f"{path}.{key}", f"{value!r} is not a {kind.__name__}") from None


def parse_state(reader: _Reader, obj: Any, path: str) -> StateTuple:
    return StateTuple(
        execution_state=reader.enum(ExecutionState, obj, "execution_state", path),
        remote_effect=reader.enum(RemoteEffect, obj, "remote_effect", path),
        acknowledgement_state=reader.enum(AcknowledgementState, obj, "acknowledgement_state", path),
        verification_state=reader.enum(VerificationState, obj, "verification_state", path),
        checkpoint_state=reader.enum(CheckpointState, obj, "checkpoint_state", path),
    )


def parse_transition(reader: _Reader, obj: Any, path: str, cls: TransitionClass) -> ListedTransition:
    trigger = reader.get(obj, "trigger", path)
    cas = reader.get(obj, "cas", path)
    flags = {key: reader.get(cas, key, f"{path}.cas") for key in ("expected_revision",
                                                                    "journal_epoch")}
    if not all(isinstance(flag, bool) for flag in flags.values()):
        raise reader.fail(f"{path}.cas", "expected_revision and journal_epoch are booleans")
    step = obj.get("reconciliation") if isinstance(obj, Mapping) else None
    continuation = obj.get("continuation") if isinstance(obj, Mapping) else None
    return ListedTransition(
        id=reader.text(obj, "id", path),
        transition_class=cls,
        source=reader.text(obj, "from", path),
        target=reader.text(obj, "to", path),
        trigger=Trigger(kind=reader.enum(TriggerKind, trigger, "kind", f"{path}.trigger"),
                        evidence=reader.text(trigger, "evidence", f"{path}.trigger")),
        guard=reader.text(obj, "guard", path),
        requires=frozenset(reader.texts(obj, "requires", path, optional=True)),
        lease=reader.enum(LeaseKind, cas, "lease", f"{path}.cas"),
        expected_revision=flags["expected_revision"],
        journal_epoch=flags["journal_epoch"],
        advances=reader.texts(obj, "advances", path, optional=True),
        error_codes=reader.texts(obj, "error_codes", path, optional=True),
        refusal_codes=reader.texts(obj, "refusal_codes", path, optional=True),
        continuation=str(continuation) if continuation is not None else None,
        reconciliation=reader.enum(ReconciliationStep, obj, "reconciliation", path)
        if step is not None else None,
    )


def parse_forbidden(reader: _Reader, obj: Any, path: str) -> ForbiddenCombination:
    when = reader.get(obj, "when", path)
    if not isinstance(when, Mapping) or not when or not set(when) <= set(AXES):
        raise reader.fail(f"{path}.when", "expected a mapping of axis names to value lists")
    return ForbiddenCombination(
        id=reader.text(obj, "id", path),
        when={axis: frozenset(reader.texts(when, axis, f"{path}.when")) for axis in when},
        reason=reader.text(obj, "reason", path),
    )


def parse_monotonic(reader: _Reader, obj: Any, path: str) -> MonotonicField:
    return MonotonicField(
        name=reader.text(obj, "name", path),
        rule=reader.enum(MonotonicRule, obj, "rule", path),
        scope=reader.text(obj, "scope", path),
        description=reader.text(obj, "description", path),
    )


def parse_failure_row(reader: _Reader, obj: Any, path: str) -> FailureRow:
    return FailureRow(
        id=reader.text(obj, "id", path),
        evidence=reader.text(obj, "evidence", path),
        remote_effects=reader.texts(obj, "remote_effects", path),
        automatic_action=reader.text(obj, "automatic_action", path),
        checkpoint_states=reader.texts(obj, "checkpoint_states", path),
        error_codes=reader.texts(obj, "error_codes", path),
        transitions=reader.texts(obj, "transitions", path),
    )


def make_reader(data: Mapping[str, Any]) -> _Reader:
    return _Reader(data)
