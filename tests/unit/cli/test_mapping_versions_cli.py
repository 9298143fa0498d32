"""A mapping id names one column layout: once a plan was compiled with ``mock.measurements.v1``,
renaming one of its columns under the same id is refused by `dpone check`, `dpone plan` and
`dpone deliver` (``mapping.layout_changed``, exit 2, the mapping file and both layouts named,
nothing written); a description edit is not a layout change, and the same layout under a new id
compiles. `check` and `plan` print the mapping's digests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from dpone.cli.main import cli
from support.common import EXAMPLES

MAPPING = "mappings/mock.measurements.v1.yaml"
WORKLOAD = "workloads/measurements_sync.yaml"


def _dpone(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def _registry(tmp_path: Path) -> Path:
    registry = tmp_path / "registry"
    shutil.copytree(EXAMPLES, registry)
    return registry


def _edit(registry: Path, old: str, new: str, path: str = MAPPING) -> None:
    file = registry / path
    text = file.read_text(encoding="utf-8")
    assert old in text
    file.write_text(text.replace(old, new), encoding="utf-8")


def test_a_renamed_column_under_the_same_mapping_id_is_refused(tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    workload = str(registry / WORKLOAD)
    code, out, _ = _dpone("plan", workload, "--registry", str(registry), "--format", "json")
    assert code == 0, out
    first = json.loads(out)["digests"]
    _edit(registry, "{name: note, type: string}", "{name: remark, source: note, type: string}")

    for command in ("check", "plan"):
        code, out, err = _dpone(command, workload, "--registry", str(registry),
                                "--format", "json")
        assert code == 2, out + err
        error = json.loads(out)
        assert error["code"] == "mapping.layout_changed"
        assert error["location"]["file"].endswith(MAPPING)
        assert error["location"]["line"] == 4  # the columns: key
        assert error["details"]["earlier_layout_digest"] == first["mapping_layout"]
        assert "mock.measurements.v2" in error["hint"]
    plans = list((registry / ".dpone" / "plans" / "sha256").glob("*.json"))
    assert len(plans) == 1  # the refused plan was not written
    code, out, err = _dpone("deliver", workload, "--registry", str(registry), "--interval-start",
                            "2026-08-01", "--interval-end", "2026-08-08")
    assert code == 2 and "mapping.layout_changed" in err, out + err


def test_a_description_edit_is_not_a_layout_change_and_a_new_id_compiles(
        tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    workload = str(registry / WORKLOAD)
    code, out, _ = _dpone("plan", workload, "--registry", str(registry), "--format", "json")
    assert code == 0, out
    before = json.loads(out)["digests"]

    _edit(registry, "id: mock.measurements.v1",
          "id: mock.measurements.v1\ndescription: the sample readings")
    code, out, err = _dpone("plan", workload, "--registry", str(registry), "--format", "json")
    assert code == 0, out + err
    described = json.loads(out)["digests"]
    assert described["mapping"] != before["mapping"]
    assert described["mapping_layout"] == before["mapping_layout"]

    (registry / MAPPING).rename(registry / "mappings" / "mock.measurements.v2.yaml")
    _edit(registry, "id: mock.measurements.v1", "id: mock.measurements.v2",
          "mappings/mock.measurements.v2.yaml")
    _edit(registry, "{name: note, type: string}", "{name: remark, source: note, type: string}",
          "mappings/mock.measurements.v2.yaml")
    for name in ("measurements_sync", "measurements_async"):
        _edit(registry, "mapping_ref: mock.measurements.v1", "mapping_ref: mock.measurements.v2",
              f"workloads/{name}.yaml")
    code, out, err = _dpone("check", workload, "--registry", str(registry))
    assert code == 0, out + err
    assert "mapping_layout" in out and "mapping " in out
