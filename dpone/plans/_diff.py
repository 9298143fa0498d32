"""The semantic difference of two compiled plans, grouped by what each change means.

A plan file is one canonical JSON line named by its digest: a text diff of two of them says
nothing a reviewer can act on. :func:`diff_plans` compares the two plans field by field and puts
every changed leaf in one consequence class (the first row of :data:`RULES` whose path prefix
matches; anything unlisted is identity, the class that fails closed):

* ``identity``: what a delivery is (operation semantics, namespace, route, receiver, binding
  principal, mutation scope): a new delivery intent for the same windows;
* ``payload``: what is sent (mapping, codec, source): new sealed bytes and mutation intents;
* ``planning``: how a new boundary is cut into children (limits, window length, planner);
* ``execution_policy``: how a run behaves (timeouts, retries, rates, retention, TLS/network
  policy details, certification): same identity, in-flight deliveries continue;
* ``descriptive``: words only (descriptions, lifecycle).

The plan's own digests (operation semantics, execution policy, profile contract, binding
semantics, mapping, namespace, effect-conflict domain) are derived from the fields: they are
reported as the identities that changed, never as changes of their own.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from dpone.contracts.plan import RestDeliveryPlan

Consequence = Literal["identity", "payload", "planning", "execution_policy", "descriptive"]
CONSEQUENCES: Final[tuple[Consequence, ...]] = (
    "identity", "payload", "planning", "execution_policy", "descriptive")

MEANING: Final[Mapping[Consequence, str]] = {
    "identity": "a new delivery identity for the same windows: a window admitted under the old "
                "plan and not finished conflicts on the next run; finish or reconcile it first",
    "payload": "new sealed bytes and mutation intents for the same windows: an unfinished window "
               "of the old plan is refused as an intent conflict; finished windows are not resent",
    "planning": "new boundaries are cut into different children; admitted deliveries keep their "
                "sealed topology",
    "execution_policy": "same identity: in-flight deliveries continue, the next run behaves by "
                        "the new policy",
    "descriptive": "nothing that is sent or decided changes",
}

DERIVED: Final = (
    "profile.operation_semantics_digest", "profile.execution_policy_digest",
    "profile.profile_contract_digest", "binding.receiver_binding_semantics_digest",
    "mapping_digest", "environment.operation_namespace", "effect_conflict_domain")
"""The plan's identities: computed from its fields, reported as which identities changed."""

IDENTITY_MEANING: Final[Mapping[str, str]] = {
    "profile.operation_semantics_digest":
        "part of every child's mutation intent (request, body, codec, limits, acknowledgement, "
        "fence): an unfinished window of the old plan is refused as an intent conflict",
    "binding.receiver_binding_semantics_digest":
        "part of every child's mutation intent (the receiver and its principal): an "
        "unfinished window of the old plan is refused as an intent conflict",
    "environment.operation_namespace":
        "part of every receiver mutation key: the receiver sees every window as a new delivery",
    "mapping_digest": "the payload mapping: new sealed bytes, so new mutation intents",
    "effect_conflict_domain":
        "where overlapping generations are ordered: the old plan's deliveries no longer order "
        "the new plan's",
    "profile.execution_policy_digest":
        "how runs behave (timeouts, retries, rates, retention, observability): in no identity",
    "profile.profile_contract_digest":
        "the whole profile contract (semantics, policy, version), as certification names it",
}
"""What each identity in :data:`DERIVED` decides when it changes."""

INTENT_IDENTITIES: Final = frozenset({
    "profile.operation_semantics_digest", "binding.receiver_binding_semantics_digest",
    "environment.operation_namespace", "mapping_digest", "effect_conflict_domain"})
"""The identities a delivery's intent, key or conflict domain is derived from."""

