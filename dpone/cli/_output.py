"""Shared CLI rendering: one JSON document on stdout, or text for a person; never a traceback."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

import click
from pydantic import BaseModel

from dpone.contracts import DponeError

_Document = TypeVar("_Document", bound=BaseModel)

INTERRUPTED_EXIT = 130
"""The exit code of a command stopped by Ctrl-C (SIGINT): 128 + 2, as shells report it."""

FORMAT_OPTION = click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="text for people, json for machines (one document on stdout).",
)

# Whether the command line asked for --format json: known before click parses it, so a usage
# error (which stops parsing) still answers in the format the caller reads.
JSON_REQUESTED: ContextVar[bool] = ContextVar("dpone_json_requested", default=False)


def wants_json(argv: Sequence[str]) -> bool:
    """``--format json`` or ``--format=json`` is among the options of ``argv``."""
    for index, arg in enumerate(argv):
        if arg == "--":
            return False
        if arg == "--format=json" or (arg == "--format" and argv[index + 1:index + 2] == ["json"]):
            return True
    return False


def emit_json(document: BaseModel) -> None:
    """``document`` (a model of :mod:`dpone.contracts.documents`) as indented JSON, keys sorted."""
    click.echo(json.dumps(document.model_dump(mode="json", by_alias=True), indent=2,
                          sort_keys=True, ensure_ascii=False))


def emit(document: _Document, fmt: str, text: Callable[[_Document], str]) -> None:
    """``document`` on stdout: as JSON when ``fmt`` is json, else rendered for people by
    ``text`` (called only then)."""
    if fmt == "json":
        emit_json(document)
    else:
        click.echo(text(document))


def invalid_argument(message: str, hint: str) -> DponeError:
    """``input.invalid_argument``: options that cannot go together, or a value out of range."""
    return DponeError(code="input.invalid_argument", message=message, hint=hint)


def render_error(error: DponeError, fmt: str) -> None:
    if fmt == "json":
        emit_json(error.document())
        return
    where = error.location.render() if error.location else None
    lines = [click.style("error", fg="red", bold=True) + (f": {where}" if where else "")]
    lines.append(f"  {error.code}: {error.message}")
    for other in error.details.get("more", []):
        lines.append(f"  also: {other}")
    lines.append(f"  hint: {error.fix_hint}")
    click.echo("\n".join(lines), err=True)


def run_guarded(fmt: str, action: Callable[[], int], *, error_exit: int | None = None) -> None:
    """Run a command body; a DponeError becomes its rendering and exit code (``error_exit``
    instead for a command whose exit codes say "same", "different" and "error", like
    ``git diff --exit-code``)."""
    try:
        code = action()
    except DponeError as error:
        render_error(error, fmt)
        sys.exit(error.exit_code if error_exit is None else error_exit)
    sys.exit(code)


def _usage_error(failure: click.ClickException) -> DponeError:
    context = getattr(failure, "ctx", None)
    command = context.command_path if isinstance(context, click.Context) else "dpone"
    details: dict[str, Any] = {"command": command}
    if isinstance(context, click.Context):
        details["usage"] = context.get_usage()
    param = getattr(failure, "param", None)
    if isinstance(param, click.Parameter):
        details["parameter"] = param.name
    return DponeError(code="input.invalid_argument", message=failure.format_message(),
                      hint=f"Check the command's arguments: `{command} --help`.", details=details)


def _filesystem_error(failure: OSError) -> DponeError:
    path = str(failure.filename)
    return DponeError(code="filesystem.unavailable",
                      message=f"{path}: {failure.strerror or type(failure).__name__}",
                      details={"path": path, "errno": failure.errno})


@contextlib.contextmanager
def failures_rendered() -> Iterator[None]:
    """Render what escapes a command once, then exit with its code.

    A click usage error, a catalog error or a file system error naming its path: with --format
    json one ``dpone.error.v1`` document on stdout; in text a usage error keeps click's usage
    text (exit 2) and anything else gets the dpone rendering. Any other exception stays a bug.
    """
    fmt = "json" if JSON_REQUESTED.get() else "text"
    try:
        yield
    except click.ClickException as failure:
        error = _usage_error(failure)
        if fmt == "json":
            render_error(error, fmt)
        else:
            failure.show()
        raise click.exceptions.Exit(error.exit_code) from failure
    except DponeError as caught:
        render_error(caught, fmt)
        raise click.exceptions.Exit(caught.exit_code) from caught
    except OSError as failure:
        if failure.filename is None:
            raise
        translated = _filesystem_error(failure)
        render_error(translated, fmt)
        raise click.exceptions.Exit(translated.exit_code) from failure
    except KeyboardInterrupt as interrupt:
        # Ctrl-C: the shell's convention (128 + SIGINT), never click's "Aborted!" and exit 1.
        # A delivery that was admitted prints its own summary before it gets here.
        click.echo("interrupted (Ctrl-C): every journal write is a transaction, so what was "
                   "recorded stays; run the command again, or `dpone delivery list` to find "
                   "an admitted delivery", err=True)
        raise click.exceptions.Exit(INTERRUPTED_EXIT) from interrupt
