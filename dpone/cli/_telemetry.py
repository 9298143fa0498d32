"""The CLI's telemetry options: ``--log-format`` (every command), ``--metrics-port`` (a
long-running run exposes its metrics) and ``--metrics-pushgateway`` (a short-lived executor pushes
them once at exit)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final, TypeVar

import click

from dpone.observability import logs, metrics

F = TypeVar("F", bound=Callable[..., Any])

LOG_FORMAT_OPTION: Final = click.option(
    "--log-format", "log_format", type=click.Choice(logs.LOG_FORMATS), default=None,
    help="Structured log events on stderr: one per journal transition and attempt, with "
         "operation id, plan digest, child, trace and span ids [default: $DPONE_LOG_FORMAT, "
         "else off].")


def metrics_port_options(function: F) -> F:
    """``--metrics-port`` and ``--metrics-address``."""
    function = click.option(
        "--metrics-address", "metrics_address", default="127.0.0.1", show_default=True,
        envvar="DPONE_METRICS_ADDRESS", metavar="ADDRESS",
        help="Address of the --metrics-port endpoint (0.0.0.0 in a pod that is scraped).")(function)
    return click.option(
        "--metrics-port", "metrics_port", type=click.IntRange(1, 65535), default=None,
        envvar="DPONE_METRICS_PORT", metavar="PORT",
        help="Expose this run's Prometheus metrics on http://ADDRESS:PORT/metrics while it "
             "runs.")(function)


PUSHGATEWAY_OPTION: Final = click.option(
    "--metrics-pushgateway", "pushgateway", default=None, envvar="DPONE_METRICS_PUSHGATEWAY",
    metavar="URL",
    help="Push this run's metrics to the Prometheus Pushgateway at URL when it ends (grouped by "
         "job, environment and profile; a failed push is reported, never changes the exit "
         "code).")


def expose(port: int | None, address: str) -> None:
    """Serve the process's metrics on ``address:port`` when a port is given."""
    if port is not None:
        metrics.serve(port, address)
        click.echo(f"metrics: http://{address}:{port}/metrics", err=True)


@contextlib.contextmanager
def pushed(gateway: str | None, job: str, grouping: Mapping[str, str]) -> Iterator[None]:
    """Push the process's metrics to ``gateway`` when the block ends, however it ends
    (``grouping`` is read then: the run fills it in as it learns its environment and profile)."""
    try:
        yield
    finally:
        if gateway:
            try:
                metrics.push(gateway, job, dict(grouping))
            except OSError as error:  # urllib's URLError and HTTPError are OSErrors
                click.echo(f"warning: metrics not pushed to {gateway}: "
                           f"{getattr(error, 'reason', None) or error}", err=True)
