"""`dpone docs ...`: design-contract and reference-documentation commands."""

from __future__ import annotations

import click


@click.group(name="docs")
def docs() -> None:
    """Design contract validation and generated reference documentation."""
