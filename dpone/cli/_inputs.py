"""What the executing commands share: the plan, the stores, the journal and the transport.

A workload path compiles on the fly and ``sha256:<hex>`` reads a stored plan; the artifact store
is a directory, ``file://`` or ``s3://`` URL; the journal is a SQLite file (local development)
or a ``postgresql://`` URL (production). The compiler, the sealer and the journal adapters are
imported only by the functions that use them, so a read-only command does not load them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import getpass
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import click
from pydantic import ValidationError

from dpone.contracts import DponeError
from dpone.contracts.journal import DeliveryJournalPort, DeliveryJournalView, ParentOperation
from dpone.contracts.journal_identity import JournalIdentityPort
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ImmutableArtifactPort, JournalMetricsView
from dpone.plans import read_plan, read_plan_bytes, read_published_plan, write_plan

if TYPE_CHECKING:
    from dpone.executor.seal import SealedBoundary

PLAN_DIGEST_PREFIX = "sha256:"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
DEFAULT_JOURNAL = ".dpone/journal.sqlite3"
DEFAULT_ARTIFACTS = ".dpone/artifacts"
DEFAULT_PLANS = Path(".dpone")
DEFAULT_ENVIRONMENT = "local-dev"
_CHILD_ID = re.compile(r"^(op_v1_[0-9a-f]{64})_[0-9]{4,}$")
_PARENT_ID = re.compile(r"^op_v1_[0-9a-f]{64}$")

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

_F = TypeVar("_F", bound=Callable[..., Any])


if TYPE_CHECKING:
    _DateParam = click.ParamType[dt.datetime]
else:  # click before 8.2 has no generic ParamType
    _DateParam = click.ParamType


class CalendarDate(_DateParam):
    """A calendar date written YYYY-MM-DD, given to the command as midnight of that day.

    An impossible day (``2026-02-30``) is "not a valid date" with the reason, not a format
    mismatch.
    """

    name = "YYYY-MM-DD"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> dt.datetime:
        if isinstance(value, dt.datetime):
            return value
        text = str(value)
        if not _ISO_DATE.fullmatch(text):
            self.fail(f"{text!r} is not a date in the form YYYY-MM-DD", param, ctx)
        try:
            day = dt.date.fromisoformat(text)
        except ValueError as exc:
            self.fail(f"{text!r} is not a valid date: {exc}", param, ctx)
        return dt.datetime.combine(day, dt.time())


def boundary_options(command: _F) -> _F:
    """TARGET, --registry, --interval-start/--interval-end, --artifacts and --plans.

    An option not given reaches the command as None: it resolves the store itself, with the
    plan's environment file (:func:`dpone.cli._environment.run_control_plane`), never against
    the current directory."""
    options = [
        click.argument("target", metavar="WORKLOAD|PLAN_DIGEST"),
        click.option("--registry", "registry", required=True,
                     type=click.Path(path_type=Path, file_okay=False),
                     help="Registry root holding profiles/, bindings/, mappings/, environments/ "
                          "and the file sources."),
        click.option("--interval-start", "interval_start", required=True, type=CalendarDate(),
                     help="First date of the boundary."),
        click.option("--interval-end", "interval_end", required=True, type=CalendarDate(),
                     help="End of the boundary (exclusive): [start, end)."),
        click.option("--artifacts", "artifacts_url", default=None,
                     show_default=f"the environment file's control_plane, else "
                                  f"<registry>/{DEFAULT_ARTIFACTS}",
                     help="Artifact store URL: a directory, file:///abs/path or "
                          "s3://bucket/prefix."),
        click.option("--plans", "plans", type=click.Path(path_type=Path, file_okay=False),
                     default=None, show_default=f"the environment file's control_plane, else "
                                                f"<registry>/{DEFAULT_PLANS}",
                     help="Directory holding plans/sha256/<hex>.json (for a PLAN_DIGEST "
                          "target)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@dataclass(frozen=True)
class ControlPlaneArgs:
    """The locator options of a recovery command as given (None: not given); resolved with the
    environment file by :func:`dpone.cli._environment.resolve_control_plane`."""

    environment: str | None = None
    registry: Path | None = None
    journal: str | None = None
    artifacts: str | None = None
    plans: Path | None = None


def control_plane_options(plans_help: str | None = None) -> Callable[[_F], _F]:
    """--environment, --registry and --journal (with ``plans_help`` also --artifacts and
    --plans), handed to the command as one ``control: ControlPlaneArgs`` argument."""

    def decorate(command: _F) -> _F:
        @functools.wraps(command)
        def wrapper(*args: Any, environment: str | None, registry: Path | None,
                    journal_url: str | None, artifacts_url: str | None = None,
                    plans: Path | None = None, **kwargs: Any) -> Any:
            control = ControlPlaneArgs(environment, registry, journal_url, artifacts_url, plans)
            return command(*args, control=control, **kwargs)

        options = [
            click.option("--environment", "environment", metavar="NAME",
                         show_default=DEFAULT_ENVIRONMENT,
                         help="An environment: its file environments/NAME.yaml names the "
                              "journal, the artifact store and the plan store (and the "
                              "environment id); without such a file, the environment id the "
                              "journal is scoped to."),
            click.option("--registry", "registry", type=click.Path(path_type=Path,
                                                                   file_okay=False),
                         help="Only to find environments/NAME.yaml (default: "
                              "$DPONE_ENVIRONMENTS, else ./environments)."),
            click.option("--journal", "journal_url", show_default=DEFAULT_JOURNAL,
                         help="Journal: a SQLite file (local development) or postgresql://... "
                              "URL."),
        ]
        if plans_help is not None:
            options += [
                click.option("--artifacts", "artifacts_url", show_default=DEFAULT_ARTIFACTS,
                             help="Artifact store holding the sealed payloads and the published "
                                  "plans."),
                click.option("--plans", "plans", type=click.Path(path_type=Path,
                                                                 file_okay=False),
                             show_default=str(DEFAULT_PLANS), help=plans_help),
            ]
        for option in reversed(options):
            wrapper = option(wrapper)
        return cast(_F, wrapper)

    return decorate


def journal_options(plans_help: str) -> Callable[[_F], _F]:
    """--operation-id and the control-plane options (:func:`control_plane_options`): for
    commands that read an admitted delivery from the journal rather than a workload."""

    def decorate(command: _F) -> _F:
        command = control_plane_options(plans_help)(command)
        return click.option("--operation-id", "operation_id", required=True,
                            help="A delivery (parent) id or one child's operation id.")(command)

    return decorate


def actor_option(command: _F) -> _F:
    """--actor: who an audited operator action is recorded as (default: the OS user)."""
    return click.option("--actor", "actor", default=None, metavar="NAME",
                        help="Who this operator action is recorded as in the journal's audit "
                             "trail (default: the OS user).")(command)


def operator(actor: str | None) -> str:
    """The actor of an operator action: ``--actor`` or the OS user."""
    if actor is not None:
        if not actor.strip() or len(actor) > 128:
            raise DponeError(code="input.invalid_argument",
                             message="--actor is a non-empty name of at most 128 characters")
        return actor
    try:
        return getpass.getuser()
    except (KeyError, OSError) as error:
        raise DponeError(code="input.invalid_argument",
                         message="the OS user is unknown: name the operator with --actor") \
            from error


def sealed_boundary(plan: RestDeliveryPlan, plan_digest: str, registry: Path,
                    interval_start: dt.date, interval_end: dt.date,
                    store: ImmutableArtifactPort) -> SealedBoundary:
    """Freeze the boundary and seal every child (:func:`~dpone.executor.seal.seal_boundary`),
    with progress on stderr. A PostgreSQL source is read through the DSN its connection ref
    names in this process's environment (``DPONE_CONN_<REF>_DSN`` or ``_DSN_FILE``)."""
    from dpone.cli._progress import Progress  # noqa: PLC0415 - only commands that seal
    from dpone.executor.seal import seal_boundary  # noqa: PLC0415 - only commands that seal
    from dpone.executor.source import source_dsn  # noqa: PLC0415 - only commands that seal

    dsn = source_dsn(plan.source)
    progress = Progress("sealing", "sealed child")
    try:
        return seal_boundary(plan, plan_digest, store, registry_root=registry,
                             interval_start=interval_start, interval_end=interval_end,
                             postgres_dsn=dsn, progress=progress)
    finally:
        progress.close()


