"""`dpone metrics`: the journal's metrics for Prometheus, read-only.

`serve` exposes the catalogue's journal gauges (``dpone_journal_*``, see
``dpone.contracts.metrics``) on ``http://ADDRESS:PORT/metrics``: every scrape reads the
environment's journal once, in one read-only transaction, so any replica answers the same (the
journal is the state every pod shares). When the journal cannot be read a scrape answers
``dpone_journal_up 0`` and nothing else, and the server keeps serving. Ctrl-C (or SIGTERM) stops
it, exit 0. `show` prints one scrape: the non-zero series as a table, or every series as one
``dpone.journal_metrics.v1`` document.

The journal comes from ``--environment NAME`` (its ``environments/NAME.yaml``) or
``--journal``; nothing is written to it, and it is never migrated. Each profile's certified
receipt TTL (``timeouts.receipt_ttl_s``) is read from the registry the environment file lives in
(``profiles/<id>@<version>.yaml``, or the ``--registry`` root): the journal does not record it,
and a profile not found there has no TTL series. The view is environment-wide, across every
operation namespace of the environment: a platform operator's; no label names an operation, a
digest or a namespace.
"""

from __future__ import annotations

import math
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import click

from dpone.cli._environment import ControlPlane, resolve_control_plane
from dpone.cli._hints import redact
from dpone.cli._inputs import (
    ControlPlaneArgs,
    close_quietly,
    control_plane_options,
    journal_exists,
    open_identified_journal,
)
from dpone.cli._output import FORMAT_OPTION, emit, run_guarded
from dpone.cli._table import text_table
from dpone.contracts import DponeError
from dpone.contracts.documents import JournalMetricsDocument, MetricSeries
from dpone.contracts.journal_metrics import JournalMetricsSnapshot
from dpone.contracts.metrics import ENVIRONMENT
from dpone.contracts.ports import JournalMetricsView

DEFAULT_ADDRESS: Final = "127.0.0.1"
_TIME_SINCE: Final = ("_age_seconds", "_lag_seconds", "_oldest_seconds")


class ReceiptTtls:
    """A profile ref -> its certified ``timeouts.receipt_ttl_s`` from ``<root>/profiles/``, or
    None when there is no registry or no valid file for it. A TTL found is kept (a profile
    version's file does not change); a missing one is looked for again at the next scrape."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._found: dict[str, int] = {}

    def __call__(self, profile_ref: str) -> int | None:
        if self.root is None:
            return None
        if profile_ref not in self._found:
            from dpone.compiler.profile_lookup import (  # noqa: PLC0415 - only with a registry
                load_profile,
            )

            try:
                profile = load_profile(self.root, profile_ref)
            except DponeError:
                return None
            self._found[profile_ref] = profile.timeouts.receipt_ttl_s
        return self._found[profile_ref]


def _registry_root(plane: ControlPlane) -> Path | None:
    """The registry root the environment file lives in (the directory holding environments/),
    else ``--registry``; None without either."""
    return plane.file.parent.parent if plane.file is not None else plane.registry


def _plane(control: ControlPlaneArgs) -> tuple[ControlPlane, str]:
    plane = resolve_control_plane(control)
    if not ENVIRONMENT.admits(plane.environment_id):
        raise DponeError(code="input.invalid_argument",
                         message=f"the environment id {plane.environment_id!r} is not a "
                                 "configured name (lower case, digits, _ . -): it cannot label "
                                 "a metric",
                         hint="Name an environment file with --environment NAME, or give the "
                              "environment id the journal is scoped to.")
    return plane, plane.environment_id


def _open(plane: ControlPlane) -> JournalMetricsView:
    """The existing journal, opened without migrating (nothing is created or written)."""
    if not journal_exists(plane.journal):
        raise DponeError(code="journal.not_found", message=f"no journal at {plane.journal}",
                         hint="Check --environment (its control_plane.journal) or --journal.")
    return open_identified_journal(plane.journal, environment_id=plane.environment_id,
                                   migrate=False)


@click.group("metrics")
def metrics() -> None:
    """The journal's metrics for Prometheus: serve them, or show one scrape (read-only).

    Every number is read from the environment's journal, the state every pod shares: any
    replica of `dpone metrics serve` answers the same.
    """


# --- show ---------------------------------------------------------------------------------------


def _document(snapshot: JournalMetricsSnapshot, plane: ControlPlane,
              ttls: ReceiptTtls) -> JournalMetricsDocument:
    from dpone.observability.journal_metrics import (  # noqa: PLC0415 - with prometheus_client
        journal_families,
    )

    series = tuple(
        MetricSeries(name=sample.name, type="counter" if family.type == "counter" else "gauge",
                     labels=dict(sample.labels), value=float(sample.value))
        for family in journal_families(snapshot, ttls) for sample in family.samples)
    return JournalMetricsDocument(journal=redact(plane.journal),
                                  environment_id=snapshot.environment_id,
                                  journal_now=snapshot.journal_now, series=series)


def _duration(seconds: float) -> str:
    whole = int(seconds)
    days, rest = divmod(whole, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {secs:02d}s" if minutes else f"{seconds:.1f}s"


def _value(series: MetricSeries) -> str:
    value = series.value
    shown = str(int(value)) if value == math.floor(value) else f"{value:.3f}"
    if series.name.endswith(_TIME_SINCE):
        return f"{shown} ({_duration(value)})"
    return shown


def _text(document: JournalMetricsDocument) -> str:
    shown = [series for series in document.series if series.value != 0]
    lines = [f"journal metrics of environment {document.environment_id} at "
             f"{document.journal_now.isoformat(timespec='seconds')} (journal clock; read-only)"]
    rows = []
    for series in shown:
        labels = dict(series.labels)
        if "axis" in labels:  # a state axis and its state: execution_state=SEALED
            labels[labels.pop("axis")] = labels.pop("state")
        others = [f"{name}={value}" for name, value in labels.items()
                  if name not in ("environment", "profile")]
        rows.append((series.name, labels.get("profile", ""), " ".join(others), _value(series)))
    lines.append(text_table(("metric", "profile", "labels", "value"), rows, numeric=("value",)))
    left_out = len(document.series) - len(shown)
    lines.append(f"{len(shown)} non-zero series; {left_out} zero-valued left out "
                 "(--format json lists every series)")
    return "\n".join(lines)


@metrics.command("show")
@control_plane_options()
@FORMAT_OPTION
def show(control: ControlPlaneArgs, fmt: str) -> None:
    """Print one scrape of the journal's metrics (read-only).

    Text shows the non-zero series as a table; --format json writes every series as one
    dpone.journal_metrics.v1 document.
    """

    def body() -> int:
        plane, environment_id = _plane(control)
        journal = _open(plane)
        try:
            snapshot = journal.metrics_snapshot(environment_id)
        finally:
            close_quietly(journal)
        emit(_document(snapshot, plane, ReceiptTtls(_registry_root(plane))), fmt, _text)
        return 0

    run_guarded(fmt, body)


# --- serve --------------------------------------------------------------------------------------


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT (Ctrl-C) and SIGTERM set ``stop`` while the block runs (in the main thread; in
    another, Ctrl-C still arrives as KeyboardInterrupt)."""
    previous: dict[signal.Signals, Any] = {}
    try:
        for number in (signal.SIGINT, signal.SIGTERM):
            previous[number] = signal.signal(number, lambda *_: stop.set())
    except ValueError:  # not the main thread: signal handlers cannot be installed here
        pass
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _report_change(up: bool, error: Exception | None) -> None:
    """One line on stderr each time the journal becomes unreadable or readable again."""
    if error is not None:
        code = error.code if isinstance(error, DponeError) else type(error).__name__
        message = error.message if isinstance(error, DponeError) else str(error)
        click.echo(f"the journal cannot be read ({code}: {message}): scrapes answer "
                   "dpone_journal_up 0 until it can", err=True)
    elif up:
        click.echo("the journal is readable: scrapes answer its metrics", err=True)


