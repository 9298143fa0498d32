"""One source boundary delivered through a loaded plan: what `dpone deliver` and
`dpone-executor run` share once they hold the plan, its digest and their stores.

The plan is published into the artifact store (create-if-absent, by its digest), the boundary
is frozen and sealed, the topology admitted in one journal transaction and every child driven
by the supervisor. The caller renders the :class:`RunOutcome`: the ``dpone.delivery_result.v1``
document, its text summary and the exit code.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import click

from dpone.cli._environment import ControlPlane
from dpone.cli._hints import Locators, ProofWays, inspect_command, redact, resume_command
from dpone.cli._inputs import (
    Journal,
    close_quietly,
    journal_exists,
    open_existing_journal,
    open_identified_journal,
    sealed_boundary,
)
from dpone.cli._seal_log import changed_since_seal
from dpone.cli.delivery._delivery_result import (
    AdmittedResult,
    DeliveryStopped,
    RunResult,
    exit_code,
    interrupted,
    next_command,
    result_document,
    result_text,
)
from dpone.cli.delivery._delivery_run import SealedShape, StepPrinter, delivery_ports, holder
from dpone.cli.delivery._report import child_rows
from dpone.contracts import DponeError
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.documents import EmptyResult, Interval, SourceChange
from dpone.contracts.journal import DeliveryJournalPort, DeliveryJournalView, ParentOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.contracts.sealed import SealedTopology
from dpone.contracts.secret import Credential
from dpone.executor.clock import SystemClock
from dpone.executor.store_pairing import (
    environment_identity,
    mismatch,
    pair_store,
    stored_binding,
)
from dpone.executor.supervisor import (
    deliver,
    delivery_status,
    parent_admission,
    plan_tenancy,
)
from dpone.executor.transport import EnvironmentCredentialResolver
from dpone.journal import parent_operation_id
from dpone.plans import publish_plan


@dataclass(frozen=True)
class BoundaryRun:
    """What one delivery of ``[interval_start, interval_end)`` needs once the plan is loaded."""

    plan: RestDeliveryPlan
    plan_digest: str
    canonical: bytes
    """The plan's canonical bytes (published into ``store`` under its digest)."""
    journal_url: str
    store: ImmutableArtifactPort
    source_root: Path
    """The directory a file source's relative path resolves under."""
    interval_start: dt.date
    interval_end: dt.date
    wait: bool
    locators: Locators
    leases: LeasePolicy


@dataclass(frozen=True)
class RunOutcome:
    """What a run ends with: its one document, the summary for people and the exit code."""

    document: AdmittedResult | EmptyResult
    text: str
    exit_code: int


def _empty(plan: RestDeliveryPlan, topology: SealedTopology,
           source_change: SourceChange | None) -> RunOutcome:
    """No rows in the boundary: nothing is admitted or sent (the profile's empty_input policy)."""
    policy = plan.profile.snapshot.result_policy.empty_input
    boundary = Interval.of(topology.coverage.boundary_from, topology.coverage.boundary_to)
    document = EmptyResult(boundary=boundary, empty_input=policy, children_total=0,
                           rows_total=0, children=(), source_changed_since_seal=source_change)
    return RunOutcome(document, f"empty: {boundary.render()} holds no rows; nothing was "
                                f"admitted or sent (empty_input: {policy})", 0)


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
        journal = open_existing_journal(journal_url, environment_id=tenancy.environment_id,
                                        operation_namespace=tenancy.operation_namespace)
    except DponeError:
        return
    try:
        journal.check_admitted_leases(tenancy, plan_digest, *boundary)
    except DponeError as error:
        if error.code == "journal.lease_held":
            raise
    finally:
        close_quietly(journal)


def _shown(locator: str) -> str:
    """A locator as the stores line shows it: a path under the current directory relative to
    it (``examples/.dpone/journal.sqlite3``), any other path absolute, a URL without password."""
    if "://" in locator or not os.path.isabs(locator):
        return redact(locator)
    relative = os.path.relpath(locator)
    return relative if not relative.startswith("..") else locator


def announce_stores(plane: ControlPlane) -> None:
    """Which journal, artifact store and plan store this run uses, on stderr: its first line."""
    origin = f" (control_plane of {plane.file})" if plane.supplied and plane.file else ""
    click.echo(f"stores: journal {_shown(plane.journal)}, artifacts {_shown(plane.artifacts)}, "
               f"plans {_shown(str(plane.plans))}{origin}", err=True)