@dataclass(frozen=True)
class LoadedPlan:
    """A plan, its digest and its canonical bytes (what a plan store and publication hold)."""

    plan: RestDeliveryPlan
    digest: str
    canonical: bytes


def read_target_plan(target: str, registry: Path, plans: Path, *,
                     persist: bool = False) -> LoadedPlan:
    """A workload path compiles on the fly; ``sha256:<hex>`` reads a stored plan.

    With ``persist`` a compiled plan is also stored create-if-absent under ``plans``.
    """
    if target.startswith(PLAN_DIGEST_PREFIX):
        data = read_plan_bytes(plans, target)
        return LoadedPlan(_parsed(json.loads(data), target), target, data)
    from dpone.compiler import compile_workload  # noqa: PLC0415 - a stored plan needs no compiler
    from dpone.compiler.mapping_versions import (  # noqa: PLC0415 - with the compiler
        check_mapping_layout,
        mapping_stores,
    )

    compiled = compile_workload(Path(target), registry, workload_display=target,
                                registry_display=str(registry))
    check_mapping_layout(compiled.plan, registry, mapping_stores(registry, plans),
                         registry_display=str(registry))
    if persist:
        write_plan(plans, compiled.digest, compiled.canonical)
    return LoadedPlan(compiled.plan, compiled.digest, compiled.canonical)


