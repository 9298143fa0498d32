"""The process's Prometheus metrics, built from the catalogue (:mod:`dpone.contracts.metrics`).

One :data:`REGISTRY` per process holds a collector for each ``process`` metric of the catalogue;
the recording functions below are what the executor calls (each a dictionary lookup and a lock,
per request or per step, never per row). A long-running process exposes the registry with
:func:`serve` (``--metrics-port``); a short-lived one pushes it once at exit with :func:`push`
(``--metrics-pushgateway``), grouped by job, environment and profile, never by operation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    push_to_gateway,
    start_http_server,
)
from prometheus_client.metrics_core import Metric as Family
from prometheus_client.registry import Collector

from dpone.contracts import DponeError
from dpone.contracts.metrics import BY_NAME, Metric, status_class

REGISTRY: Final = CollectorRegistry(auto_describe=True)

DURATION_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
                           60.0, 120.0, 300.0, 900.0, 3600.0)


def _metric(name: str, kind: str) -> Metric:
    metric = BY_NAME[name]
    if metric.type != kind or metric.source != "process":
        raise TypeError(f"{name} is a {metric.source} {metric.type} in the catalogue, not a {kind}")
    return metric


def _counter(name: str) -> Counter:
    metric = _metric(name, "counter")
    return Counter(name.removesuffix("_total"), metric.help, metric.label_names, registry=REGISTRY)


def _histogram(name: str) -> Histogram:
    metric = _metric(name, "histogram")
    return Histogram(name, metric.help, metric.label_names, registry=REGISTRY,
                     buckets=DURATION_BUCKETS)


REQUESTS: Final = _counter("dpone_requests_total")
REQUEST_SECONDS: Final = _histogram("dpone_request_duration_seconds")
ROWS_SENT: Final = _counter("dpone_rows_sent_total")
BYTES_SENT: Final = _counter("dpone_bytes_sent_total")
RATE_WAIT: Final = _counter("dpone_rate_limit_wait_seconds_total")
RETRIES: Final = _counter("dpone_retries_total")
STAGE_SECONDS: Final = _histogram("dpone_stage_duration_seconds")
TRANSITIONS: Final = _counter("dpone_transitions_total")
DELIVERIES: Final = _counter("dpone_deliveries_total")
CAS_CONFLICTS: Final = _counter("dpone_journal_cas_conflicts_total")


def request(profile: str, phase: str, outcome: str, status: int | None, seconds: float) -> None:
    """One request handed to the transport and its answer (``outcome`` ``response``) or failure
    kind."""
    REQUESTS.labels(profile, phase, outcome, status_class(status)).inc()
    REQUEST_SECONDS.labels(profile, phase).observe(seconds)


def sent(profile: str, rows: int, wire_bytes: int) -> None:
    ROWS_SENT.labels(profile).inc(rows)
    BYTES_SENT.labels(profile).inc(wire_bytes)


def rate_wait(profile: str, kind: str, seconds: float) -> None:
    if seconds > 0:
        RATE_WAIT.labels(profile, kind).inc(seconds)


def retry(profile: str, action: str, status: int | None) -> None:
    RETRIES.labels(profile, action, status_class(status)).inc()


def stage(name: str, seconds: float) -> None:
    STAGE_SECONDS.labels(name).observe(seconds)


def transition(profile: str, transition_id: str) -> None:
    TRANSITIONS.labels(profile, transition_id).inc()


def delivery(profile: str, family: str, result: str) -> None:
    DELIVERIES.labels(profile, family, result).inc()


def cas_conflict() -> None:
    CAS_CONFLICTS.inc()


def serve(port: int, address: str = "127.0.0.1") -> None:
    """Expose :data:`REGISTRY` on ``http://address:port/metrics`` from a daemon thread."""
    try:
        start_http_server(port, addr=address, registry=REGISTRY)
    except OSError as error:
        raise DponeError(code="input.invalid_argument", message=f"cannot serve metrics on {address}:{port}: "
                         f"{error.strerror or error}",
                         hint="choose a free port with --metrics-port") from None


class _Grouped(Collector):
    """What one push may carry under ``grouping``: every family of ``registry``, each sample
    whose labels name a grouping key only with that key's value. The Pushgateway refuses a
    whole push whose samples contradict its grouping key (400), so a process that recorded more
    than one profile pushes each profile's series under its own group and nothing else."""

    def __init__(self, registry: CollectorRegistry, grouping: Mapping[str, str]) -> None:
        self._registry = registry
        self._grouping = dict(grouping)

    def collect(self) -> Iterable[Family]:
        for family in self._registry.collect():
            grouped = Family(family.name, family.documentation, family.type, family.unit)
            grouped.samples = [sample for sample in family.samples
                               if all(sample.labels.get(key, value) == value
                                      for key, value in self._grouping.items())]
            yield grouped


def push(gateway: str, job: str, grouping: dict[str, str]) -> None:
    """Push :data:`REGISTRY` to the Pushgateway at ``gateway``, replacing the previous push of
    this job and grouping key: the last run's figures per environment and profile (bounded
    names, never an operation id or a pod name, so the gateway's groups stay bounded). Series of
    another environment or profile the process recorded stay out of this group."""
    pushed = CollectorRegistry(auto_describe=False)
    pushed.register(_Grouped(REGISTRY, grouping))
    push_to_gateway(gateway, job=job, grouping_key=grouping, registry=pushed, timeout=10)
