"""The docs' command transcripts, run for real and compared with what they show.

A transcript is a fenced ``text`` or ``console`` block of a Markdown document whose first line is
a command (``$ dpone ...``); each ``$`` line (with its ``\\``-continued lines) is run, and the
lines after it, up to the next ``$`` line, are its expected output. The blocks are found by
Sybil's Markdown lexer (a maintained parser, not one of ours); a block the reader is told is
illustrative (output that cannot be reproduced: another machine, a killed process, a cloud
endpoint) is preceded by Sybil's ``<!-- skip: next -->`` directive and runs nothing.

Each document runs in a sandbox of its own: a copy of ``examples/`` and ``docs/examples/`` as
the repository lays them out, the mock receiver on the example binding's authority
(``127.0.0.1:8765``: the plans, and so every digest, name it), ``NO_COLOR`` and a fixed width.
Commands run in ``bash`` one after another, in document order, so a later block sees the state
an earlier one left (the tutorial's flow). What the harness does itself:

* ``dpone receiver serve ...`` starts nothing: the harness's receiver is already listening;
* ``export NAME=VALUE`` is remembered for the commands after it (a placeholder ``...`` value
  keeps the harness's token);
* ``echo $?`` prints the exit code of the command before it.

A command's output is compared as a terminal shows it: stdout and stderr together (progress
lines included), in the order they were written. Only declared variable parts are normalized on
both sides before comparing: instants, job ids' per-start prefix, durations in milliseconds, ages
in seconds and the sandbox path. Digests and operation ids are compared exactly: a changed digest
is a changed doc.

``DPONE_UPDATE_DOCS=1`` rewrites each compared block's output from the real run instead of
comparing (the reviewed way to refresh the docs: run, then read the diff).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sybil import Document, Example
from sybil.parsers.markdown import CodeBlockParser, SkipParser

from support.common import ROOT

UPDATE_VARIABLE = "DPONE_UPDATE_DOCS"
TOKEN = "tok-docs-transcripts-only"
_LANGUAGES = ("text", "console")
_VOLATILE = (
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?"), "<instant>"),
    (re.compile(r"job-[0-9a-f]{8}-"), "job-<run>-"),
    (re.compile(r"\(\d+ ms\)"), "(<ms>)"),
    (re.compile(r"\b\d+ s\b(?= ago|\))"), "<n> s"),
    (re.compile(r"(?<=age )\d+ s\b"), "<n> s"),  # a receipt's age
    (re.compile(r" +\d+s$", re.M), " <n>s"),  # `delivery list`'s age column (and its width)
)
SANDBOX_SHOWN = "<repo>"
"""How a transcript shows the sandbox's absolute path (the reader's clone)."""


@dataclass(frozen=True)
class Step:
    """One command of a transcript and the output the document shows for it."""

    command: str
    expected: tuple[str, ...]


def steps(source: str) -> tuple[Step, ...]:
    """The commands of a transcript block and their shown outputs (empty: not a transcript)."""
    lines = source.rstrip("\n").split("\n")
    if not lines or not lines[0].startswith("$ "):
        return ()
    found: list[Step] = []
    index = 0
    while index < len(lines):
        command = lines[index][2:]
        while command.endswith("\\") and index + 1 < len(lines):  # kept: bash joins the lines
            index += 1
            command += "\n" + lines[index]
        index += 1
        expected: list[str] = []
        while index < len(lines) and not lines[index].startswith("$ "):
            expected.append(lines[index])
            index += 1
        found.append(Step(command, tuple(expected)))
    return tuple(found)


def render(block: tuple[Step, ...]) -> str:
    """A transcript block's text from its steps (the inverse of :func:`steps`)."""
    out: list[str] = []
    for step in block:
        out.append("$ " + step.command)
        out += step.expected
    return "\n".join(out) + "\n"


def normalized(text: str, sandbox: Path) -> str:
    text = text.replace(str(sandbox), SANDBOX_SHOWN)
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


@dataclass
class Session:
    """One document's sandbox and shell state."""

    sandbox: Path
    env: dict[str, str]
    last_exit: int = 0
    updates: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def fresh(cls, root: Path) -> Session:
        sandbox = root / "repo"
        sandbox.mkdir(parents=True)
        shutil.copytree(ROOT / "examples", sandbox / "examples")
        shutil.copytree(ROOT / "docs" / "examples", sandbox / "docs" / "examples")
        venv = Path(os.environ.get("VIRTUAL_ENV") or ROOT / ".venv")
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("DPONE_", "PYTEST_", "VAULT_", "AWS_"))}
        env.update({"PATH": f"{venv / 'bin'}:{env.get('PATH', '')}", "NO_COLOR": "1",
                    "COLUMNS": "100", "DPONE_CONN_MOCK_MEASUREMENTS_TOKEN": TOKEN,
                    "HOME": str(root)})
        return cls(sandbox, env)

    def run(self, command: str) -> str:
        """The output of one command as the document shows it."""
        stripped = command.strip()
        if re.fullmatch(r"dpone receiver serve\b[^#]*(#.*)?", stripped):
            return ""  # the harness's receiver already listens on the binding's authority
        export = re.fullmatch(r"export (\w+)=(\S*)(\s+#.*)?", stripped)
        if export is not None:
            if export.group(2) != "...":
                self.env[export.group(1)] = os.path.expandvars(export.group(2))
            return ""
        if stripped == "echo $?":
            return f"{self.last_exit}\n"
        done = subprocess.run(["bash", "-c", command], cwd=self.sandbox, env=self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=300, check=False)
        self.last_exit = done.returncode
        return done.stdout


def document(path: Path, session: Session) -> Document:
    """``path`` parsed by Sybil: its skip directives and its transcript blocks."""
    blocks = evaluator(session)
    return Document.parse(str(path), SkipParser(),
                          *(CodeBlockParser(language, blocks) for language in _LANGUAGES))


def evaluator(session: Session) -> Callable[[Example], str | None]:
    """The Sybil evaluator of a document's transcript blocks: Sybil calls it for each block
    (and not for one its ``skip`` directive skips); a returned message is a failure."""
    return lambda example: check(example, session)


def check(example: Example, session: Session) -> str | None:
    """Run one block; a mismatch is returned as a message (None: it matched, or updated)."""
    block = steps(str(example.parsed))
    if not block:
        return None
    actual: list[Step] = []
    for step in block:
        output = session.run(step.command).rstrip("\n").replace(str(session.sandbox),
                                                                 SANDBOX_SHOWN)
        actual.append(Step(step.command, tuple(output.split("\n")) if output else ()))
    for shown, ran in zip(block, actual, strict=True):
        want = normalized("\n".join(shown.expected), session.sandbox)
        got = normalized("\n".join(ran.expected), session.sandbox)
        if want == got:
            continue
        if os.environ.get(UPDATE_VARIABLE):  # rewrite the block; an unchanged one stays as is
            session.updates.append((str(example.parsed), render(tuple(actual))))
            return None
        return (f"{example.path}:{example.line}: `$ {shown.command}` printed\n{got}\n"
                f"--- but the document shows ---\n{want}\n(refresh with "
                f"{UPDATE_VARIABLE}=1 after checking the change is intended)")
    return None


def write_updates(path: Path, updates: list[tuple[str, str]]) -> None:
    text = path.read_text(encoding="utf-8")
    for old, new in updates:
        if old != new:
            text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")