def persist_plan(plans: Path, loaded: LoadedPlan) -> None:
    """Store ``loaded`` create-if-absent in the plan store ``plans`` (by its digest)."""
    write_plan(plans, loaded.digest, loaded.canonical)


def load_plan(target: str, registry: Path, plans: Path, *,
              persist: bool = False) -> tuple[RestDeliveryPlan, str]:
    """:func:`read_target_plan` as ``(plan, digest)``."""
    loaded = read_target_plan(target, registry, plans, persist=persist)
    return loaded.plan, loaded.digest


def _parsed(document: Any, digest: str) -> RestDeliveryPlan:
    try:
        return RestDeliveryPlan.model_validate_json(json.dumps(document))
    except ValidationError as error:
        raise DponeError(code="contract.schema_invalid",
                         message=f"plan {digest} is not a dpone.rest_delivery_plan.v1: "
                                 f"{error.error_count()} error(s)") from error


def stored_plan(plans: Path, digest: str) -> RestDeliveryPlan:
    """The plan ``digest`` from the plan store ``plans`` (verified against its name)."""
    return _parsed(read_plan(plans, digest), digest)


def recovery_plan(plans: Path, store: ImmutableArtifactPort, digest: str) -> RestDeliveryPlan:
    """The plan a journal names, by its digest: from the plan store ``plans`` when it holds it,
    else as `dpone deliver` published it into the artifact store; either copy is verified
    against the digest (``plan.digest_mismatch``), ``plan.not_found`` when neither holds it."""
    try:
        return stored_plan(plans, digest)
    except DponeError as error:
        if error.code != "plan.not_found":
            raise
    return _parsed(read_published_plan(store, digest), digest)


