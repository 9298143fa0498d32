#!/usr/bin/env python3
"""Run the scripted walkthrough of every runbook and write its real output into the runbook.

A runbook (``docs/runbooks/<name>.md``) embeds its walkthrough between the markers
``<!-- walkthrough: <name> -->`` and ``<!-- /walkthrough -->``; the script that produces it is
``docs/runbooks/walkthroughs/<name>.sh``, run with bash in a fresh, empty working directory with
this checkout's ``dpone`` first on PATH (see ``_prelude.sh``). The receiver's loopback port,
chosen free at run time, is shown as the example binding's 8765.

``--check`` runs the walkthroughs again and compares them with the runbooks after normalizing
what differs from run to run (ids and digests, instants, ages and durations, job run prefixes,
column alignment, a repeated progress line of a job polled while still running);
it exits 1 and prints a diff when a runbook drifted. ``NAME ...`` limits either mode to those
runbooks.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNBOOKS = ROOT / "docs" / "runbooks"
WALKTHROUGHS = RUNBOOKS / "walkthroughs"
_BLOCK = re.compile(r"(<!-- walkthrough: (?P<name>[a-z0-9-]+) -->\n```console\n)(?P<body>.*?)"
                    r"(```\n<!-- /walkthrough -->)", re.DOTALL)
_PORT = re.compile(r"127\.0\.0\.1:\d+")
_VOLATILE = re.compile(
    r"(?P<hex>[0-9a-f]{64})"
    r"|(?P<instant>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?)"
    r"|(?P<run>(?<=job-)[0-9a-f]{8}(?=-))"
    r"|(?P<age>\b\d+(?:\.\d+)?\s?(?:s|m|h|d|ms)\b)"
    r"|(?P<token>runbook-\d+-token)")
_STILL_RUNNING = re.compile(r" waiting phase=(?:pending|running)\b")
TIMEOUT_S = 300


def walkthrough(name: str) -> str:
    """The transcript of ``walkthroughs/<name>.sh`` as the runbook shows it."""
    script = WALKTHROUGHS / f"{name}.sh"
    env = {**os.environ, "DPONE_REPO": str(ROOT), "PYTHONPATH": str(ROOT),
           "PATH": f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    with tempfile.TemporaryDirectory(prefix=f"dpone-runbook-{name}-") as work:
        done = subprocess.run(["bash", str(script)], cwd=work, env=env, capture_output=True,
                              text=True, timeout=TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise SystemExit(f"walkthrough {name} failed (exit {done.returncode}):\n"
                             f"{done.stdout}\n{done.stderr}")
        text = done.stdout.replace(work, ".")
    return _PORT.sub("127.0.0.1:8765", text)


def normalized(text: str) -> str:
    """``text`` with every run-to-run difference replaced by a numbered placeholder."""
    seen: dict[str, str] = {}

    def placeholder(match: re.Match[str]) -> str:
        if match.group("hex"):
            return seen.setdefault(match.group(), f"<hex{len(seen) + 1}>")
        return f"<{match.lastgroup}>"

    # Table columns realign when a value's width changes (an age of 9s or 10s): compare words.
    # How many polls find a job still pending or running depends on the machine's pace (on a
    # loaded machine the first poll may already find it complete): those lines are not compared.
    # A repeated progress line (a retried poll, say) is kept once.
    lines = [" ".join(line.split()) for line in _VOLATILE.sub(placeholder, text).splitlines()
             if not _STILL_RUNNING.search(line)]
    return "\n".join(line for n, line in enumerate(lines) if n == 0 or line != lines[n - 1])


def runbooks() -> dict[str, Path]:
    """Walkthrough name -> the runbook that embeds it."""
    found: dict[str, Path] = {}
    for path in sorted(RUNBOOKS.glob("*.md")):
        for match in _BLOCK.finditer(path.read_text("utf-8")):
            found[match.group("name")] = path
    return found


def _replace(path: Path, name: str, body: str) -> str:
    text = path.read_text("utf-8")
    return _BLOCK.sub(lambda m: m.group(1) + body + m.group(4) if m.group("name") == name
                      else m.group(0), text)


def current(path: Path, name: str) -> str:
    for match in _BLOCK.finditer(path.read_text("utf-8")):
        if match.group("name") == name:
            return match.group("body")
    raise KeyError(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    books = runbooks()
    unknown = sorted(set(args.names) - set(books))
    if unknown:
        print(f"no runbook embeds walkthrough(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    drifted = 0
    for name in args.names or sorted(books):
        path, body = books[name], walkthrough(name)
        if args.check:
            expected, actual = normalized(current(path, name)), normalized(body)
            if expected != actual:
                drifted += 1
                sys.stdout.writelines(difflib.unified_diff(
                    expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                    f"{path.relative_to(ROOT)} ({name})", f"walkthrough {name} now"))
            else:
                print(f"{path.relative_to(ROOT)}: walkthrough {name} is current")
        else:
            path.write_text(_replace(path, name, body), "utf-8")
            print(f"wrote walkthrough {name} into {path.relative_to(ROOT)}")
    if drifted:
        print(f"{drifted} walkthrough(s) drifted: run scripts/generate_runbooks.py and review",
              file=sys.stderr)
    return 1 if drifted else 0


if __name__ == "__main__":
    raise SystemExit(main())
