"""`dpone check` and `dpone plan` (filled in by the compiler work)."""

from __future__ import annotations

import click


@click.command()
def check() -> None:
    """Validate a workload offline."""


@click.command()
def plan() -> None:
    """Compile a workload into a content-addressed plan."""