def parse_operation_id(operation_id: str) -> tuple[str, str | None]:
    """``(parent id, child id or None)`` of a parent id ``op_v1_<hex>`` or a child id
    ``op_v1_<hex>_NNNN``."""
    child = _CHILD_ID.match(operation_id)
    if child is not None:
        return child.group(1), operation_id
    if _PARENT_ID.match(operation_id):
        return operation_id, None
    raise DponeError(code="input.invalid_argument",
                     message=f"{operation_id!r} is not an operation id (op_v1_<hex>[_NNNN])")


def journal_exists(url: str) -> bool:
    """False only for a SQLite journal file that does not exist (a PostgreSQL URL is taken to
    name an existing database; connecting tells)."""
    return url.startswith(POSTGRES_SCHEMES) or Path(url.removeprefix("sqlite:///")).exists()


def open_existing_journal(url: str, *, environment_id: str,
                          operation_namespace: str | None = None) -> DeliveryJournalPort:
    """An existing journal, opened without migrating (nothing is created or written)."""
    if not journal_exists(url):
        raise DponeError(code="journal.not_found", message=f"no journal at {url}")
    return open_journal(url, environment_id=environment_id, migrate=False,
                        operation_namespace=operation_namespace)


def load_delivery(journal: DeliveryJournalView, parent_id: str,
                  child_id: str | None = None) -> ParentOperation:
    """The delivery ``parent_id``; ``journal.not_found`` when it (or its child) is unknown."""
    parent = journal.load_parent(parent_id)
    if child_id is not None and child_id not in {c.operation_id for c in parent.children}:
        raise DponeError(code="journal.not_found",
                         message=f"no child {child_id} in delivery {parent_id}")
    return parent


class Journal(DeliveryJournalPort, JournalIdentityPort, JournalMetricsView, Protocol):
    """What :func:`open_journal` returns: the journal port, the journal's identity and its
    metrics view."""


def open_journal(url: str, *, environment_id: str, tier: str = "development",
                 migrate: bool = True, operation_namespace: str | None = None
                 ) -> DeliveryJournalPort:
    """:func:`open_identified_journal` as the journal port."""
    return open_identified_journal(url, environment_id=environment_id, tier=tier,
                                   migrate=migrate, operation_namespace=operation_namespace)


def open_identified_journal(url: str, *, environment_id: str, tier: str = "development",
                            migrate: bool = True, operation_namespace: str | None = None
                            ) -> Journal:
    """The journal at ``url``: ``postgresql://...`` or a SQLite path (``sqlite:///``).

    ``migrate`` applies pending migrations (idempotent); read-only commands pass ``False``.
    ``operation_namespace`` (when known) makes the journal refuse another namespace's
    operations (``journal.foreign_namespace``).
    """
    if url.startswith(POSTGRES_SCHEMES):
        from dpone.journal.postgres import PostgresJournal  # noqa: PLC0415 - optional driver

        postgres = PostgresJournal(url, environment_id=environment_id,
                                   require_durability=tier == "production",
                                   operation_namespace=operation_namespace)
        if migrate:
            postgres.migrate()
        return postgres
    path = Path(url.removeprefix("sqlite:///"))  # sqlite:///rel/path, sqlite:////abs/path
    if tier != "development":
        raise DponeError(code="journal.sqlite_in_production",
                         message=f"environment {environment_id!r} is {tier}: its journal must be "
                         "a postgresql:// URL")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DponeError(code="journal.unavailable",
                         message=f"cannot create the journal directory {path.parent}: "
                         f"{error.strerror}") from error
    from dpone.journal.sqlite import SqliteJournal  # noqa: PLC0415 - one adapter per URL

    sqlite = SqliteJournal(path, environment_id=environment_id,
                           operation_namespace=operation_namespace)
    if migrate:
        sqlite.migrate()
    return sqlite


def close_quietly(resource: Any) -> None:
    """Close ``resource`` if it can be closed; a failure to close is not the command's result."""
    close = getattr(resource, "close", None)
    if close is not None:
        with contextlib.suppress(Exception):
            close()

