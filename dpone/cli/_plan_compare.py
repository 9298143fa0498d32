"""Two sides of a plan comparison and their semantic difference as a document part.

Shared by `dpone plan diff` and `dpone plan --all --check`: a side is a plan, its digest and
where it was read from; :func:`compare` classifies the difference (:mod:`dpone.plans._diff`)
into a :class:`~dpone.contracts.documents.PlanComparison`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dpone.contracts.documents import (
    ChangedField,
    ConsequenceGroup,
    IdentityChange,
    PlanComparison,
    PlanDiffDocument,
    PlanSide,
)
from dpone.contracts.plan import RestDeliveryPlan
from dpone.plans import CONSEQUENCES, IDENTITY_MEANING, MEANING, diff_plans


@dataclass(frozen=True, slots=True)
class Side:
    plan: RestDeliveryPlan
    digest: str
    source: str

    def document(self) -> PlanSide:
        return PlanSide(digest=self.digest, source=self.source)


def compare(old: Side | None, new: Side | None) -> PlanComparison:
    """The comparison of ``old`` and ``new`` (one may be None: an added or removed plan)."""
    either = new or old
    if either is None:
        raise ValueError("a comparison needs at least one side")
    name, environment = either.plan.logical_route_id, either.plan.environment.ref
    old_side, new_side = (old.document() if old else None), (new.document() if new else None)
    if old is None or new is None:
        return PlanComparison(name=name, environment=environment,
                              status="added" if old is None else "removed", consequences=(),
                              identities=(), new_intent=old is None, old=old_side,
                              new=new_side)
    diff = diff_plans(old.plan, new.plan)
    groups = tuple(
        ConsequenceGroup(consequence=consequence, meaning=MEANING[consequence],
                         changes=tuple(ChangedField(path=c.path, old=c.old, new=c.new)
                                       for c in changes))
        for consequence, changes in diff.by_consequence().items())
    identities = tuple(IdentityChange(name=c.path, meaning=IDENTITY_MEANING[c.path], old=c.old,
                                      new=c.new) for c in diff.identity_changes)
    changed = diff.changed or old.digest != new.digest
    return PlanComparison(name=name, environment=environment,
                          status="changed" if changed else "unchanged", consequences=groups,
                          identities=identities, new_intent=diff.new_intent, old=old_side,
                          new=new_side)


def diff_document(comparisons: Iterable[PlanComparison]) -> PlanDiffDocument:
    plans = tuple(comparisons)
    counts = {name: sum(1 for p in plans if any(g.consequence == name for g in p.consequences))
              for name in CONSEQUENCES}
    return PlanDiffDocument(changed=any(p.changed for p in plans), plans=plans,
                            consequences={k: v for k, v in counts.items() if v})
