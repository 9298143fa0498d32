"""Shared CLI rendering: one JSON document on stdout, or text for a person; never a traceback."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from dpone.contracts import DponeError

FORMAT_OPTION = click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="text for people, json for machines (one document on stdout).",
)


def emit_json(document: dict[str, Any]) -> None:
    click.echo(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False))


def render_error(error: DponeError, fmt: str) -> None:
    if fmt == "json":
        emit_json(error.to_document())
        return
    where = error.location.render() if error.location else None
    lines = [click.style("error", fg="red", bold=True) + (f": {where}" if where else "")]
    lines.append(f"  {error.code}: {error.message}")
    for other in error.details.get("more", []):
        lines.append(f"  also: {other}")
    lines.append(f"  hint: {error.fix_hint}")
    click.echo("\n".join(lines), err=True)


def run_guarded(fmt: str, action: Callable[[], int]) -> None:
    """Run a command body; a DponeError becomes its rendering and exit code."""
    try:
        code = action()
    except DponeError as error:
        render_error(error, fmt)
        sys.exit(error.exit_code)
    sys.exit(code)
