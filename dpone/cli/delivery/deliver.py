"""`dpone deliver`: freeze, seal, admit and deliver one source boundary to its receiver."""

from __future__ import annotations

import contextlib
import datetime as dt
from pathlib import Path
from typing import Final

import click

from dpone.artifacts import open_artifact_store
from dpone.cli._hints import Locators, ProofWays, inspect_command, resume_command
from dpone.cli._inputs import (
    DEFAULT_JOURNAL,
    boundary_options,
    close_quietly,
    open_existing_journal,
    read_target_plan,
    sealed_boundary,
)
from dpone.cli._output import FORMAT_OPTION, emit_json, run_guarded
from dpone.cli._seal_log import changed_since_seal
from dpone.cli.delivery._delivery_result import DeliveryStopped, RunResult, emit_result
from dpone.cli.delivery._delivery_run import SealedShape, StepPrinter, delivery_ports, holder
from dpone.cli.delivery._report import child_rows
from dpone.compiler.environment_file import lease_policy
from dpone.contracts import DponeError
from dpone.contracts.documents import EmptyResult, Interval, SourceChange
from dpone.contracts.journal import DeliveryJournalPort, DeliveryJournalView, ParentOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedTopology
from dpone.executor.clock import SystemClock
from dpone.executor.supervisor import (
    check_profile,
    deliver,
    delivery_status,
    parent_admission,
    plan_tenancy,
)
from dpone.plans import publish_plan


def _empty(plan: RestDeliveryPlan, topology: SealedTopology, fmt: str,
           source_change: SourceChange | None) -> int:
    """No rows in the boundary: nothing is admitted or sent (the profile's empty_input policy)."""
    policy = plan.profile.snapshot.result_policy.empty_input
    boundary = Interval.of(topology.coverage.boundary_from, topology.coverage.boundary_to)
    if fmt == "json":
        emit_json(EmptyResult(boundary=boundary, empty_input=policy, children_total=0,
                              rows_total=0, children=(), source_changed_since_seal=source_change))
    else:
        click.echo(f"empty: {boundary.render()} holds no rows; nothing was "
                   f"admitted or sent (empty_input: {policy})")
    return 0


_NEW_BYTES: Final = {
    "partition_replace": "To deliver the new bytes, create an explicit governed generation: "
    "raise the workload's sink.mutation.correction_revision (docs/generations.md).",
    "incremental_append": "An appended scope is delivered once: its new bytes are not sent "
    "again (a correction generation needs kind partition_replace, docs/generations.md).",
}


def _conflict_hint(error: DponeError, journal: DeliveryJournalView, locators: Locators) -> None:
    """An intent conflict with an admitted delivery: resume it, or, when it is complete, inspect
    it (a resume would find nothing to do) and deliver the new bytes as a new generation."""
    admitted = error.details.get("conflicting_operation_id") or error.operation_id
    if error.code != "REST_DELIVERY_INTENT_CONFLICT" or not admitted or error.hint is not None:
        return
    try:
        parent: ParentOperation | None = journal.load_parent(journal.get_child(admitted).parent_id)
    except DponeError:
        parent = None
    if parent is None:
        error.hint = ("The admitted delivery continues from its own sealed plan, without "
                      f"re-reading the source: {resume_command(admitted, locators)}. To "
                      "deliver the new bytes, create an explicit governed generation.")
    elif delivery_status(parent.children) == "completed":
        error.hint = (f"The admitted delivery {parent.parent_id} of these keys is complete: "
                      "nothing is left to resume. Inspect it: "
                      f"{inspect_command(parent.parent_id, locators)}. "
                      f"{_NEW_BYTES[parent.mutation_kind]}")
    else:
        error.hint = ("The admitted delivery continues from its own sealed plan, without "
                      f"re-reading the source: {resume_command(parent.parent_id, locators)}. "
                      f"{_NEW_BYTES[parent.mutation_kind]}")


def _admitted(journal: DeliveryJournalPort, plan: RestDeliveryPlan,
              topology: SealedTopology) -> ParentOperation | None:
    """The journal's delivery of ``topology`` when it was admitted (by this run or earlier);
    None when it was not, or when the journal cannot say."""
    admission = parent_admission(plan, topology)
    with contextlib.suppress(DponeError):
        return journal.find_parent(admission.tenancy, admission.parent_plan_digest)
    return None


