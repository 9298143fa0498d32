"""`dpone catalog`: the generated catalog of a registry's operation profiles.

`build` renders it into a directory (an index with the source/sink matrix, a page per profile,
and the same pages as static HTML); `check` renders it again in memory with the settings the
index records and names every file that differs. Rendering lives in
:mod:`dpone.compiler.catalog`; this module parses options and reports.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from dpone.cli._output import run_guarded
from dpone.compiler.catalog import (
    INDEX_FILE,
    BuildSettings,
    recorded_settings,
    render_catalog,
    stale_files,
    write_catalog,
)

REGISTRY = click.option(
    "--registry", "registry", required=True, type=click.Path(path_type=Path, file_okay=False),
    help="Registry root holding profiles/, workloads/, bindings/, environments/ and "
         "certifications/.")
OUT = click.option("--out", "out", required=True,
                   type=click.Path(path_type=Path, file_okay=False),
                   help="The catalog directory (README.md, profiles/, html/).")


def _today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


@click.group(name="catalog")
def catalog() -> None:
    """The generated catalog of a registry's operation profiles: build it, or check it.

    A page per profile (family, endpoints, body and codec, limits, timeouts, retry and rate,
    idempotency in words, verification, retention, maturity, certification results and their
    age, the workloads and bindings that use it) and an index with the source/sink matrix, as
    Markdown and static HTML. Certification ages are judged at an as-of date the index records,
    so a committed catalog renders the same on every later day.
    """


@catalog.command("build")
@REGISTRY
@OUT
@click.option("--as-of", "as_of", type=click.DateTime(formats=["%Y-%m-%d"]), default=None,
              help="The date certification ages and staleness are judged at (YYYY-MM-DD; "
                   "at the end of that day, UTC).  [default: today]")
@click.option("--html/--no-html", "html", default=True, show_default=True,
              help="Also write the pages as static HTML under html/.")
def build(registry: Path, out: Path, as_of: dt.datetime | None, html: bool) -> None:
    """Render the catalog of --registry into --out, rewriting only the files that changed.

    Writes README.md (the index and the source/sink matrix), profiles/<id>@<version>.md and,
    with --html, html/*.html; removes the pages of profiles the registry no longer holds.
    Exit 0; 2 when the registry does not load.
    """
    def body() -> int:
        settings = BuildSettings(as_of.date() if as_of is not None else _today(), html)
        files = render_catalog(registry, settings, str(registry))
        written, removed = write_catalog(out, files)
        for name in written:
            click.echo(f"wrote {out / name}")
        for name in removed:
            click.echo(f"removed {out / name}")
        click.echo(f"{out}: {len(files)} files ({len(written)} written, {len(removed)} removed), "
                   f"as of {settings.as_of.isoformat()}")
        return 0

    run_guarded("text", body)


@catalog.command("check")
@REGISTRY
@OUT
def check(registry: Path, out: Path) -> None:
    """Render the catalog of --registry again and compare it with --out; write nothing.

    Uses the as-of date and HTML setting --out's README.md records. Exit 0 when every file is
    current; 1 naming each stale, missing or no longer generated file; 2 when the registry does
    not load.
    """
    def body() -> int:
        settings = recorded_settings(out) or BuildSettings(_today(), html=True)
        files = render_catalog(registry, settings, str(registry))
        stale = stale_files(out, files)
        if not stale:
            click.echo(f"{out} is current: {len(files)} files, as of {settings.as_of.isoformat()}")
            return 0
        for item in stale:
            click.echo(f"{out / item.file}: stale ({item.reason})", err=True)
        if recorded_settings(out) is None:
            click.echo(f"{out / INDEX_FILE} records no build settings", err=True)
        click.echo(f"hint: run `dpone catalog build --registry {registry} --out {out} --as-of "
                   f"{settings.as_of.isoformat()} --{'' if settings.html else 'no-'}html` "
                   "(or a later --as-of to judge certifications today) and review the diff",
                   err=True)
        return 1

    run_guarded("text", body, error_exit=2)
