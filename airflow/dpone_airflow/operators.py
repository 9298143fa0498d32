"""``DponeDeliveryOperator``: deliver one data interval of a published plan, deferring on a
durable receipt instead of holding a worker slot.

``execute`` binds the boundary from the run's data interval (``[start, end)`` as dates), reads
the plan by its pinned digest from the environment's artifact store, seals the boundary and
calls dpone's submit-or-resume (an admitted delivery resumes from its journal: nothing that
may have reached the receiver is resent), unless the environment file's kill switch
(``runtime.features.rest_bulk_delivery_v1``) is off: then it fails with ``runtime.feature_disabled``
before anything is sealed or sent, while ``execute_complete`` and the trigger, which only carry
admitted work on, never read the switch. ``DeliveryPending`` defers to
:class:`~dpone_airflow.triggers.DeliveryReceiptTrigger` with the child's operation id and the
non-secret journal locator and the W3C ``traceparent`` of the task's span only
(:mod:`dpone_airflow._tracing`). ``execute_complete`` rereads the journal as the only
authority (the trigger's event is a hint), defers again while a receipt is pending, and
promotes the checkpoint when eligible. A blocked delivery fails the task with its stable code,
its allowed actions and the exact ``dpone delivery ...`` commands; a DponeError of the
unavailable class (exit 3) may be retried by Airflow, every other fails without retry.
The task's XCom is the ``completed`` result (bounded scalars, no secret). Where Airflow's
OpenLineage provider is installed, ``get_openlineage_facets_on_complete`` / ``_on_failure`` name
the source read, the receiver endpoint written and the run (:mod:`dpone_airflow._lineage`).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from dpone_airflow import _stats, _tracing
from dpone_airflow._compat import AirflowException, AirflowFailException, BaseOperator
from dpone_airflow._lineage import LineageDataset, RunFacts, operator_lineage, plan_datasets
from dpone_airflow._locator import (
    JournalLocator,
    environments_directory,
    refuse_new_deliveries,
    resolve,
)
from dpone_airflow._outcome import (
    ERROR_CODE,
    PARENT_ID,
    Failure,
    blocked,
    error,
    parent_of,
    trigger_stopped,
)
from dpone_airflow.links import LINK_XCOM_KEY, DeliveryLink, check_template, render

if TYPE_CHECKING:
    from dpone_airflow._lineage import Lineage

_T = TypeVar("_T")
_INVALID = "input.invalid_argument"


def _exception(failure: Failure) -> Exception:
    """What a failed task raises: only exit class 3 (unavailable) may be retried by Airflow."""
    if failure.retryable:
        return AirflowException(failure.text)
    return AirflowFailException(failure.text)


class DeliveryContinuation(BaseOperator):  # type: ignore[misc,unused-ignore]
    """What every dpone operator shares once a delivery is admitted: the journal locator of
    ``self.environment``, deferral to the receipt trigger while pending (the trace context
    travels with it), ``execute_complete``, which rereads the journal as the only authority,
    and the task's OpenLineage facets."""

    operator_extra_links = (DeliveryLink(),)
    plan_digest: str
    environment: str
    environments_dir: str | None
    delivery_url: str | None = None
    """The template of the task's "dpone delivery" link (:mod:`dpone_airflow.links`)."""
    deferral_timeout: dt.timedelta | None = None
    """How long one deferral on a receipt may last before Airflow fails the task
    (``TaskDeferralTimeout``); None: as long as the receipt is observed. The delivery stays
    admitted either way: the next try resumes it from the journal."""

    def _locator(self) -> JournalLocator:
        return self._guarded(lambda: resolve(self.environment, self.environments_dir))

    def _guarded(self, call: Callable[[], _T]) -> _T:
        from dpone.contracts import DponeError  # noqa: PLC0415

        try:
            return call()
        except DponeError as failure:
            if failure.operation_id:
                self._note(operation_id=parent_of(failure.operation_id))
            raise self._failure(error(failure, self.environment)) from failure

    def _failure(self, failure: Failure) -> Exception:
        """The exception that fails the task with ``failure``, its code noted for the trace and
        the lineage."""
        self._note(error_code=failure.code)
        _stats.incr("failed", environment=self.environment, code=failure.code)
        return _exception(failure)

    def _facts(self) -> RunFacts:
        from dpone_airflow._runtime import PLAN_DIGEST  # noqa: PLC0415

        facts = getattr(self, "_dpone_facts", None)
        if isinstance(facts, RunFacts):
            return facts
        digest = str(self.plan_digest)
        return RunFacts(digest if PLAN_DIGEST.fullmatch(digest) else None)

    def _note(self, *, operation_id: str | None = None, error_code: str | None = None) -> None:
        """Record what the task learnt of its delivery, on its lineage and its current span
        (a parent operation id and an error code of their shapes; anything else is dropped)."""
        if operation_id is not None and not PARENT_ID.fullmatch(operation_id):
            operation_id = None
        if error_code is not None and not ERROR_CODE.fullmatch(error_code):
            error_code = None
        facts = self._facts()
        self._dpone_facts = replace(facts, operation_id=operation_id or facts.operation_id,
                                    error_code=error_code or facts.error_code)
        _tracing.note(operation_id=operation_id, error_code=error_code)
        delivery = self._dpone_facts.operation_id
        if delivery is not None and self.delivery_url is not None:
            self._dpone_link = render(self.delivery_url, delivery, self.environment)

    def _push_link(self, context: Mapping[str, Any]) -> None:
        """Store the task's delivery link where Airflow 2's webserver reads it (its XCom
        ``dpone_delivery_link``); Airflow 3 stores what :class:`DeliveryLink` returns itself."""
        link = getattr(self, "_dpone_link", None)
        ti = context.get("ti")
        if isinstance(link, str) and ti is not None:
            ti.xcom_push(key=LINK_XCOM_KEY, value=link)

    def _defer_on(self, operation_id: str, locator: JournalLocator) -> NoReturn:
        from dpone_airflow.triggers import DeliveryReceiptTrigger  # noqa: PLC0415

        traceparent = _tracing.current_traceparent()
        _stats.incr("deferred", environment=self.environment)
        self.defer(trigger=DeliveryReceiptTrigger(operation_id, locator.as_kwargs(),
                                                  traceparent=traceparent),
                   method_name="execute_complete", timeout=self.deferral_timeout)
        raise AirflowFailException("the task did not defer")  # pragma: no cover - defer raises

    def execute_complete(self, context: Mapping[str, Any],
                         event: Mapping[str, Any] | None = None) -> Any:
        """Resume the delivery from the journal, in the trace of the ``execute`` that deferred
        (the event's ``traceparent``, which the trigger echoes; absent from the event of a
        trigger serialized by an older provider)."""
        try:
            return self._complete(event)
        finally:
            self._push_link(context)

    def _complete(self, event: Mapping[str, Any] | None) -> Any:
        from dpone_airflow._runtime import continue_delivery  # noqa: PLC0415

        started = time.monotonic()
        traceparent = event.get("traceparent") if event else None
        with _tracing.span("dpone.airflow.execute_complete",
                           traceparent=traceparent if isinstance(traceparent, str) else None,
                           plan_digest=self._facts().plan_digest):
            if not event or not isinstance(event.get("operation_id"), str):
                raise self._failure(Failure(f"{_INVALID}: the receipt trigger's event names no "
                                            "operation id", retryable=False, code=_INVALID))
            stopped = event.get("error")
            if isinstance(stopped, str) and stopped:
                failure = trigger_stopped(stopped, event["operation_id"], self.environment)
                if failure is not None:
                    self._note(operation_id=parent_of(event["operation_id"]))
                    _stats.incr("trigger_stopped", environment=self.environment, code=stopped)
                    raise self._failure(failure)
                self.log.warning("receipt trigger of %s stopped with %s; rereading the journal",
                                 event["operation_id"], stopped)
            parent_id = parent_of(event["operation_id"])
            self._note(operation_id=parent_id)
            locator = self._locator()
            result = self._guarded(lambda: continue_delivery(locator, parent_id))
            return self._settle(result, locator, started, "execute_complete")

    def on_kill(self) -> None:
        """Airflow killed the task (marked failed, timed out, its worker stopping): nothing of
        the delivery is lost. Its leases expire within the environment's lease TTL; the next try
        (or `dpone delivery resume --apply`) continues it from the journal, and a request that
        may have reached the receiver is replayed only under a certified fence, else recorded
        UNKNOWN for a reconciliation."""
        delivery = self._facts().operation_id
        self.log.warning(
            "dpone task killed%s: the delivery stays admitted; its leases expire within the "
            "lease TTL and the next try resumes it (`dpone delivery inspect --operation-id %s "
            "--environment %s`)", f" during delivery {delivery}" if delivery else "",
            delivery or "<id>", self.environment)

    def _settle(self, result: Any, locator: JournalLocator, started: float, step: str) -> Any:
        from dpone.executor.supervisor import (  # noqa: PLC0415
            DeliveryBlocked,
            DeliveryCompleted,
            DeliveryPending,
        )
        from dpone_airflow._runtime import Empty  # noqa: PLC0415

        spent = time.monotonic() - started
        self.log.info("dpone worker time in %s: %.3f s", step, spent)
        _stats.timing("worker_time", spent, environment=self.environment, step=step)
        if isinstance(result, Empty):
            self.log.info("empty: [%s, %s) holds no rows; nothing was admitted or sent",
                          result.boundary_from, result.boundary_to)
            _stats.incr("empty", environment=self.environment)
            return {"kind": "empty", "boundary_from": result.boundary_from.isoformat(),
                    "boundary_to": result.boundary_to.isoformat()}
        if isinstance(result, DeliveryCompleted | DeliveryBlocked | DeliveryPending):
            self._note(operation_id=result.parent_id)
        if isinstance(result, DeliveryCompleted):
            _stats.incr("completed", environment=self.environment)
            return result.model_dump(mode="json")
        if isinstance(result, DeliveryBlocked):
            raise self._failure(blocked(result, self.environment))
        if isinstance(result, DeliveryPending):
            self.log.info("delivery %s pending on child %s (%s); deferring", result.parent_id,
                          result.operation_id, result.state_name)
            self._defer_on(result.operation_id, locator)
        raise AirflowFailException(f"unexpected dpone result {type(result).__name__}")

    # --- OpenLineage (called by Airflow only where its OpenLineage provider is enabled) -------

    def _lineage_source_root(self) -> str | None:
        """Where the plan's file source resolves for this operator (None: not known here)."""
        return None

    def _plan_datasets(self) -> tuple[LineageDataset, LineageDataset] | None:
        """The plan's (input, output) datasets, read by digest from the environment's artifact
        store; None when the task has no pinned digest or the plan cannot be read."""
        from dpone.contracts import DponeError  # noqa: PLC0415
        from dpone_airflow._runtime import read_plan  # noqa: PLC0415

        digest = self._facts().plan_digest
        if digest is None:
            return None
        try:
            plan = read_plan(resolve(self.environment, self.environments_dir), digest)
        except DponeError as failure:
            self.log.warning("OpenLineage: plan %s not read (%s): no inputs or outputs", digest,
                             failure.code)
            return None
        return plan_datasets(plan, self._lineage_source_root())

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Lineage | None:
        """The source dataset read, the receiver endpoint written and the ``dponeDelivery`` run
        facet (plan digest, operation id); None without the OpenLineage provider."""
        return operator_lineage(self._facts(), self._plan_datasets)

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Lineage | None:
        """As on completion; the run facet also carries the failure's stable code."""
        return operator_lineage(self._facts(), self._plan_datasets)


