"""Progress of a counted task (sealing children, delivering children) on stderr.

On a terminal a live bar (rich: count, elapsed and remaining time; ``NO_COLOR`` honoured); when
stderr is not a terminal, plain ``<noun> <done>/<total>`` lines, at most :data:`MAX_LINES` of
them whatever the total: one per child up to that many children, then one per percent.
"""

from __future__ import annotations

import sys
from typing import Final, TextIO

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as Bar

MAX_LINES: Final = 100


class Progress:
    """``progress(done, total)`` after each unit of work; :meth:`close` when the task ends."""

    def __init__(self, label: str, noun: str, stream: TextIO | None = None) -> None:
        self._label, self._noun = label, noun
        self._stream = stream if stream is not None else sys.stderr
        self._tty = self._stream.isatty()
        self._bar: Bar | None = None
        self._task: TaskID | None = None
        self._shown = 0  # the last plain line's step (1..MAX_LINES), 0 before the first

    def __call__(self, done: int, total: int) -> None:
        if total <= 0:
            return
        if self._tty:
            self._draw(done, total)
            return
        step = done * MAX_LINES // total if total > MAX_LINES else done
        if step > self._shown:
            self._shown = step
            click.echo(f"{self._noun} {done}/{total}", file=self._stream)

    def _draw(self, done: int, total: int) -> None:
        if self._bar is None:
            self._bar = Bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TimeRemainingColumn(),
                            console=Console(file=self._stream))
            self._bar.start()
            self._task = self._bar.add_task(self._label, total=total)
        if self._task is not None:
            self._bar.update(self._task, completed=done, total=total)

    def note(self, line: str) -> None:
        """Print ``line`` on stderr (above the bar while one is drawn)."""
        if self._bar is not None:
            self._bar.console.print(line, markup=False, highlight=False)
        else:
            click.echo(line, file=self._stream)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
