"""What `dpone profile certify` refuses before any request: a binding without a certification
scope, a level its scope does not allow, a binding of another environment, a bad profile ref;
each with its stable code, a hint, exit 2, and the receiver untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.certify import ASYNC, certify_args, edit, mock_receiver, registry_for


@pytest.mark.parametrize(("change", "args", "code"), [
    ("scope", ("--level", "local-live"), "certification.scope_missing"),
    (None, ("--level", "vendor-live"), "certification.level_not_allowed"),
    (None, ("--environment", "production"), "certification.environment_mismatch"),
])
def test_a_run_the_binding_does_not_allow_is_refused_before_any_request(
        tmp_path: Path, change: str | None, args: tuple[str, str], code: str) -> None:
    with mock_receiver() as receiver:
        dpone = registry_for(tmp_path, receiver)
        if change == "scope":
            edit(dpone.registry / "bindings" / "mock_measurements.yaml",
                 r"^certification_scope:\n.*\Z", "")
        argv = certify_args(dpone, ASYNC)
        option = argv.index(args[0])
        argv[option + 1] = args[1]

        refused = dpone(*argv, "--format", "json")
        shown = dpone(*argv)

        assert receiver.state.ledger.snapshot()["requests"] == {}
    assert refused.code == shown.code == 2
    error = refused.json()
    assert error["code"] == code
    assert error["hint"]
    assert error["location"]["file"].endswith("mock_measurements.yaml")
    assert f"{code}: " in shown.err and "hint: " in shown.err
    assert not (dpone.registry / "certifications").exists()


def test_a_profile_ref_without_a_version_is_refused(tmp_path: Path) -> None:
    with mock_receiver() as receiver:
        dpone = registry_for(tmp_path, receiver)
        argv = certify_args(dpone, "mock.dataset-jobs")

        refused = dpone(*argv, "--format", "json")

    assert refused.code == 2
    assert refused.json()["code"] == "registry.invalid_ref"


def test_a_missing_credential_is_unavailable_and_nothing_is_sent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DPONE_CONN_MOCK_MEASUREMENTS_TOKEN")
    with mock_receiver() as receiver:
        dpone = registry_for(tmp_path, receiver)

        refused = dpone(*certify_args(dpone, ASYNC), "--format", "json")

        assert receiver.state.ledger.snapshot()["requests"] == {}
    assert refused.code == 3
    assert refused.json()["code"] == "credential.unavailable"


@pytest.mark.parametrize("option", ["--concurrency", "--max-wait"])
def test_an_out_of_range_option_is_a_usage_error(tmp_path: Path, option: str) -> None:
    with mock_receiver() as receiver:
        dpone = registry_for(tmp_path, receiver)
        run = dpone(*certify_args(dpone, ASYNC), option, "-1")
    assert run.code == 2
