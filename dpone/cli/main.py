"""The `dpone` console entry point: a click group that wires the subcommands."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from dpone import __version__
from dpone.cli._output import JSON_REQUESTED, failures_rendered, wants_json
from dpone.cli.compile import check, plan
from dpone.cli.delivery.deliver import deliver_command
from dpone.cli.delivery.inspect import delivery
from dpone.cli.delivery.reconcile import reconcile_command
from dpone.cli.docs import docs
from dpone.cli.receiver import receiver
from dpone.cli.seal import seal


class DponeGroup(click.Group):
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
        with failures_rendered():
            return super().invoke(ctx)


@click.group(cls=DponeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dpone")
def cli() -> None:
    """dpone: governed REST bulk delivery."""


cli.add_command(check)
cli.add_command(plan)
cli.add_command(seal)
cli.add_command(deliver_command)
delivery.add_command(reconcile_command)
cli.add_command(delivery)
cli.add_command(docs)
cli.add_command(receiver)


def main() -> None:
    cli(prog_name="dpone")