def _url(address: str, port: int) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}:{port}/metrics"


@metrics.command("serve")
@control_plane_options()
@click.option("--address", default=DEFAULT_ADDRESS, show_default=True,
              help="The address to listen on (0.0.0.0 or :: for every interface).")
@click.option("--port", type=click.IntRange(0, 65535), required=True,
              help="The port to listen on (0: a free one, printed).")
def serve(control: ControlPlaneArgs, address: str, port: int) -> None:
    """Serve the journal's metrics on /metrics until Ctrl-C (read-only).

    Each scrape reads the environment's journal in one read-only transaction; when it cannot be
    read, the scrape answers dpone_journal_up 0 and the server keeps serving.
    """

    def body() -> int:
        from prometheus_client import (  # noqa: PLC0415 - only when serving
            CollectorRegistry,
            start_http_server,
        )

        from dpone.observability.journal_metrics import (  # noqa: PLC0415 - with it
            JournalMetricsCollector,
        )

        plane, environment_id = _plane(control)
        journal = _open(plane)
        collector = JournalMetricsCollector(journal, environment_id,
                                            receipt_ttl=ReceiptTtls(_registry_root(plane)),
                                            on_change=_report_change)
        registry = CollectorRegistry()
        registry.register(collector)
        try:
            server, thread = start_http_server(port, addr=address, registry=registry)
        except OSError as error:
            close_quietly(journal)
            raise DponeError(code="input.invalid_argument",
                             message=f"cannot serve metrics on {address}:{port}: "
                                     f"{error.strerror or error}",
                             hint="Choose a free --port, or an --address of this machine.") \
                from None
        stop = threading.Event()
        try:
            with _stop_on_signals(stop):
                click.echo(f"serving the journal metrics of environment {environment_id} on "
                           f"{_url(address, server.server_port)} (read-only: each scrape reads "
                           f"{redact(plane.journal)} in one read-only transaction; Ctrl-C "
                           "stops)")
                list(collector.collect())  # says at once on stderr when it cannot be read
                while not stop.wait(1.0):
                    pass
        except KeyboardInterrupt:
            pass
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)
            close_quietly(journal)
        click.echo("stopped serving the journal metrics", err=True)
        return 0

    run_guarded("text", body)
