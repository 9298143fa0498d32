"""The documentation the CLI points to exists and covers what it promises."""

from __future__ import annotations

import re

from click.testing import CliRunner

from dpone.cli.main import cli
from dpone.receiver import FAULT_KINDS
from support.common import ROOT

DOCS = ROOT / "docs"


def test_receiver_help_points_to_a_tutorial_that_exists() -> None:
    result = CliRunner().invoke(cli, ["receiver", "--help"])
    assert "tutorial" in result.stdout
    tutorial = (DOCS / "tutorial.md").read_text(encoding="utf-8")
    for step in ("dpone check", "dpone plan", "dpone receiver serve", "dpone deliver",
                 "dpone delivery resume", "dpone delivery inspect", "/mock/_faults"):
        assert step in tutorial, step


def test_every_fault_kind_is_documented_with_a_curl_example() -> None:
    text = (DOCS / "receiver.md").read_text(encoding="utf-8")
    rows = {m.group(1) for m in re.finditer(r"^\| `([a-z_]+)`(?: / `[a-z_]+`)? \|", text, re.M)}
    rows |= {m.group(1) for m in re.finditer(r"^\| `[a-z_]+` / `([a-z_]+)` \|", text, re.M)}
    examples = set(re.findall(r'"fault": "([a-z_]+)"', text))
    for kind in FAULT_KINDS:
        assert kind in rows, f"{kind} has no row in the fault table"
        assert kind in examples, f"{kind} has no curl example"


def test_correction_revision_is_documented() -> None:
    text = (DOCS / "generations.md").read_text(encoding="utf-8")
    assert "correction_revision: 1" in text
    assert "REST_DELIVERY_INTENT_CONFLICT" in text and "REST_DELIVERY_STALE_GENERATION" in text
