"""`dpone docs ...`: design-contract validation and generated reference documentation."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dpone.compiler.design_contract import (
    check_contract_file,
    check_shipped_contract,
    render_state_machine_reference,
    render_text,
)
from dpone.contracts import DponeError

REFERENCE_PATH = Path("docs/reference/state-machine.md")


def _fail(exc: DponeError, fmt: str) -> None:
    """Render a contract error (``dpone.error.v1`` on stdout for json) and exit with its code."""
    if fmt == "json":
        click.echo(json.dumps(exc.to_document(), indent=2, sort_keys=True))
    else:
        click.echo(f"error: {exc}", err=True)
        click.echo(f"hint: {exc.fix_hint}", err=True)
    raise SystemExit(exc.exit_code)


@click.group(name="docs")
def docs() -> None:
    """Design contract validation and generated reference documentation."""


@docs.command("check-rest-delivery-design-contract")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="text: one line per check; json: one report document.")
def check_rest_delivery_design_contract(path: Path | None, fmt: str) -> None:
    """Validate the delivery state-machine contract (default: the shipped one).

    Exit 0 when every check passes; 2 for invalid YAML, schema or semantic findings.
    """
    try:
        report = check_contract_file(path) if path is not None else check_shipped_contract()
    except DponeError as exc:
        _fail(exc, fmt)
        return
    error = report.error
    if fmt == "json":
        click.echo(json.dumps(report.to_document(), indent=2, sort_keys=True))
    else:
        click.echo(render_text(report))
        if error is not None:
            click.echo(f"error: {error}", err=True)
    if error is not None:
        raise SystemExit(error.exit_code)


@docs.command("generate-state-machine-reference")
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 when the file differs from the contract.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path),
              default=REFERENCE_PATH, show_default=True)
def generate_state_machine_reference(check_only: bool, output: Path) -> None:
    """Render the legal tuples, transitions and diagram of the shipped contract as Markdown."""
    try:
        text = render_state_machine_reference()
    except DponeError as exc:
        _fail(exc, "text")
        return
    current = output.read_text(encoding="utf-8") if output.is_file() else None
    if check_only:
        if current != text:
            click.echo(f"{output} is stale; run `dpone docs generate-state-machine-reference`",
                       err=True)
            raise SystemExit(1)
        click.echo(f"{output} is current")
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    click.echo(f"wrote {output}")