RULES: Final[tuple[tuple[str, Consequence], ...]] = (
    ("workload.description", "descriptive"),
    ("profile.snapshot.description", "descriptive"),
    ("profile.snapshot.lifecycle", "descriptive"),
    ("profile.snapshot.maturity", "execution_policy"),
    ("binding.snapshot.certification_scope", "execution_policy"),
    ("mapping.description", "descriptive"),
    ("profile.snapshot.timeouts", "execution_policy"),
    ("profile.snapshot.retry", "execution_policy"),
    ("profile.snapshot.rate", "execution_policy"),
    ("profile.snapshot.retention", "execution_policy"),
    ("profile.snapshot.observability", "execution_policy"),
    ("binding.tls_policy", "execution_policy"),
    ("binding.network_policy", "execution_policy"),
    ("binding.snapshot.credential_ref", "execution_policy"),
    ("binding.snapshot.remote_identity", "execution_policy"),
    ("fence.certified_in_environment", "execution_policy"),
    ("fence.certified_retention_s", "execution_policy"),
    ("environment.snapshot.control_plane", "execution_policy"),
    ("environment.snapshot.leases", "execution_policy"),
    ("profile.snapshot.limits", "planning"),
    ("effective_limits", "planning"),
    ("workload.sink.delivery_overrides", "planning"),
    ("planner_algorithm_version", "planning"),
    ("mapping", "payload"),
    ("workload.sink.payload", "payload"),
    ("profile.snapshot.codec", "payload"),
    ("source", "payload"),
    ("workload.source", "payload"),
)


@dataclass(frozen=True, slots=True)
class Change:
    """One changed leaf: its dotted path, the old and new values (``None``: absent)."""

    path: str
    old: Any
    new: Any
    consequence: Consequence


@dataclass(frozen=True, slots=True)
class PlanDiff:
    changes: tuple[Change, ...]
    identity_changes: tuple[Change, ...]
    """The plan digests (:data:`DERIVED` paths) whose value changed, with both values."""

    @property
    def identities(self) -> tuple[str, ...]:
        """The paths of :attr:`identity_changes`."""
        return tuple(change.path for change in self.identity_changes)

    @property
    def changed(self) -> bool:
        return bool(self.changes or self.identities)

    @property
    def new_intent(self) -> bool:
        """A window run under the new plan is a new delivery intent (an identity or payload
        change, or a moved intent identity such as the operation semantics' limits)."""
        return (any(c.consequence in ("identity", "payload") for c in self.changes)
                or bool(INTENT_IDENTITIES.intersection(self.identities)))

    def by_consequence(self) -> dict[Consequence, tuple[Change, ...]]:
        """The changes of each class that has any, in :data:`CONSEQUENCES` order."""
        grouped = {name: tuple(c for c in self.changes if c.consequence == name)
                   for name in CONSEQUENCES}
        return {name: changes for name, changes in grouped.items() if changes}


def consequence_of(path: str) -> Consequence:
    """The class of a change at ``path`` (identity when no rule names it)."""
    for prefix, consequence in RULES:
        if path == prefix or path.startswith((prefix + ".", prefix + "[")):
            return consequence
    return "identity"


def diff_plans(old: RestDeliveryPlan, new: RestDeliveryPlan) -> PlanDiff:
    """Every changed leaf of ``new`` against ``old``, classified; the changed identities."""
    before = dict(_leaves(old.model_dump(mode="json", by_alias=True)))
    after = dict(_leaves(new.model_dump(mode="json", by_alias=True)))
    changes = []
    identities = []
    for path in sorted(before.keys() | after.keys()):
        was, now = before.get(path), after.get(path)
        if was == now:
            continue
        if path in DERIVED:
            identities.append(Change(path, was, now, "identity"))
        else:
            changes.append(Change(path, was, now, consequence_of(path)))
    return PlanDiff(tuple(changes), tuple(identities))


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, scalar) of every leaf; an empty mapping or list is a leaf of its own."""
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}[{index}]")
    else:
        yield path, value
