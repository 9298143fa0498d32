"""Task-level metrics through Airflow's own ``Stats`` (StatsD or OpenTelemetry, as the deployment
configures Airflow's metrics; a no-op otherwise).

Names (prefixed by Airflow's ``metrics.statsd_prefix`` / OTel prefix), each tagged with the
``environment`` and, where it applies, the stable ``code`` or the ``step``:

* ``dpone.delivery.completed`` / ``dpone.delivery.empty``: a task's delivery ended so;
* ``dpone.delivery.failed``: a task failed, tagged with its stable ``code`` (a blocked delivery,
  a dpone error, a stopped trigger);
* ``dpone.delivery.deferred``: a deferral on a durable receipt;
* ``dpone.delivery.trigger_stopped``: a receipt trigger stopped by the triggerer's setup;
* ``dpone.delivery.worker_time``: the worker time of ``execute`` or ``execute_complete``
  (timing, milliseconds).

Tags carry no identifier of unbounded cardinality (no operation id, no plan digest).
"""

from __future__ import annotations

import datetime as dt
from typing import Any


def _stats() -> Any:
    try:  # Airflow 3.1+ (the Task SDK)
        from airflow.sdk.observability.stats import (  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415
            Stats,
        )
    except ImportError:  # Airflow 2.10, 2.11, 3.0
        from airflow.stats import (  # type: ignore[no-redef,import-not-found,unused-ignore]  # noqa: PLC0415
            Stats,
        )
    return Stats


def incr(name: str, **tags: str) -> None:
    """Count one ``dpone.delivery.<name>``."""
    _stats().incr(f"dpone.delivery.{name}", tags=tags)


def timing(name: str, seconds: float, **tags: str) -> None:
    """Time one ``dpone.delivery.<name>``."""
    _stats().timing(f"dpone.delivery.{name}", dt.timedelta(seconds=seconds), tags=tags)
