"""The `dpone` console entry point: a click group that wires the subcommands."""

from __future__ import annotations

import click

from dpone import __version__
from dpone.cli.compile import check, plan
from dpone.cli.deliver import deliver_command
from dpone.cli.delivery import delivery
from dpone.cli.docs import docs
from dpone.cli.receiver import receiver
from dpone.cli.seal import seal


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dpone")
def cli() -> None:
    """dpone: governed REST bulk delivery."""


cli.add_command(check)
cli.add_command(plan)
cli.add_command(seal)
cli.add_command(deliver_command)
cli.add_command(delivery)
cli.add_command(docs)
cli.add_command(receiver)


def main() -> None:
    cli(prog_name="dpone")
