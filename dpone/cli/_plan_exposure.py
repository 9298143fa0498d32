"""What a plan change means for a journal and for the children of an interval.

* :func:`journal_exposure`: an identity or payload change makes a new delivery intent for the
  same windows. The journal's deliveries of the same workload are named: an unfinished one
  conflicts when its window runs again under the new plan; an applied one is not resent, and
  running its window again is a second effect at the receiver. Read-only: one bounded listing,
  then each of the workload's deliveries by id; nothing is migrated or written.
* :func:`child_estimate`: the planner cuts the interval under each plan (the source frozen now,
  sealed into a scratch store that is removed afterwards; nothing is published).
"""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

from dpone.cli._hints import redact
from dpone.cli._inputs import close_quietly, open_existing_journal
from dpone.cli._plan_compare import Side
from dpone.contracts.documents import ChildEstimate, ExposedDelivery, Interval, JournalExposure
from dpone.contracts.plan import RestDeliveryPlan


def journal_exposure(old: Side, url: str, environment_id: str, operation_namespace: str | None,
                     limit: int) -> JournalExposure:
    """The deliveries of ``old``'s workload among the journal's ``limit`` newest."""
    from dpone.executor.supervisor import delivery_status  # noqa: PLC0415 - only with a journal

    journal = open_existing_journal(url, environment_id=environment_id,
                                    operation_namespace=operation_namespace)
    try:
        summaries = journal.list_deliveries(limit)
        exposed = []
        for summary in summaries:
            if summary.logical_route_id != old.plan.logical_route_id:
                continue
            parent = journal.load_parent(summary.parent_id)
            status = delivery_status(summary.standings)
            exposed.append(ExposedDelivery(
                parent_id=summary.parent_id,
                boundary=Interval.of(summary.boundary_from, summary.boundary_to),
                status=status, plan_digest=parent.plan_digest,
                under_old_plan=parent.plan_digest == old.digest,
                effect="applied_new_intent_on_rerun" if status == "completed"
                else "conflicts_on_next_run"))
    finally:
        close_quietly(journal)
    return JournalExposure(journal=redact(url), environment_id=environment_id,
                           deliveries=tuple(exposed), scanned=len(summaries))


def _children(plan: RestDeliveryPlan, digest: str, registry: Path, start: dt.date,
              end: dt.date) -> tuple[int, int]:
    from dpone.artifacts import open_artifact_store  # noqa: PLC0415 - only for an estimate
    from dpone.executor.seal import seal_boundary  # noqa: PLC0415 - only for an estimate
    from dpone.executor.source import source_dsn  # noqa: PLC0415 - only for an estimate

    with tempfile.TemporaryDirectory(prefix="dpone-estimate-") as scratch:
        sealed = seal_boundary(plan, digest, open_artifact_store(scratch),
                               registry_root=registry, interval_start=start,
                               interval_end=end, postgres_dsn=source_dsn(plan.source))
    return len(sealed.topology.children), sealed.topology.total_rows


def child_estimate(old: Side, new: Side, old_registry: Path, new_registry: Path,
                   start: dt.date, end: dt.date) -> ChildEstimate:
    """How many children ``[start, end)`` is cut into under each plan."""
    before, rows = _children(old.plan, old.digest, old_registry, start, end)
    after, _ = _children(new.plan, new.digest, new_registry, start, end)
    return ChildEstimate(interval=Interval.of(start, end), rows=rows, before=before, after=after)
