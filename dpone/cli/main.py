"""The `dpone` console entry point: a click group that wires the subcommands.

Each subcommand's module is imported only when it runs (:mod:`dpone.cli._lazy`): `dpone --help`
and `dpone delivery inspect` do not load the compiler, the sealer or the transport.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from dpone import __version__
from dpone.cli._lazy import LazyGroup
from dpone.cli._output import JSON_REQUESTED, failures_rendered, wants_json
from dpone.cli._process import owned_process
from dpone.cli._telemetry import LOG_FORMAT_OPTION
from dpone.observability import logs, tracing

# (name, module:attribute, the first paragraph of its help): a listing shows the summary without
# importing the module; tests/unit/cli/test_cli_lazy_commands.py keeps it equal to the command's.
COMMANDS = (
    ("admin", "dpone.cli.admin:admin",
     "Platform administration of an environment's journal (audited)."),
    ("catalog", "dpone.cli.catalog:catalog",
     "The generated catalog of a registry's operation profiles: build it, or check it."),
    ("check", "dpone.cli.compile:check",
     "Validate WORKLOAD against the registry offline and show what it compiles to."),
    ("deliver", "dpone.cli.delivery.deliver:deliver_command",
     "Deliver [--interval-start, --interval-end) through the plan's operation profile."),
    ("docs", "dpone.cli.docs:docs",
     "Design contract validation and generated reference documentation."),
    ("metrics", "dpone.cli.metrics:metrics",
     "The journal's metrics for Prometheus: serve them, or show one scrape (read-only)."),
    ("plan", "dpone.cli.plan:plan",
     "Compile workloads into content-addressed plans and goldens, or diff two plans."),
    ("preview", "dpone.cli.preview:preview",
     "Show the requests a plan sends for an interval, offline: credentials as references."),
    ("profile", "dpone.cli.profile:profile",
     "Operation profiles: certify a receiver against what a profile claims."),
    ("receiver", "dpone.cli.receiver:receiver",
     "The local mock receiver used by the tutorial, the demo and the tests."),
    ("seal", "dpone.cli.seal:seal",
     "Freeze [--interval-start, --interval-end), plan its children and seal every payload."),
)
# `dpone admin` subcommands of their own modules (`admin gate` lives in dpone.cli.admin).
ADMIN_COMMANDS = (
    ("audit", "dpone.cli.admin_audit:audit",
     "Export the environment's audit trail: actor, decision, states, digests (read-only)."),
    ("prune", "dpone.cli.admin_prune:prune",
     "Delete sealed payloads that retention.payload_days lets go (preview without --apply)."),
    ("revocations", "dpone.cli.admin_revoke:revocations",
     "Show the revocation list and its recent audited changes (read-only)."),
    ("revoke", "dpone.cli.admin_revoke:revoke",
     "Deny every new submit that uses a profile or binding (audited; nothing else stops)."),
    ("unrevoke", "dpone.cli.admin_revoke:unrevoke",
     "Lift a revocation: new submits of plans that use it may go on (audited)."),
)
DELIVERY_COMMANDS = (
    ("inspect", "dpone.cli.delivery.inspect:inspect",
     "Show every axis, the frontier, artifact ids, receipt age, allowed next actions and the "
     "operator actions recorded (read-only: takes no lease, writes nothing)."),
    ("list", "dpone.cli.delivery.delivery_list:list_command",
     "List the deliveries in a journal, newest first (read-only)."),
    ("reconcile", "dpone.cli.delivery.reconcile:reconcile_command",
     "Prove one child's unknown or partial remote effect and record it (audited)."),
    ("resume", "dpone.cli.delivery.resume:resume_command",
     "Continue an admitted delivery from its journal, stored plan and sealed payloads."),
)


class DponeGroup(LazyGroup):
    """The top-level group: every failure that escapes a command, including click's own usage
    errors, is rendered once here (see :func:`failures_rendered`), never as a traceback; with
    ``NO_COLOR`` set, nothing is coloured."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        if os.environ.get("NO_COLOR"):  # https://no-color.org: present and not empty
            extra.setdefault("color", False)  # every echo, style and bar of this run is plain
        token = JSON_REQUESTED.set(wants_json(argv))
        try:
            return super().main(argv, prog_name, complete_var, standalone_mode, **extra)
        finally:
            JSON_REQUESTED.reset(token)

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        with failures_rendered():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command inside one span ``dpone.command`` (the root of the command's trace,
        or a child of ``TRACEPARENT``'s): its compile, freeze, seal and delivery spans are one
        trace."""
        with failures_rendered(), tracing.span("dpone.command"):
            return super().invoke(ctx)



@click.group(cls=DponeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dpone")
@LOG_FORMAT_OPTION
def cli(log_format: str | None) -> None:
    """dpone: governed REST bulk delivery."""
    logs.configure(log_format)


@click.group(cls=LazyGroup)
def delivery() -> None:
    """List and inspect (read-only), reconcile and resume deliveries recorded in the journal."""


for _name, _target, _summary in COMMANDS:
    cli.add_lazy(_name, _target, _summary)
cli.add_command(delivery)
for _name, _target, _summary in DELIVERY_COMMANDS:
    delivery.add_lazy(_name, _target, _summary)


def main() -> None:
    tracing.configure()  # spans only when the OTEL_* variables ask for them
    try:
        with owned_process():
            cli(prog_name="dpone")
    finally:
        tracing.shutdown()  # every exit path, an error's too, flushes the spans
