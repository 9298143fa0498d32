"""The provider's composition root: it builds dpone's adapters from a :class:`JournalLocator`
and calls the public runtime API (:mod:`dpone.executor.supervisor`). Airflow-free.

* :func:`submit_or_resume` (``execute``): the plan by digest from the artifact store (verified
  against its digest, never compiled from a workload), the boundary frozen and sealed
  create-if-absent, the topology admitted (or the admitted one resumed) and driven without
  waiting: completed, pending on a durable receipt, or blocked.
* :func:`continue_delivery` (``execute_complete``): the admitted delivery driven from the journal
  alone; the journal is the only authority, whatever a trigger event said.
* :func:`observe_once` (the trigger, in a worker thread): one due read-only receipt poll.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dpone_airflow._locator import JournalLocator

if TYPE_CHECKING:
    from dpone.contracts.binding import LeasePolicy
    from dpone.contracts.journal import DeliveryJournalPort
    from dpone.contracts.plan import RestDeliveryPlan
    from dpone.contracts.ports import ImmutableArtifactPort
    from dpone.executor.supervisor import DeliveryResult, QuietPolls

PLAN_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_POSTGRES = ("postgresql://", "postgres://")


def holder() -> str:
    """The lease holder of this process."""
    return f"dpone-airflow:{socket.gethostname()}:{os.getpid()}"


def _leases(locator: JournalLocator) -> LeasePolicy:
    from dpone.contracts.binding import LeasePolicy  # noqa: PLC0415

    return LeasePolicy(ttl_s=locator.lease_ttl_s, heartbeat_s=locator.lease_heartbeat_s)


def open_journal(locator: JournalLocator, *, migrate: bool) -> DeliveryJournalPort:
    """The environment's journal: PostgreSQL, or a SQLite file (development tier only)."""
    from dpone.contracts import DponeError  # noqa: PLC0415

    if locator.journal.startswith(_POSTGRES):
        from dpone.journal.postgres import PostgresJournal  # noqa: PLC0415 - optional driver

        postgres = PostgresJournal(locator.journal, environment_id=locator.environment_id,
                                   require_durability=locator.tier == "production",
                                   operation_namespace=locator.operation_namespace)
        if migrate:
            postgres.migrate()
        return postgres
    if locator.tier != "development":
        raise DponeError(code="journal.sqlite_in_production",
                         message=f"environment {locator.environment_id!r} is {locator.tier}: its "
                                 "journal must be a postgresql:// URL")
    from dpone.journal.sqlite import SqliteJournal  # noqa: PLC0415

    path = Path(locator.journal.removeprefix("sqlite:///"))
    if not migrate and not path.exists():
        raise DponeError(code="journal.not_found", message=f"no journal at {path}")
    path.parent.mkdir(parents=True, exist_ok=True)
    sqlite = SqliteJournal(path, environment_id=locator.environment_id,
                           operation_namespace=locator.operation_namespace)
    if migrate:
        sqlite.migrate()
    return sqlite


