"""Helpers of the design-contract suite: the mutation helper and the CLI runner."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from dpone.cli.main import cli

FIXTURES = Path(__file__).resolve().parents[1] / "unit" / "design" / "fixtures"
Edit = tuple[str, str]


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """Replace each ``old`` snippet, which must occur exactly once, by ``new``."""
    for old, new in edits:
        count = text.count(old)
        if count != 1:
            raise ValueError(f"snippet occurs {count} times, expected once: {old[:60]!r}")
        text = text.replace(old, new)
    return text


def line_of(text: str, snippet: str) -> int:
    """The 1-based line on which ``snippet`` starts (it must occur exactly once)."""
    if text.count(snippet) != 1:
        raise ValueError(f"snippet occurs {text.count(snippet)} times: {snippet[:60]!r}")
    return text[: text.index(snippet)].count("\n") + 1


def run_check(path: Path | None, fmt: str = "json") -> tuple[int, Any, str]:
    """Run the CLI command through click: (exit code, parsed json or text stdout, stderr)."""
    args = ["docs", "check-rest-delivery-design-contract", "--format", fmt]
    if path is not None:
        args.insert(2, str(path))
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    out = json.loads(result.stdout) if fmt == "json" else result.stdout
    return result.exit_code, out, result.stderr
