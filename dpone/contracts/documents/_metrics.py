"""``dpone.journal_metrics.v1``: one scrape of the journal's metrics, as `dpone metrics show`
writes it (what `dpone metrics serve` exposes to Prometheus at that moment)."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from dpone.contracts.documents._report import Report, Timestamp

JOURNAL_METRICS_SCHEMA_ID: Final = "dpone.journal_metrics.v1"


class MetricSeries(Report):
    """One series of the scrape: a metric of the catalogue (``dpone.contracts.metrics``) and one
    combination of its labels' values."""

    name: str
    """The metric's catalogue name, as exposed (a counter's ends with ``_total``)."""
    type: Literal["counter", "gauge"]
    labels: dict[str, str]
    """Every label of the metric, by name: configured names and closed values only, never an
    operation id, a digest or an operation namespace."""
    value: float


class JournalMetricsDocument(Report):
    schema_id: Literal["dpone.journal_metrics.v1"] = Field(default=JOURNAL_METRICS_SCHEMA_ID,
                                                           alias="schema")
    journal: str
    """The journal URL, its password redacted."""
    environment_id: str
    journal_now: Timestamp
    """The journal's clock when it was read: every age is measured against it."""
    series: tuple[MetricSeries, ...]
    """Every series of the scrape, zero-valued ones included, in exposition order."""
