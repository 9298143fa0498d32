"""`dpone-executor`: the executor image's entrypoint, which runs only a pinned plan.

``dpone-executor run --plan-digest sha256:... --interval-start ... --interval-end ...`` reads the
plan by its digest from the artifact store (where ``dpone plan --publish`` and ``dpone deliver``
publish it), verifies its bytes against the digest and its schema, and delivers the boundary
exactly as ``dpone deliver`` does after compilation: freeze and seal (create-if-absent), admit,
or resume the admitted topology. It never compiles a workload and never opens a registry: the
stores come from ``--environment NAME`` (the control-plane file ``NAME.yaml`` in
``$DPONE_ENVIRONMENTS`` or ``./environments``) or ``--journal``/``--artifacts``; a file source
resolves under ``--source-root DIR`` (a mounted volume) or ``--source-root s3://bucket/prefix``
(see :mod:`dpone.cli._source_root`); credentials come only from the process environment or
mounted files: the binding's ``credential_ref``, and for a PostgreSQL source
``DPONE_CONN_<REF>_DSN`` or ``DPONE_CONN_<REF>_DSN_FILE`` of its connection ref.

The one JSON document of the run (``dpone.delivery_result.v1``, or ``dpone.error.v1`` before
admission) is also written to ``$DPONE_XCOM_DIR/return.json`` (default ``/airflow/xcom``, the
KubernetesPodOperator's XCom sidecar directory) when that directory exists.

:func:`run_pinned` is the same run for an in-process caller (the Airflow operator).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

import click
from pydantic import BaseModel, ValidationError

from dpone.artifacts import open_artifact_store
from dpone.cli._environment import refuse_new_deliveries_when_off, resolve_control_plane
from dpone.cli._inputs import CalendarDate, ControlPlaneArgs
from dpone.cli._output import FORMAT_OPTION, emit, render_error
from dpone.cli._process import owned_process
from dpone.cli._source_root import SOURCE_ROOT_VARIABLE
from dpone.cli._source_root import source_root as located_source
from dpone.cli._telemetry import LOG_FORMAT_OPTION, PUSHGATEWAY_OPTION, expose, metrics_port_options, pushed
from dpone.cli.delivery._boundary_run import BoundaryRun, RunOutcome, deliver_boundary
from dpone.cli.main import DponeGroup
from dpone.contracts import DponeError
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.executor.supervisor import check_profile
from dpone.observability import logs, tracing
from dpone.plans import read_published_plan_bytes

XCOM_DIR_VARIABLE: Final = "DPONE_XCOM_DIR"
DEFAULT_XCOM_DIR: Final = "/airflow/xcom"
_PINNED = re.compile(r"^sha256:[0-9a-f]{64}$")
_PUBLISH_HINT: Final = ("Publish the plan where this run reads it: `dpone plan WORKLOAD --registry "
                        "DIR --publish --artifacts URL` with the artifact store of this "
                        "environment; the executor never compiles a workload.")

__all__ = ["XCOM_DIR_VARIABLE", "RunOutcome", "executor", "main", "run_pinned", "write_xcom"]


def _pinned(plan_digest: str | None) -> str:
    if plan_digest is None or not _PINNED.fullmatch(plan_digest):
        shown = "no --plan-digest" if plan_digest is None else f"{plan_digest[:80]!r}"
        raise DponeError(code="executor.plan_unpinned",
                         message=f"{shown} is not a pinned plan digest (sha256:<64 lower-case hex>)")
    return plan_digest


def _published(store: ImmutableArtifactPort, digest: str) -> tuple[RestDeliveryPlan, bytes]:
    """The plan ``digest`` from the artifact store: its bytes hash to the digest and validate
    as a ``dpone.rest_delivery_plan.v1``."""
    try:
        data = read_published_plan_bytes(store, digest)
    except DponeError as error:
        if error.code in ("plan.not_found", "plan.digest_mismatch"):
            error.hint = _PUBLISH_HINT
        raise
    try:
        return RestDeliveryPlan.model_validate_json(data), data
    except ValidationError as error:
        raise DponeError(code="contract.schema_invalid",
                         message=f"the published plan {digest} is not a "
                                 f"dpone.rest_delivery_plan.v1: {error.error_count()} error(s)",
                         details={"plan_digest": digest}) from error


def run_pinned(*, plan_digest: str | None, interval_start: dt.date, interval_end: dt.date,
               environment: str | None = None, journal: str | None = None,
               artifacts: str | None = None, source_root: Path | str | None = None,
               wait: bool = False, labels: dict[str, str] | None = None) -> RunOutcome:
    """Deliver ``[interval_start, interval_end)`` through the published plan ``plan_digest``.

    The stores come from the environment control-plane file ``environment`` (or, without one,
    ``journal`` and ``artifacts``, with the CLI's defaults); ``source_root`` is the directory or
    ``s3://bucket/prefix`` a file source resolves under (an object is copied to ``$TMPDIR`` for
    the run); a PostgreSQL source is read through ``DPONE_CONN_<REF>_DSN`` or ``_DSN_FILE``.
    Returns the run's outcome (``document``: the ``dpone.delivery_result.v1`` model;
    ``exit_code``; ``text``) once the boundary is admitted
    or found empty; raises :class:`~dpone.contracts.DponeError` before that (an unpinned,
    unknown or altered plan, a plan of another environment, an unavailable store).
    ``labels`` receives the run's environment and profile ids once the plan is read (the
    grouping key of a metrics push).
    """
    digest = _pinned(plan_digest)
    control = resolve_control_plane(ControlPlaneArgs(environment, None, journal, artifacts))
    store = open_artifact_store(control.artifacts)
    plan, canonical = _published(store, digest)
    if labels is not None:
        labels.update(environment=plan.environment.ref, profile=plan.profile.snapshot.id)
    compiled_for = plan.environment.snapshot.environment_id
    if environment is not None and control.environment_id != compiled_for:
        raise DponeError(code="executor.environment_mismatch",
                         message=f"the plan {digest} was compiled for environment "
                                 f"{compiled_for!r}, not {control.environment_id!r}",
                         details={"plan_environment_id": compiled_for,
                                  "environment_id": control.environment_id})
    check_profile(plan)
    refuse_new_deliveries_when_off(control, plan.environment.snapshot.tier)
    with located_source(plan, source_root) as root:
        return deliver_boundary(BoundaryRun(
            plan=plan, plan_digest=digest, canonical=canonical, journal_url=control.journal,
            store=store, source_root=root, interval_start=interval_start,
            interval_end=interval_end, wait=wait, locators=control.locators,
            leases=control.leases))


def write_xcom(document: BaseModel, directory: Path | None = None) -> Path | None:
    """Write ``document`` as ``return.json`` into the XCom directory (``directory``, else
    ``$DPONE_XCOM_DIR``, else ``/airflow/xcom``) when it exists; the path written, or None.

    The file is replaced atomically, so the sidecar never reads half a document."""
    where = directory or Path(os.environ.get(XCOM_DIR_VARIABLE) or DEFAULT_XCOM_DIR)
    if not where.is_dir():
        return None
    body = json.dumps(document.model_dump(mode="json", by_alias=True), sort_keys=True,
                      ensure_ascii=False).encode("utf-8")
    target = where / "return.json"
    try:
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".return-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(body)
        os.replace(tmp, target)
    except OSError as error:
        raise DponeError(code="filesystem.unavailable",
                         message=f"cannot write the result to {target}: "
                                 f"{error.strerror or type(error).__name__}",
                         details={"path": str(target)}) from error
    return target


def _execute(fmt: str, pushgateway: str | None, **options: Any) -> int:
    labels: dict[str, str] = {}
    with pushed(pushgateway, "dpone_executor", labels):
        try:
            outcome = run_pinned(**options, labels=labels)
            write_xcom(outcome.document)
        except DponeError as error:
            with contextlib.suppress(DponeError):
                write_xcom(error.document())
            render_error(error, fmt)
            return error.exit_code
        emit(outcome.document, fmt, lambda _: outcome.text)
        return outcome.exit_code


@click.group(cls=DponeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@LOG_FORMAT_OPTION
def executor(log_format: str | None) -> None:
    """dpone-executor: run a pinned, published plan (the executor image's entrypoint)."""
    logs.configure(log_format)


@executor.command(name="run")
@click.option("--plan-digest", "plan_digest", metavar="sha256:HEX",
              help="The plan to run, published into the artifact store by `dpone plan "
                   "--publish` (required: the executor runs only a pinned plan).")
@click.option("--interval-start", "interval_start", required=True, type=CalendarDate(),
              help="First date of the boundary.")
@click.option("--interval-end", "interval_end", required=True, type=CalendarDate(),
              help="End of the boundary (exclusive): [start, end).")
@click.option("--environment", "environment", metavar="NAME",
              help="Environment control-plane file NAME.yaml in $DPONE_ENVIRONMENTS (else "
                   "./environments): its journal and artifact store.")
@click.option("--journal", "journal", help="Journal URL (postgresql://...; without a password).")
@click.option("--artifacts", "artifacts", help="Artifact store URL (s3://bucket/prefix, a "
                                               "directory or file:///abs/path).")
@click.option("--source-root", "source_root", envvar=SOURCE_ROOT_VARIABLE,
              metavar="DIR|s3://BUCKET/PREFIX",
              help="Where a file source of the plan resolves: a directory (a mounted volume) "
                   "or an s3:// prefix, whose object is copied to $TMPDIR for the run.")
@click.option("--wait/--no-wait", "wait", default=False, show_default=True,
              help="Keep observing asynchronous jobs in-process until every child is terminal.")
@metrics_port_options
@PUSHGATEWAY_OPTION
@FORMAT_OPTION
def run_command(plan_digest: str | None, interval_start: dt.datetime, interval_end: dt.datetime,
                environment: str | None, journal: str | None, artifacts: str | None,
                source_root: str | None, wait: bool, metrics_port: int | None,
                metrics_address: str, pushgateway: str | None, fmt: str) -> None:
    """Deliver [--interval-start, --interval-end) through the pinned plan --plan-digest.

    Writes one dpone.delivery_result.v1 document (status completed, pending, blocked, stopped
    or empty) to stdout and, when $DPONE_XCOM_DIR (default /airflow/xcom) exists, to its
    return.json. Exit 0 delivered or pending on a durable receipt, 2 invalid (an unpinned,
    unknown or altered plan), 3 unavailable, 4 remote effect unknown or partial, 5 proven
    terminal receiver failure.
    """
    expose(metrics_port, metrics_address)
    sys.exit(_execute(fmt, pushgateway, plan_digest=plan_digest, interval_start=interval_start.date(),
                      interval_end=interval_end.date(), environment=environment,
                      journal=journal, artifacts=artifacts, source_root=source_root, wait=wait))


def main() -> None:
    tracing.configure()  # spans only when the OTEL_* variables ask for them; TRACEPARENT joins
    try:
        with owned_process():  # everything it runs was imported with this module
            executor(prog_name="dpone-executor")
    finally:
        tracing.shutdown()  # every exit path, an error's too, flushes the spans


if __name__ == "__main__":  # pragma: no cover - `python -m dpone.cli.executor_app`
    main()