def _refuse_held_leases(plan: RestDeliveryPlan, plan_digest: str, journal_url: str,
                        boundary: tuple[dt.date, dt.date]) -> None:
    """Stop with ``journal.lease_held`` before any freeze or seal work when this plan already
    admitted this boundary and another worker still holds a mutation lease of one of its
    children (a crashed run's lease, until it expires). Any other answer, including a journal
    that does not exist yet or cannot be read, leaves the decision to the delivery itself."""
    tenancy = plan_tenancy(plan)
    try:
        journal = open_existing_journal(journal_url, environment_id=tenancy.environment_id)
    except DponeError:
        return
    try:
        journal.check_admitted_leases(tenancy, plan_digest, *boundary)
    except DponeError as error:
        if error.code == "journal.lease_held":
            raise
    finally:
        close_quietly(journal)


@click.command(name="deliver")
@boundary_options
@click.option("--journal", "journal_url", default=DEFAULT_JOURNAL, show_default=True,
              help="Journal: a SQLite file (local development) or postgresql://... URL.")
@click.option("--wait/--no-wait", "wait", default=False, show_default=True,
              help="Keep observing asynchronous jobs in-process until every child is terminal.")
@FORMAT_OPTION
def deliver_command(target: str, registry: Path, interval_start: dt.datetime,
                    interval_end: dt.datetime, journal_url: str, artifacts_url: str,
                    plans: Path, wait: bool, fmt: str) -> None:
    """Deliver [--interval-start, --interval-end) through the plan's operation profile.

    Publishes the plan into the artifact store (create-if-absent, by its digest: recovery
    loads it from there), freezes and seals the boundary (create-if-absent), admits the whole
    child topology in one journal transaction, then submits, observes, verifies and promotes
    each child. Running it again resumes from the journal: nothing that may have reached the
    receiver is resent.
    Once admitted, every outcome is a dpone.delivery_result.v1 summary (status completed,
    pending, blocked or stopped) with the delivery id and the next command.
    Exit 0 delivered or pending on a durable receipt, 2 invalid or intent conflict,
    3 unavailable, 4 remote effect unknown or partial, 5 proven terminal receiver failure.
    """

    def body() -> int:
        loaded = read_target_plan(target, registry, plans, persist=True)
        plan, plan_digest = loaded.plan, loaded.digest
        check_profile(plan)
        environment = plan.environment.snapshot
        locators = Locators.given(environment=environment.environment_id, journal=journal_url,
                                  artifacts=artifacts_url, plans=plans)
        _refuse_held_leases(plan, plan_digest, journal_url,
                            (interval_start.date(), interval_end.date()))
        store = open_artifact_store(artifacts_url)
        # Recovery on any machine loads the plan by digest from the artifact store.
        publish_plan(store, plan_digest, loaded.canonical)
        topology = sealed_boundary(plan, plan_digest, registry, interval_start.date(),
                                   interval_end.date(), store).topology
        source_change = changed_since_seal(
            store, topology, "this delivery sends the new bytes unless an admitted delivery of "
            "the boundary refuses them")
        if not topology.children:
            return _empty(plan, topology, fmt, source_change)
        with delivery_ports(plan, journal_url, store, environment_id=environment.environment_id,
                            announce=f"delivering {len(topology.children)} child(ren)") as (
                journal, transport, run_store):
            shape = SealedShape.of_topology(topology)
            printer = StepPrinter(shape)
            result: RunResult
            try:
                result = deliver(plan, topology, journal, run_store, transport, holder=holder(),
                                 wait=wait, clock=SystemClock(), observer=printer,
                                 on_wait=printer.wait,
                                 leases=lease_policy(registry, plan.environment.ref))
            except DponeError as error:
                parent = _admitted(journal, plan, topology)
                if parent is None:
                    _conflict_hint(error, journal, locators)
                    raise
                result = DeliveryStopped.of(error, parent)
            finally:
                printer.close()
            children = child_rows(journal.load_parent(result.parent_id), topology.children)
        return emit_result(result, shape, children, fmt, locators, wait=wait,
                           extra={"source_changed_since_seal": source_change},
                           ways=ProofWays.of(plan))

    run_guarded(fmt, body)
