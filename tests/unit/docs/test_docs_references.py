"""The README, the authoring guide and the benchmarks README name only files, commands and options
that exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from dpone.cli.executor_app import executor
from dpone.cli.main import cli
from support.common import ROOT

DOCS = ("README.md", "docs/authoring.md", "docs/airflow.md", "benchmarks/README.md",
        "docs/review.md", "docs/preview.md")
REPO_ROOTS = ("dpone/", "docs/", "examples/", "scripts/", "benchmarks/", "tests/", "goldens/", ".ci/",
              "containers/", "airflow/")
_SPAN = re.compile(r"`([^`\n]+)`")
_COMMAND = re.compile(r"(\.venv/bin/)?dpone(-executor)? ")
_FENCE = re.compile(r"^```[a-z]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _paths(text: str) -> set[str]:
    """Repository paths in inline code and in the shown `dpone` commands: tokens that start at a
    top-level directory."""
    found = set()
    for span in [*_SPAN.findall(text), *_command_lines(text)]:
        for word in span.split():
            token = word.lstrip("(").rstrip(".,;)")
            if token.startswith(REPO_ROOTS) and "<" not in token:
                found.add(re.sub(r":\d+$", "", token))
    return found


def _command_lines(text: str) -> list[str]:
    """Every `dpone ...` (or `dpone-executor ...`) in inline code and every `$ dpone ...` line of
    a fenced block."""
    lines = [span for span in _SPAN.findall(text) if _COMMAND.match(span)]
    for block in _FENCE.findall(text):
        joined = re.sub(r"\\\n\s*", " ", block)
        lines += [line[2:] for line in joined.splitlines()
                  if line.startswith("$ ") and _COMMAND.match(line[2:])]
    return lines


def _default(command: click.Command) -> click.Command | None:
    """The command a group passes arguments to when they name none of its commands."""
    name = getattr(command, "default_command", None)
    if not isinstance(command, click.Group) or name is None:
        return None
    return command.get_command(click.Context(command), name)


def _check_command(line: str) -> list[str]:
    """Problems with one command line: an unknown subcommand or an option it does not take."""
    command_text = line.split(" #", maxsplit=1)[0].split(" | ", maxsplit=1)[0]
    program, *words = shlex.split(command_text)
    command: click.Command = executor if program.endswith("dpone-executor") else cli
    problems = []
    while isinstance(command, click.Group) and words and not words[0].startswith("-"):
        if words[0] == "...":
            return problems
        sub = command.get_command(click.Context(command), words[0])  # imports a lazy command
        if sub is None and _default(command) is not None:
            break  # `dpone plan WORKLOAD`: the group's default command takes the word
        if sub is None:
            return [f"{line!r}: no command {words[0]!r}"]
        command, words = sub, words[1:]
    default = _default(command)
    if default is not None:
        command = default
    options = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    options |= {"--help", "-h"}
    for word in words:
        if word.startswith("--") and word.split("=")[0] not in options:
            problems.append(f"{line!r}: {command.name} takes no {word.split('=')[0]}")
    return problems


@pytest.mark.parametrize("doc", DOCS)
def test_every_repository_path_exists(doc: str) -> None:
    text = (ROOT / doc).read_text("utf-8")
    missing = sorted(path for path in _paths(text)
                     if not (any(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()))
    assert not missing, f"{doc} names files that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS)
def test_every_dpone_command_and_option_exists(doc: str) -> None:
    lines = _command_lines((ROOT / doc).read_text("utf-8"))
    problems = [problem for line in lines for problem in _check_command(line)]
    assert not problems, "\n".join(problems)


def test_the_checks_catch_a_missing_file_and_an_unknown_option(tmp_path: Path) -> None:
    text = "See `docs/nowhere.md`.\n\n```text\n$ dpone check w.yaml --registy examples\n```\n"
    assert "docs/nowhere.md" in _paths(text)
    assert not (ROOT / "docs/nowhere.md").exists()
    (line,) = _command_lines(text)
    assert _check_command(line) == ["'dpone check w.yaml --registy examples': check takes no --registy"]
    assert "examples/workloads/bad.yaml" in _paths(
        "```text\n$ dpone check examples/workloads/bad.yaml --registry examples\n```\n")
    assert _check_command("dpone delivery replay --operation-id x") == [
        "'dpone delivery replay --operation-id x': no command 'replay'"]
    (executor_line,) = _command_lines("```text\n$ dpone-executor run --plan sha256:x\n```\n")
    assert _check_command(executor_line) == [
        "'dpone-executor run --plan sha256:x': run takes no --plan"]
