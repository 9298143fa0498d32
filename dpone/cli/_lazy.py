"""Subcommands imported only when they run: what keeps `dpone --help` from loading the runtime.

A :class:`LazyGroup` lists each subcommand by name, the module attribute that defines it and
the first paragraph of its help (what a command listing shows). The listing is rendered from
that table alone; the module is imported when the subcommand is invoked, its own help is asked
for, or a caller looks it up with :meth:`click.Group.get_command`. A test keeps every summary
equal to the short help of the command it stands for.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import click

from dpone.cli._process import import_command
from dpone.observability import tracing

# True while a group renders its "Commands:" listing: lookups then answer with the stand-ins.
_LISTING: ContextVar[bool] = ContextVar("dpone_cli_listing", default=False)


class LazyCommand(click.Command):
    """The stand-in for a subcommand not imported yet: its name and its help summary.

    ``target`` is ``module:attribute`` of the :class:`click.Command` it stands for.
    """

    def __init__(self, name: str, target: str, summary: str) -> None:
        super().__init__(name, help=summary)
        self.target = target

    def load(self) -> click.Command:
        """The command this stands for (imports its module)."""
        module_name, _, attribute = self.target.partition(":")
        command = getattr(import_command(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


@contextmanager
def _listing() -> Iterator[None]:
    token = _LISTING.set(True)
    try:
        yield
    finally:
        _LISTING.reset(token)


class LazyGroup(click.Group):
    """A click group whose subcommands may be :class:`LazyCommand` stand-ins (see the module)."""

    def add_lazy(self, name: str, target: str, summary: str) -> None:
        """Register the subcommand ``name``, defined at ``target`` (``module:attribute``), whose
        help starts with the paragraph ``summary``."""
        self.add_command(LazyCommand(name, target, summary), name)

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """The subcommand; its path (``delivery reconcile``) names the command's span."""
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            path = [*ctx.command_path.split()[1:], command.name or ""]
            tracing.annotate(command=" ".join(path))
        return name, command, rest

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if isinstance(command, LazyCommand) and not _LISTING.get():
            command = command.load()
            self.commands[cmd_name] = command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with _listing():
            super().format_commands(ctx, formatter)
