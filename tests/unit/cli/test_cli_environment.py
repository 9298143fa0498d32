"""`--environment NAME` resolution: the environment file is found through --registry, else
$DPONE_ENVIRONMENTS, else ./environments; it supplies its environment id and control plane;
without a file NAME is the environment id, as before; relative paths resolve against the
current directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpone.cli._environment import (
    ENVIRONMENTS_VARIABLE,
    refuse_new_deliveries_when_off,
    resolve_control_plane,
    run_control_plane,
)
from dpone.cli._inputs import ControlPlaneArgs
from dpone.contracts import ERROR_CATALOG, DponeError, ExitClass
from support.common import ROOT

HEADER = ("schema: dpone.environment.v1\nid: {name}\ntier: production\n"
          "platform_instance_id: p\ntenant_id: t\nenvironment_id: {env_id}\n"
          "namespace_revision: 1\n")


def _write(directory: Path, name: str, env_id: str = "eu-prod-1", body: str = "") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.yaml"
    path.write_text(HEADER.format(name=name, env_id=env_id) + body, encoding="utf-8")
    return path


PLANE = ("control_plane:\n  journal: postgresql://dpone@db/journal\n"
         "  artifacts: s3://bucket/dpone\n")


@pytest.fixture(autouse=True)
def _cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENVIRONMENTS_VARIABLE, raising=False)


def test_without_a_file_the_name_is_the_environment_id_and_the_options_apply() -> None:
    plane = resolve_control_plane(ControlPlaneArgs(environment="staging", journal="j.db"))
    default = resolve_control_plane(ControlPlaneArgs())

    assert (plane.environment_id, plane.journal, plane.file, plane.supplied) == (
        "staging", "j.db", None, frozenset())
    assert (default.environment_id, default.journal, str(default.plans)) == (
        "local-dev", ".dpone/journal.sqlite3", ".dpone")
    assert plane.locators.options(("environment", "journal")) == [
        "--environment", "staging", "--journal", "j.db"]


def test_registry_wins_over_the_variable_which_wins_over_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "environments", "prod", env_id="from-cwd", body=PLANE)
    assert resolve_control_plane(ControlPlaneArgs("prod")).environment_id == "from-cwd"
    _write(tmp_path / "shared", "prod", env_id="from-variable", body=PLANE)
    monkeypatch.setenv(ENVIRONMENTS_VARIABLE, str(tmp_path / "shared"))
    assert resolve_control_plane(ControlPlaneArgs("prod")).environment_id == "from-variable"
    _write(tmp_path / "registry" / "environments", "prod", env_id="from-registry", body=PLANE)

    plane = resolve_control_plane(ControlPlaneArgs("prod", registry=tmp_path / "registry"))

    assert plane.environment_id == "from-registry"
    assert (plane.journal, plane.artifacts, str(plane.plans)) == (
        "postgresql://dpone@db/journal", "s3://bucket/dpone", str(tmp_path / "registry" / ".dpone"))
    assert plane.supplied == {"journal", "artifacts"}
    assert plane.locators.options(("environment", "registry", "journal", "artifacts")) == [
        "--environment", "prod", "--registry", str(tmp_path / "registry")]


def test_a_named_directory_that_does_not_exist_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENVIRONMENTS_VARIABLE, str(tmp_path / "typo"))
    with pytest.raises(DponeError) as variable:
        resolve_control_plane(ControlPlaneArgs("prod"))
    with pytest.raises(DponeError) as registry:
        resolve_control_plane(ControlPlaneArgs("prod", registry=tmp_path / "nope"))
    assert variable.value.code == registry.value.code == "input.not_found"


def test_a_file_without_a_control_plane_gives_only_its_environment_id(tmp_path: Path) -> None:
    _write(tmp_path / "environments", "prod")

    plane = resolve_control_plane(ControlPlaneArgs("prod", journal="/srv/j.sqlite3"))

    assert (plane.environment_id, plane.journal, plane.supplied) == (
        "eu-prod-1", "/srv/j.sqlite3", frozenset())
    assert plane.locators.options(("environment", "journal")) == [
        "--environment", "prod", "--journal", "/srv/j.sqlite3"]


def test_relative_paths_resolve_against_the_registry_root_not_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "reg"
    _write(root / "environments", "dev", body="control_plane:\n  journal: state/j.sqlite3\n"
           "  artifacts: state/artifacts\n  plans: state\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")

    plane = resolve_control_plane(ControlPlaneArgs(
        "dev", registry=Path("../reg"), journal=str(root / "state" / "j.sqlite3"),
        plans=Path("../reg/state")))

    assert plane.journal == str(root / "state" / "j.sqlite3")
    assert plane.artifacts == str(root / "state" / "artifacts")
    assert plane.plans == root / "state"
    assert plane.supplied == {"journal", "artifacts", "plans"}
    with pytest.raises(DponeError) as conflict:
        resolve_control_plane(ControlPlaneArgs("dev", registry=Path("../reg"),
                                               plans=Path("state")))
    assert conflict.value.code == "environment.locator_conflict"
    assert conflict.value.details["option"] == "--plans"


def test_without_a_file_the_defaults_are_the_registry_s_when_it_is_named(
        tmp_path: Path) -> None:
    (tmp_path / "reg").mkdir()

    named = resolve_control_plane(ControlPlaneArgs("dev", registry=Path("reg")))
    unnamed = resolve_control_plane(ControlPlaneArgs("dev"))

    assert (named.journal, named.artifacts, named.plans) == (
        str(tmp_path / "reg" / ".dpone" / "journal.sqlite3"),
        str(tmp_path / "reg" / ".dpone" / "artifacts"), tmp_path / "reg" / ".dpone")
    assert (unnamed.journal, unnamed.artifacts, str(unnamed.plans)) == (
        ".dpone/journal.sqlite3", ".dpone/artifacts", ".dpone")


def test_a_name_that_cannot_be_a_file_name_is_only_an_environment_id(tmp_path: Path) -> None:
    _write(tmp_path, "x", body=PLANE)  # ./x.yaml, reachable only through a path

    plane = resolve_control_plane(ControlPlaneArgs("../x"))

    assert (plane.environment_id, plane.file) == ("../x", None)


def test_an_environment_file_of_another_id_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "environments", "prod")
    path.write_text(path.read_text(encoding="utf-8").replace("id: prod", "id: stage"),
                    encoding="utf-8")
    with pytest.raises(DponeError) as mismatch:
        resolve_control_plane(ControlPlaneArgs("prod"))
    assert mismatch.value.code == "registry.id_mismatch"


SWITCH_ON = "runtime: {features: {rest_bulk_delivery_v1: true}}\n"
SWITCH_OFF = "runtime: {features: {rest_bulk_delivery_v1: false}}\n"


@pytest.mark.parametrize(("body", "on", "predates"), [
    (SWITCH_ON, True, False), (SWITCH_OFF, False, False), ("", False, True),
    ("runtime: {}\n", False, False)], ids=["on", "off", "no-runtime-block", "empty-runtime"])
def test_the_file_carries_its_kill_switch(tmp_path: Path, body: str, on: bool,
                                          predates: bool) -> None:
    file = _write(tmp_path / "registry" / "environments", "prod", body=PLANE + body)
    for plane in (resolve_control_plane(ControlPlaneArgs("prod", registry=tmp_path / "registry")),
                  run_control_plane(tmp_path / "registry", "prod", journal=None, artifacts=None,
                                    plans=None)):
        assert plane.kill_switch is not None
        assert (plane.kill_switch.file, plane.kill_switch.on, plane.kill_switch.predates) == (
            file, on, predates)


def test_an_option_that_overrides_the_file_keeps_its_switch(tmp_path: Path) -> None:
    _write(tmp_path / "registry" / "environments", "prod", body=SWITCH_OFF)
    plane = run_control_plane(tmp_path / "registry", "prod", journal="j.db", artifacts=None,
                              plans=None)
    assert plane.file is None  # a printed command names the stores itself
    with pytest.raises(DponeError) as refused:
        refuse_new_deliveries_when_off(plane, "production")
    assert refused.value.code == "runtime.feature_disabled"


def test_without_a_file_a_development_plan_runs_and_a_production_plan_is_refused(
        tmp_path: Path) -> None:
    for plane in (resolve_control_plane(ControlPlaneArgs("staging", journal="j.db")),
                  run_control_plane(tmp_path, "staging", journal=None, artifacts=None,
                                    plans=None)):
        assert plane.kill_switch is None
        refuse_new_deliveries_when_off(plane, "development")
        with pytest.raises(DponeError) as refused:
            refuse_new_deliveries_when_off(plane, "production")
        error = refused.value
        assert (error.code, error.details["environment"]) == ("runtime.feature_disabled",
                                                              "staging")
        assert "cannot be read" in error.message
        assert error.hint is not None and "--environment staging" in error.hint


def test_the_refusal_names_the_file_the_switch_and_for_an_older_file_its_note(
        tmp_path: Path) -> None:
    _write(tmp_path / "environments", "prod")
    older = Path("environments", "prod.yaml")  # as found: under the working directory
    with pytest.raises(DponeError) as refused:
        refuse_new_deliveries_when_off(resolve_control_plane(ControlPlaneArgs("prod")),
                                       "development")
    error = refused.value
    assert ERROR_CATALOG[error.code].exit_class == ExitClass.INVALID
    assert str(error.message) == (
        f"runtime.features.rest_bulk_delivery_v1 is off in {older}: no new delivery is "
        "admitted (the file predates the switch, which is off unless a file turns it on: "
        "docs/migrations/runtime-kill-switch.md)")
    assert error.details["note"] == "docs/migrations/runtime-kill-switch.md"
    assert (ROOT / error.details["note"]).is_file()
    assert error.hint is not None and "rest_bulk_delivery_v1: true" in error.hint
    _write(tmp_path / "environments", "prod", body=SWITCH_ON)
    refuse_new_deliveries_when_off(resolve_control_plane(ControlPlaneArgs("prod")), "production")
