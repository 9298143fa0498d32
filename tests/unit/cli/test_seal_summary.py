"""Beyond 50 children the seal table shows the first and last 25, one line counting the rest and
a totals row (`--all` shows every one; --format json always lists them all); up to 50 it shows
every one and no totals row."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from dpone.cli._table import SHOWN_ROWS, summarized, text_table
from dpone.cli.main import cli
from support.common import EXAMPLES


def test_a_long_table_keeps_its_first_and_last_rows_aligned() -> None:
    rows = [(str(i), "x" * (i % 7)) for i in range(1, 121)]

    shown = summarized(("#", "scope"), rows, {"#"}).splitlines()
    full = text_table(("#", "scope"), rows, {"#"}).splitlines()

    assert len(shown) == 1 + SHOWN_ROWS + 1
    assert shown[:26] == full[:26] and shown[-25:] == full[-25:]
    assert shown[26] == "  ... 70 more children (--all shows every one) ..."
    assert summarized(("#", "scope"), rows[:50], {"#"}) == text_table(("#", "scope"),
                                                                      rows[:50], {"#"})
    assert summarized(("#", "scope"), rows, {"#"}, show_all=True) == "\n".join(full)


def test_a_long_table_ends_with_its_totals_row_aligned_with_the_rest() -> None:
    rows = [(str(i), "x") for i in range(1, 61)]

    shown = summarized(("#", "scope"), rows, {"#"}, total=("total", "60 rows")).splitlines()
    every = summarized(("#", "scope"), rows, {"#"}, show_all=True,
                       total=("total", "60 rows")).splitlines()

    assert shown[-1] == every[-1] == "  total  60 rows"
    assert shown[-2] == every[-2] == "     60  x"
    assert len(shown) == 1 + SHOWN_ROWS + 2 and len(every) == 1 + 60 + 1
    assert "total" not in summarized(("#", "scope"), rows[:50], {"#"}, total=("total", "50"))


def test_a_seal_of_more_than_50_children_summarizes_its_text_and_totals_unless_all(tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    shutil.copytree(EXAMPLES, registry)
    profile = registry / "profiles" / "mock.batch-ndjson@1.yaml"
    text = profile.read_text(encoding="utf-8")
    profile.write_text(re.sub(r"^  planning_rows: \d+$", "  planning_rows: 50", text,
                              flags=re.M), encoding="utf-8")
    args = ["seal", str(registry / "workloads" / "measurements_sync.yaml"), "--registry",
            str(registry), "--interval-start", "2026-08-01", "--interval-end", "2026-09-01"]

    short = CliRunner().invoke(cli, args)
    every = CliRunner().invoke(cli, [*args, "--all"])
    document = CliRunner().invoke(cli, [*args, "--format", "json"])

    assert short.exit_code == every.exit_code == document.exit_code == 0, short.output
    children = json.loads(document.stdout)["children"]
    assert len(children) > SHOWN_ROWS
    table = [line for line in short.stdout.splitlines() if re.match(r"^\s+\d+\s+\[", line)]
    assert len(table) == SHOWN_ROWS
    assert f"... {len(children) - SHOWN_ROWS} more children (--all shows every one" in short.stdout
    assert len([line for line in every.stdout.splitlines()
                if re.match(r"^\s+\d+\s+\[", line)]) == len(children)
    totals = [line.split() for line in (short.stdout + every.stdout).splitlines()
              if line.lstrip().startswith("total ")]
    assert totals == [["total", str(len(children)), "children", str(json.loads(document.stdout)["rows"]),
                       str(sum(c["decoded_bytes"] for c in children)),
                       str(sum(c["wire_bytes"] for c in children))]] * 2
