"""``DponeDeliveryOperator``: deliver one data interval of a published plan, deferring on a
durable receipt instead of holding a worker slot.

``execute`` binds the boundary from the run's data interval (``[start, end)`` as dates), reads
the plan by its pinned digest from the environment's artifact store, seals the boundary and
calls dpone's submit-or-resume (an admitted delivery resumes from its journal: nothing that
may have reached the receiver is resent). ``DeliveryPending`` defers to
:class:`~dpone_airflow.triggers.DeliveryReceiptTrigger` with the child's operation id and the
non-secret journal locator only. ``execute_complete`` rereads the journal as the only
authority (the trigger's event is a hint), defers again while a receipt is pending, and
promotes the checkpoint when eligible. A blocked delivery fails the task with its stable code,
its allowed actions and the exact ``dpone delivery ...`` commands; a DponeError of the
unavailable class (exit 3) may be retried by Airflow, every other fails without retry.
The task's XCom is the ``completed`` result (bounded scalars, no secret).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from dpone_airflow._compat import AirflowException, AirflowFailException, BaseOperator
from dpone_airflow._locator import JournalLocator, environments_directory, resolve
from dpone_airflow._outcome import Failure, blocked, error, parent_of

_T = TypeVar("_T")


def _raise(failure: Failure) -> NoReturn:
    if failure.retryable:
        raise AirflowException(failure.text)
    raise AirflowFailException(failure.text)


def _date(value: Any, name: str) -> dt.date:
    if not isinstance(value, dt.datetime):
        raise AirflowFailException(f"input.invalid_argument: the run has no {name}: a dpone "
                                   "delivery binds its boundary from the data interval")
    return value.astimezone(dt.UTC).date()


class DeliveryContinuation(BaseOperator):  # type: ignore[misc,unused-ignore]
    """What every dpone operator shares once a delivery is admitted: the journal locator of
    ``self.environment``, deferral to the receipt trigger while pending, and
    ``execute_complete``, which rereads the journal as the only authority."""

    environment: str
    environments_dir: str | None

    def _locator(self) -> JournalLocator:
        return self._guarded(lambda: resolve(self.environment, self.environments_dir))

    def _guarded(self, call: Callable[[], _T]) -> _T:
        from dpone.contracts import DponeError  # noqa: PLC0415

        try:
            return call()
        except DponeError as failure:
            _raise(error(failure, self.environment))

    def _defer_on(self, operation_id: str, locator: JournalLocator) -> NoReturn:
        from dpone_airflow.triggers import DeliveryReceiptTrigger  # noqa: PLC0415

        self.defer(trigger=DeliveryReceiptTrigger(operation_id, locator.as_kwargs()),
                   method_name="execute_complete")
        raise AirflowFailException("the task did not defer")  # pragma: no cover - defer raises

    def execute_complete(self, context: Mapping[str, Any],
                         event: Mapping[str, Any] | None = None) -> Any:
        from dpone_airflow._runtime import continue_delivery  # noqa: PLC0415

        started = time.monotonic()
        if not event or not isinstance(event.get("operation_id"), str):
            raise AirflowFailException("input.invalid_argument: the receipt trigger's event "
                                       "names no operation id")
        if event.get("error"):
            self.log.warning("receipt trigger of %s stopped with %s; rereading the journal",
                             event["operation_id"], event["error"])
        locator = self._locator()
        parent_id = parent_of(event["operation_id"])
        result = self._guarded(lambda: continue_delivery(locator, parent_id))
        return self._settle(result, locator, started, "execute_complete")

    def _settle(self, result: Any, locator: JournalLocator, started: float, step: str) -> Any:
        from dpone.executor.supervisor import (  # noqa: PLC0415
            DeliveryBlocked,
            DeliveryCompleted,
            DeliveryPending,
        )
        from dpone_airflow._runtime import Empty  # noqa: PLC0415

        self.log.info("dpone worker time in %s: %.3f s", step, time.monotonic() - started)
        if isinstance(result, Empty):
            self.log.info("empty: [%s, %s) holds no rows; nothing was admitted or sent",
                          result.boundary_from, result.boundary_to)
            return {"kind": "empty", "boundary_from": result.boundary_from.isoformat(),
                    "boundary_to": result.boundary_to.isoformat()}
        if isinstance(result, DeliveryCompleted):
            return result.model_dump(mode="json")
        if isinstance(result, DeliveryBlocked):
            _raise(blocked(result, self.environment))
        if isinstance(result, DeliveryPending):
            self.log.info("delivery %s pending on child %s (%s); deferring", result.parent_id,
                          result.operation_id, result.state_name)
            self._defer_on(result.operation_id, locator)
        raise AirflowFailException(f"unexpected dpone result {type(result).__name__}")


class DponeDeliveryOperator(DeliveryContinuation):
    """Deliver the run's data interval of the published plan ``plan_digest`` in ``environment``.

    :param plan_digest: ``sha256:<64 hex>`` of a plan published by `dpone plan --publish`.
    :param environment: the environment whose control-plane file (``NAME.yaml`` in
        ``environments_dir``, else ``$DPONE_ENVIRONMENTS``, else ``./environments``) names the
        journal and the artifact store.
    :param source_root: the directory a file source of the plan resolves under (default: the
        parent of the environments directory, the registry root).
    """

    template_fields = ("plan_digest", "environment")

    def __init__(self, *, plan_digest: str, environment: str,
                 environments_dir: str | None = None, source_root: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan_digest = plan_digest
        self.environment = environment
        self.environments_dir = environments_dir
        self.source_root = source_root

    def execute(self, context: Mapping[str, Any]) -> Any:
        from dpone_airflow._runtime import submit_or_resume  # noqa: PLC0415

        started = time.monotonic()
        locator = self._locator()
        start = _date(context.get("data_interval_start"), "data_interval_start")
        end = _date(context.get("data_interval_end"), "data_interval_end")
        root = Path(self.source_root) if self.source_root else \
            environments_directory(self.environments_dir).absolute().parent
        result = self._guarded(lambda: submit_or_resume(locator, self.plan_digest, start, end,
                                                        root))
        return self._settle(result, locator, started, "execute")