@contextlib.contextmanager
def _journal(locator: JournalLocator, *, migrate: bool) -> Iterator[DeliveryJournalPort]:
    journal = open_journal(locator, migrate=migrate)
    try:
        yield journal
    finally:
        close = getattr(journal, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()


def published_plan(store: ImmutableArtifactPort, plan_digest: str) -> RestDeliveryPlan:
    """The plan ``plan_digest`` as `dpone plan --publish` (or `dpone deliver`) published it:
    ``input.invalid_argument`` for an unpinned digest, ``plan.not_found``,
    ``plan.digest_mismatch``, ``contract.schema_invalid``."""
    import json  # noqa: PLC0415

    from pydantic import ValidationError  # noqa: PLC0415

    from dpone.contracts import DponeError  # noqa: PLC0415
    from dpone.contracts.plan import RestDeliveryPlan  # noqa: PLC0415
    from dpone.executor.supervisor import check_profile  # noqa: PLC0415
    from dpone.plans import read_published_plan  # noqa: PLC0415

    if not PLAN_DIGEST.fullmatch(plan_digest):
        raise DponeError(code="input.invalid_argument",
                         message=f"plan_digest {plan_digest!r} is not a pinned sha256:<64 hex> "
                                 "digest",
                         hint="Publish the plan in CI (`dpone plan --publish`) and pass its digest.")
    try:
        document = json.dumps(read_published_plan(store, plan_digest))
        plan = RestDeliveryPlan.model_validate_json(document)
    except ValidationError as error:
        raise DponeError(code="contract.schema_invalid",
                         message=f"plan {plan_digest} is not a dpone.rest_delivery_plan.v1: "
                                 f"{error.error_count()} error(s)") from error
    check_profile(plan)
    return plan


def read_plan(locator: JournalLocator, plan_digest: str) -> RestDeliveryPlan:
    """The published plan ``plan_digest`` from the environment's artifact store (verified)."""
    from dpone.artifacts import open_artifact_store  # noqa: PLC0415

    return published_plan(open_artifact_store(locator.artifacts), plan_digest)


@dataclass(frozen=True)
class Empty:
    """The boundary holds no rows: nothing was admitted or sent."""

    boundary_from: dt.date
    boundary_to: dt.date


def submit_or_resume(locator: JournalLocator, plan_digest: str, interval_start: dt.date,
                     interval_end: dt.date, source_root: Path) -> DeliveryResult | Empty:
    """Seal ``[interval_start, interval_end)`` of the published plan and deliver it without
    waiting; an admitted delivery of the same sealed topology resumes from its journal. A
    PostgreSQL source is read through ``DPONE_CONN_<REF>_DSN`` (or ``_DSN_FILE``) of the
    worker's environment."""
    from dpone.artifacts import open_artifact_store  # noqa: PLC0415
    from dpone.executor.clock import SystemClock  # noqa: PLC0415
    from dpone.executor.seal import seal_boundary  # noqa: PLC0415
    from dpone.executor.source import source_dsn  # noqa: PLC0415
    from dpone.executor.supervisor import deliver  # noqa: PLC0415
    from dpone.executor.transport import transport_for  # noqa: PLC0415
    from dpone_airflow._credentials import AirflowCredentials  # noqa: PLC0415

    store = open_artifact_store(locator.artifacts)
    plan = published_plan(store, plan_digest)
    topology = seal_boundary(plan, plan_digest, store, registry_root=source_root,
                             interval_start=interval_start, interval_end=interval_end,
                             postgres_dsn=source_dsn(plan.source)).topology
    if not topology.children:
        return Empty(interval_start, interval_end)
    with _journal(locator, migrate=True) as journal, contextlib.closing(
            transport_for(plan, credentials=AirflowCredentials())) as transport:
        return deliver(plan, topology, journal, store, transport, holder=holder(), wait=False,
                       clock=SystemClock(), leases=_leases(locator))


def continue_delivery(locator: JournalLocator, parent_id: str) -> DeliveryResult:
    """Drive the admitted delivery ``parent_id`` from the journal, its published plan and its
    sealed payload documents, without waiting."""
    from dpone.artifacts import open_artifact_store  # noqa: PLC0415
    from dpone.executor.clock import SystemClock  # noqa: PLC0415
    from dpone.executor.supervisor import resume, sealed_children  # noqa: PLC0415
    from dpone.executor.transport import transport_for  # noqa: PLC0415
    from dpone_airflow._credentials import AirflowCredentials  # noqa: PLC0415

    store = open_artifact_store(locator.artifacts)
    with _journal(locator, migrate=False) as journal:
        parent = journal.load_parent(parent_id)
        plan = published_plan(store, parent.plan_digest)
        sealed = sealed_children(parent, store)
        with contextlib.closing(transport_for(plan, credentials=AirflowCredentials())) as transport:
            return resume(plan, parent_id, sealed, journal, store, transport, holder=holder(),
                          wait=False, clock=SystemClock(), leases=_leases(locator))


@dataclass(frozen=True)
class Observed:
    """Where a child stands after one observation step (bounded scalars only)."""

    operation_id: str
    state_name: str
    revision: int
    observing: bool
    next_check_after: dt.datetime | None
    quiet: QuietPolls | None = None
    """The observer's unrecorded polls, for the trigger's next step."""


def observe_once(locator: JournalLocator, operation_id: str,
                 quiet: QuietPolls | None = None) -> Observed:
    """One due read-only receipt poll of child ``operation_id`` (GET only, observation lease,
    CAS); nothing when it is not due or no longer observing. ``quiet``: the trigger's unrecorded
    polls (an unchanged running job is journaled only every few polls), kept between steps:
    ``None`` on the first, then the one the previous step returned."""
    from dpone.artifacts import open_artifact_store  # noqa: PLC0415
    from dpone.executor.clock import SystemClock  # noqa: PLC0415
    from dpone.executor.supervisor import (  # noqa: PLC0415
        QuietPolls,
        allowed_actions,
        observe_receipt,
    )
    from dpone.executor.transport import transport_for  # noqa: PLC0415
    from dpone_airflow._credentials import AirflowCredentials  # noqa: PLC0415

    quiet = quiet if quiet is not None else QuietPolls()
    store = open_artifact_store(locator.artifacts)
    with _journal(locator, migrate=False) as journal:
        parent = journal.load_parent(journal.get_child(operation_id).parent_id)
        plan = published_plan(store, parent.plan_digest)
        with contextlib.closing(transport_for(plan, credentials=AirflowCredentials())) as transport:
            child = observe_receipt(plan, operation_id, journal, store, transport,
                                    holder=holder(), clock=SystemClock(),
                                    leases=_leases(locator), quiet=quiet)
    return Observed(child.operation_id, child.state_name, child.revision,
                    allowed_actions(child) == ("poll_receipt",),
                    quiet.next_due(child.next_check_after), quiet)
