"""`dpone deliver`: freeze, seal, admit and deliver one source boundary to its receiver."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from dpone.artifacts import open_artifact_store
from dpone.cli._environment import (
    refuse_new_deliveries_when_off,
    registry_defaults,
    run_control_plane,
)
from dpone.cli._inputs import DEFAULT_JOURNAL, boundary_options, persist_plan, read_target_plan
from dpone.cli._output import FORMAT_OPTION, emit, run_guarded
from dpone.cli._telemetry import expose, metrics_port_options
from dpone.cli.delivery._boundary_run import BoundaryRun, announce_stores, deliver_boundary
from dpone.executor.supervisor import check_profile


@click.command(name="deliver")
@boundary_options
@click.option("--journal", "journal_url", default=None,
              show_default=f"the environment file's control_plane, else <registry>/"
                           f"{DEFAULT_JOURNAL}",
              help="Journal: a SQLite file (local development) or postgresql://... URL.")
@click.option("--wait/--no-wait", "wait", default=False, show_default=True,
              help="Keep observing asynchronous jobs in-process until every child is terminal.")
@metrics_port_options
@FORMAT_OPTION
def deliver_command(target: str, registry: Path, interval_start: dt.datetime,
                    interval_end: dt.datetime, journal_url: str | None,
                    artifacts_url: str | None, plans: Path | None, wait: bool,
                    metrics_port: int | None, metrics_address: str, fmt: str) -> None:
    """Deliver [--interval-start, --interval-end) through the plan's operation profile.

    Publishes the plan into the artifact store (create-if-absent, by its digest: recovery
    loads it from there), freezes and seals the boundary (create-if-absent), admits the whole
    child topology in one journal transaction, then submits, observes, verifies and promotes
    each child. Running it again resumes from the journal: nothing that may have reached the
    receiver is resent. The journal, artifact store and plan store are the options given, else
    those the environment file's control_plane names, else <registry>/.dpone/...: they never
    depend on the current directory, and the run prints which it uses.
    Once admitted, every outcome is a dpone.delivery_result.v1 summary (status completed,
    pending, blocked or stopped) with the delivery id and the next command.
    Exit 0 delivered or pending on a durable receipt, 2 invalid or intent conflict,
    3 unavailable, 4 remote effect unknown or partial, 5 proven terminal receiver failure.
    """

    def body() -> int:
        expose(metrics_port, metrics_address)
        loaded = read_target_plan(target, registry, plans or registry_defaults(registry)[2])
        check_profile(loaded.plan)
        plane = run_control_plane(registry, loaded.plan.environment.ref, journal=journal_url,
                                  artifacts=artifacts_url, plans=plans)
        refuse_new_deliveries_when_off(plane, loaded.plan.environment.snapshot.tier)
        persist_plan(plane.plans, loaded)
        announce_stores(plane)
        outcome = deliver_boundary(BoundaryRun(
            plan=loaded.plan, plan_digest=loaded.digest, canonical=loaded.canonical,
            journal_url=plane.journal, store=open_artifact_store(plane.artifacts),
            source_root=registry, interval_start=interval_start.date(),
            interval_end=interval_end.date(), wait=wait, locators=plane.locators,
            leases=plane.leases))
        emit(outcome.document, fmt, lambda _: outcome.text)
        return outcome.exit_code

    run_guarded(fmt, body)