class DponeDeliveryOperator(DeliveryContinuation):
    """Deliver the run's data interval of the published plan ``plan_digest`` in ``environment``.

    :param plan_digest: ``sha256:<64 hex>`` of a plan published by `dpone plan --publish`.
    :param environment: the environment whose control-plane file (``NAME.yaml`` in
        ``environments_dir``, else ``$DPONE_ENVIRONMENTS``, else ``./environments``) names the
        journal and the artifact store.
    :param source_root: the directory a file source of the plan resolves under (default: the
        parent of the environments directory, the registry root).
    :param deferral_timeout: the longest one deferral on a receipt may last (Airflow then fails
        the task with ``TaskDeferralTimeout``; the delivery stays admitted for the next try).
    :param delivery_url: the template of the task's "dpone delivery" link, naming
        ``{operation_id}`` (and optionally ``{environment}``): :mod:`dpone_airflow.links`.
    """

    template_fields = ("plan_digest", "environment")

    def __init__(self, *, plan_digest: str, environment: str,
                 environments_dir: str | None = None, source_root: str | None = None,
                 deferral_timeout: dt.timedelta | None = None, delivery_url: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan_digest = plan_digest
        self.environment = environment
        self.environments_dir = environments_dir
        self.source_root = source_root
        self.deferral_timeout = deferral_timeout
        self.delivery_url = check_template(delivery_url)

    def _date(self, context: Mapping[str, Any], name: str) -> dt.date:
        value = context.get(name)
        if not isinstance(value, dt.datetime):
            raise self._failure(Failure(f"{_INVALID}: the run has no {name}: a dpone delivery "
                                        "binds its boundary from the data interval",
                                        retryable=False, code=_INVALID))
        return value.astimezone(dt.UTC).date()

    def _lineage_source_root(self) -> str:
        return self.source_root or \
            str(environments_directory(self.environments_dir).absolute().parent)

    def execute(self, context: Mapping[str, Any]) -> Any:
        try:
            return self._execute(context)
        finally:
            self._push_link(context)

    def _execute(self, context: Mapping[str, Any]) -> Any:
        from dpone_airflow._runtime import submit_or_resume  # noqa: PLC0415

        started = time.monotonic()
        with _tracing.span("dpone.airflow.execute", plan_digest=self._facts().plan_digest):
            locator = self._locator()
            self._guarded(lambda: refuse_new_deliveries(self.environment, self.environments_dir))
            start = self._date(context, "data_interval_start")
            end = self._date(context, "data_interval_end")
            root = Path(self._lineage_source_root())
            result = self._guarded(lambda: submit_or_resume(locator, self.plan_digest, start,
                                                            end, root))
            return self._settle(result, locator, started, "execute")
