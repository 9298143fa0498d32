"""`dpone deliver`: freeze, seal, admit and deliver one source boundary to its receiver."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from dpone.artifacts import open_artifact_store
from dpone.cli._hints import Locators
from dpone.cli._inputs import DEFAULT_JOURNAL, boundary_options, read_target_plan
from dpone.cli._output import FORMAT_OPTION, emit, run_guarded
from dpone.cli.delivery._boundary_run import BoundaryRun, deliver_boundary
from dpone.compiler.environment_file import lease_policy
from dpone.executor.supervisor import check_profile


@click.command(name="deliver")
@boundary_options
@click.option("--journal", "journal_url", default=DEFAULT_JOURNAL, show_default=True,
              help="Journal: a SQLite file (local development) or postgresql://... URL.")
@click.option("--wait/--no-wait", "wait", default=False, show_default=True,
              help="Keep observing asynchronous jobs in-process until every child is terminal.")
@FORMAT_OPTION
def deliver_command(target: str, registry: Path, interval_start: dt.datetime,
                    interval_end: dt.datetime, journal_url: str, artifacts_url: str,
                    plans: Path, wait: bool, fmt: str) -> None:
    """Deliver [--interval-start, --interval-end) through the plan's operation profile.

    Publishes the plan into the artifact store (create-if-absent, by its digest: recovery
    loads it from there), freezes and seals the boundary (create-if-absent), admits the whole
    child topology in one journal transaction, then submits, observes, verifies and promotes
    each child. Running it again resumes from the journal: nothing that may have reached the
    receiver is resent.
    Once admitted, every outcome is a dpone.delivery_result.v1 summary (status completed,
    pending, blocked or stopped) with the delivery id and the next command.
    Exit 0 delivered or pending on a durable receipt, 2 invalid or intent conflict,
    3 unavailable, 4 remote effect unknown or partial, 5 proven terminal receiver failure.
    """

    def body() -> int:
        loaded = read_target_plan(target, registry, plans, persist=True)
        check_profile(loaded.plan)
        environment = loaded.plan.environment.snapshot
        locators = Locators.given(environment=environment.environment_id, journal=journal_url,
                                  artifacts=artifacts_url, plans=plans)
        outcome = deliver_boundary(BoundaryRun(
            plan=loaded.plan, plan_digest=loaded.digest, canonical=loaded.canonical,
            journal_url=journal_url, store=open_artifact_store(artifacts_url),
            source_root=registry, interval_start=interval_start.date(),
            interval_end=interval_end.date(), wait=wait, locators=locators,
            leases=lease_policy(registry, loaded.plan.environment.ref)))
        emit(outcome.document, fmt, lambda _: outcome.text)
        return outcome.exit_code

    run_guarded(fmt, body)
