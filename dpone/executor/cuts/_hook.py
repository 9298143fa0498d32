"""The process-cut hook: a test switch that SIGKILLs this process at one named point.

``DPONE_TEST_CUT`` names one cut, ``<when>:<point>[@<occurrence>]`` (``after:submitting``,
``before:send@2`` for the second send of the process), or ``trace``: every passage is written to
stderr and nothing is cut (how a test learns the points a run passes). Unset, no hook exists
and nothing is wrapped: the ports run as they are. Set, the process kills itself with SIGKILL at that point:
no ``finally`` block, no lease release, no buffered output, exactly like a lost node. The one
line written to stderr first (unbuffered) names the cut, so a test can tell where it died.
"""

from __future__ import annotations

import os
import re
import signal
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from dpone.contracts import DponeError

CUT_ENV: Final = "DPONE_TEST_CUT"
"""The test environment variable that names the one cut point of a process."""
TRACE: Final = "trace"
"""The value of :data:`CUT_ENV` that traces every passage instead of cutting."""
PASSAGE_PREFIX: Final = "dpone: test cut passage "

When = Literal["before", "after"]
_SPEC: Final = re.compile(r"(before|after):([a-z_]+(?:\.[a-z_]+)?)(?:@([1-9][0-9]{0,5}))?")


@dataclass(frozen=True, slots=True)
class Cut:
    """One cut: ``when`` the ``occurrence``-th passage of ``point`` in this process happens."""

    when: When
    point: str
    occurrence: int = 1

    def render(self) -> str:
        return f"{self.when}:{self.point}@{self.occurrence}"


def parse_cut(spec: str, known: Iterable[tuple[When, str]]) -> Cut:
    """The cut ``spec`` names; refused (``input.invalid_argument``) unless it is well formed and
    names a cut point the code has (a typo would never fire and prove nothing)."""
    match = _SPEC.fullmatch(spec.strip())
    points = set(known)
    if match is None or (match[1], match[2]) not in points:
        shown = ", ".join(f"{w}:{p}" for w, p in sorted(points))
        raise DponeError(code="input.invalid_argument",
                         message=f"{CUT_ENV}={spec!r} names no cut point; expected "
                         f"<before|after>:<point>[@<occurrence>], one of: {shown}")
    when: When = "before" if match[1] == "before" else "after"
    return Cut(when=when, point=match[2], occurrence=int(match[3] or 1))


def sigkill() -> None:
    """Kill this process at once, as a lost node dies: nothing runs after this call."""
    os.kill(os.getpid(), signal.SIGKILL)


@dataclass
class CutHook:
    """Counts the passages of every cut point and fires ``kill`` at the named one (with no
    ``cut``: writes each passage to stderr, ``dpone: test cut passage <when>:<point>@<n>``)."""

    cut: Cut | None
    kill: Callable[[], None] = sigkill
    passages: dict[tuple[When, str], int] = field(default_factory=dict)
    _counting: threading.Lock = field(default_factory=threading.Lock, repr=False)
    """Children in flight at once pass cut points from their own threads."""

    def __call__(self, when: When, point: str) -> None:
        key = (when, point)
        with self._counting:
            seen = self.passages.get(key, 0) + 1
            self.passages[key] = seen
        if self.cut is None:
            os.write(2, f"{PASSAGE_PREFIX}{when}:{point}@{seen}\n".encode())
        elif key == (self.cut.when, self.cut.point) and seen == self.cut.occurrence:
            verb = "interrupting" if self.kill is sigint else "killing"
            os.write(2, f"dpone: test cut {self.cut.render()}: {verb} process {os.getpid()}\n"
                     .encode())
            self.kill()


def sigint() -> None:
    """Interrupt this process as Ctrl-C does: SIGINT, a KeyboardInterrupt in its main thread."""
    signal.raise_signal(signal.SIGINT)


SIGNAL_ENV: Final = "DPONE_TEST_CUT_SIGNAL"
"""``INT`` interrupts the process at the cut (Ctrl-C) instead of killing it (``KILL``)."""


def hook_from(environ: Mapping[str, str], known: Iterable[tuple[When, str]]) -> CutHook | None:
    """The hook ``environ`` asks for, or None when ``DPONE_TEST_CUT`` is unset or empty."""
    spec = environ.get(CUT_ENV, "")
    if not spec:
        return None
    kill = sigint if environ.get(SIGNAL_ENV, "KILL").upper() == "INT" else sigkill
    return CutHook(None if spec == TRACE else parse_cut(spec, known), kill=kill)