def _check_stores(run: BoundaryRun) -> None:
    """Before anything is frozen, and without creating anything: refuse
    (``environment.store_journal_mismatch``) when the artifact store records another journal
    for the plan's environment than the run's, including a journal that does not exist yet."""
    environment = environment_identity(run.plan)
    existing = stored_binding(run.store, environment)
    if existing is None:
        return
    names = {"store_name": redact(run.locators.artifacts), "journal_name": redact(run.journal_url)}
    if not journal_exists(run.journal_url):
        raise mismatch(existing, environment, journal_id=None, **names)
    try:
        journal = open_identified_journal(run.journal_url,
                                          environment_id=environment.environment_id,
                                          migrate=False)
    except DponeError:
        return  # the delivery's own opening reports an unreachable journal
    try:
        identity = journal.journal_identity()
    except DponeError:
        return  # a journal from before its identity: pairing after the seal records it
    finally:
        close_quietly(journal)
    if identity.journal_id != existing.journal_id:
        raise mismatch(existing, environment, journal_id=identity.journal_id, **names)


def _bind_stores(run: BoundaryRun, journal: Journal) -> None:
    """Record the plan's environment identity in the journal and pair the artifact store with
    it (create-if-absent), before admission: a store that belongs to another journal of the
    environment stops the run (``environment.store_journal_mismatch``) before any request."""
    environment = environment_identity(run.plan)
    pair_store(run.store, journal.record_environment(environment), environment,
               store_name=redact(run.locators.artifacts), journal_name=redact(run.journal_url))


def _credential(plan: RestDeliveryPlan) -> Credential:
    """The binding's credential, resolved before anything is frozen (``credential.unavailable``
    when its reference resolves to nothing: nothing is frozen, admitted or sent). The value is
    held in an unprintable wrapper and never logged."""
    return EnvironmentCredentialResolver().resolve(plan.binding.snapshot)


def deliver_boundary(run: BoundaryRun) -> RunOutcome:
    """Publish the plan, freeze and seal the boundary, admit it and deliver every child; an
    admitted delivery's failure is a ``stopped`` outcome, anything before admission raises."""
    plan, plan_digest = run.plan, run.plan_digest
    environment = plan.environment.snapshot
    _refuse_held_leases(plan, plan_digest, run.journal_url, (run.interval_start, run.interval_end))
    credential = _credential(plan)
    _check_stores(run)
    # Recovery on any machine loads the plan by digest from the artifact store.
    publish_plan(run.store, plan_digest, run.canonical)
    topology = sealed_boundary(plan, plan_digest, run.source_root, run.interval_start,
                               run.interval_end, run.store).topology
    source_change = changed_since_seal(
        run.store, topology, "this delivery sends the new bytes unless an admitted delivery of "
        "the boundary refuses them")
    if not topology.children:
        return _empty(plan, topology, source_change)
    parent_id = parent_operation_id(plan.environment.operation_namespace,
                                    topology.parent_plan_digest)
    with delivery_ports(plan, run.journal_url, run.store,
                        environment_id=environment.environment_id, credential=credential,
                        on_open=lambda opened: _bind_stores(run, opened),
                        announce=f"delivery {parent_id}: delivering {len(topology.children)} "
                                 f"child(ren) {parent_id}_0001..{len(topology.children):04d}") as (
            journal, run_journal, transport, run_store):
        shape = SealedShape.of_topology(topology)
        printer = StepPrinter(shape)
        result: RunResult
        try:
            result = deliver(plan, topology, run_journal, run_store, transport, holder=holder(),
                             wait=run.wait, clock=SystemClock(), observer=printer,
                             on_wait=printer.wait, leases=run.leases)
        except DponeError as error:
            parent = _admitted(journal, plan, topology)
            if parent is None:
                _conflict_hint(error, journal, run.locators)
                raise
            result = DeliveryStopped.of(error, parent)
        except KeyboardInterrupt:
            # Ctrl-C: an admitted delivery ends with its summary and next command (exit 130).
            parent = _admitted(journal, plan, topology)
            if parent is None:
                raise
            result = DeliveryStopped.of(interrupted(), parent)
        finally:
            printer.close()
        children = child_rows(journal.load_parent(result.parent_id), topology.children)
    ways = ProofWays.of(plan)
    document = result_document(result, shape, children,
                               next_command(result, run.locators, wait=run.wait, ways=ways),
                               {"source_changed_since_seal": source_change})
    return RunOutcome(document, result_text(document, result, run.locators, ways),
                      exit_code(result))
