"""Recovery on another machine: `--environment NAME` resolves the journal, the artifact store and
the plan store from ``environments/NAME.yaml``, and `dpone deliver` published the plan into the
artifact store, so `inspect` and `resume --apply` run from a fresh working directory that holds
no plan. The environment file is refused when it holds a password, names an unknown field, or
is contradicted by an explicit option; a published plan that was altered is refused."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from dpone.receiver import ReceiverThread
from support.cli import FULL, TOKEN, TOKEN_ENV, TWO_ASYNC_CHILDREN, Dpone, posts


def _environment_file(directory: Path, name: str, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.yaml"
    path.write_text("schema: dpone.environment.v1\n"
                    f"id: {name}\n"
                    "tier: development\n"
                    "platform_instance_id: dpone-local\n"
                    "tenant_id: examples\n"
                    "environment_id: local-dev\n"
                    "namespace_revision: 1\n" + body
                    + "\nruntime: {features: {rest_bulk_delivery_v1: true}}\n", encoding="utf-8")
    return path


def _control_plane(journal: str, artifacts: Path) -> str:
    return f"control_plane:\n  journal: '{journal}'\n  artifacts: '{artifacts}'\n"


def test_a_stopped_delivery_is_finished_from_a_fresh_directory_with_only_the_environment(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Machine A stops after admission (its token is refused, before any effect); machine B,
    in an empty working directory, finishes it with `--environment ops` alone: no journal,
    artifact or plan option, no plan store (the plan is read from the artifact store)."""
    machine_a = tmp_path / "a"
    dpone = Dpone(registry, machine_a, journal=journal_url)
    monkeypatch.setenv(TOKEN_ENV, "tok-refused-on-machine-a")
    stopped = dpone.deliver("measurements_sync", FULL, "--format", "json")
    assert stopped.code == 3, stopped.out + stopped.err
    assert stopped.json()["status"] == "blocked" and posts(receiver) == 1
    assert receiver.state.ledger.snapshot()["mutations_total"] == 0
    parent_id = str(stopped.json()["parent_id"])
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    environments = tmp_path / "control-plane"
    _environment_file(environments, "ops", _control_plane(journal_url, machine_a / "artifacts"))
    for plan in (machine_a / "plans").rglob("*.json"):
        plan.unlink()  # only the artifact store's published copy remains
    machine_b = tmp_path / "b"
    machine_b.mkdir()
    monkeypatch.chdir(machine_b)
    monkeypatch.setenv("DPONE_ENVIRONMENTS", str(environments))

    inspected = dpone("delivery", "inspect", "--operation-id", parent_id, "--environment", "ops",
                      "--format", "json")
    resumed = dpone("delivery", "resume", "--operation-id", parent_id, "--environment", "ops",
                    "--apply", "--wait", "--format", "json")

    assert inspected.code == 0, inspected.out + inspected.err
    document = inspected.json()
    assert document["profile"] == "mock.batch-ndjson@1"  # the plan came from the artifact store
    assert resumed.code == 0, resumed.out + resumed.err
    result = resumed.json()
    assert result["status"] == "completed"
    assert result["rows_total"] == sum(child["rows"] for child in result["children"])
    ledger = receiver.state.ledger.snapshot()
    assert ledger["duplicate_mutations"] == 0 and ledger["rows_total"] == result["rows_total"]
    assert posts(receiver) == len(result["children"]) + 1  # and the refused one
    assert list(machine_b.iterdir()) == []  # nothing was created in the working directory
    next_words = shlex.split(result["next_command"])
    assert next_words[next_words.index("--environment") + 1] == "ops"
    assert "--journal" not in next_words and "--artifacts" not in next_words


OP = "op_v1_" + "a" * 64


@pytest.mark.parametrize(("body", "code", "line", "named"), [
    (_control_plane("postgresql://dpone:s3cr3t-pw@db.internal/journal", Path("/srv/a")),
     "environment.secret_in_url", 9, "control_plane.journal"),
    (_control_plane("postgres://db.internal/journal?user=dpone&password=s3cr3t-pw",
                    Path("/srv/a")), "environment.secret_in_url", 9, "control_plane.journal"),
    ("control_plane:\n  journal: /srv/j.sqlite3\n  artifacts: /srv/a\n  artefacts: /srv/b\n",
     "schema.unknown_field", 11, "control_plane.artefacts"),
], ids=["password-in-userinfo", "password-in-query", "unknown-field"])
@pytest.mark.parametrize("command", ["inspect", "resume", "list"])
def test_an_environment_file_with_a_secret_or_an_unknown_field_exits_2_with_its_line(
        registry: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, code: str,
        line: int, named: str, command: str) -> None:
    _environment_file(tmp_path / "envs", "ops", body)
    monkeypatch.setenv("DPONE_ENVIRONMENTS", str(tmp_path / "envs"))
    dpone = Dpone(registry, tmp_path / "state")
    target = [] if command == "list" else ["--operation-id", OP]

    run = dpone("delivery", command, *target, "--environment", "ops", "--format", "json")
    text = dpone("delivery", command, *target, "--environment", "ops")

    assert run.code == 2, run.out + run.err
    error = run.json()
    assert error["code"] == code
    assert error["location"]["file"] == str(tmp_path / "envs" / "ops.yaml")
    assert (error["location"]["line"], error["location"]["path"]) == (line, named)
    assert text.code == 2 and f"ops.yaml:{line}" in text.out + text.err
    assert "s3cr3t-pw" not in run.out + run.err + text.out + text.err


def test_an_explicit_locator_that_contradicts_the_environment_file_exits_2_naming_it(
        registry: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _environment_file(tmp_path / "registry-b" / "environments", "ops",
                      _control_plane(str(tmp_path / "j.sqlite3"), tmp_path / "artifacts"))
    dpone = Dpone(registry, tmp_path / "state")
    monkeypatch.chdir(tmp_path)
    located = ["--environment", "ops", "--registry", str(tmp_path / "registry-b")]

    journal = dpone("delivery", "inspect", "--operation-id", OP, *located,
                    "--journal", "postgresql://dpone:pw-x@db/other", "--format", "json")
    artifacts = dpone("delivery", "resume", "--operation-id", OP, *located,
                      "--artifacts", "s3://bucket/elsewhere", "--format", "json")
    same = dpone("delivery", "inspect", "--operation-id", OP, *located,
                 "--journal", "j.sqlite3", "--format", "json")  # the same file, relative

    for run, option in ((journal, "--journal"), (artifacts, "--artifacts")):
        assert run.code == 2, run.out + run.err
        error = run.json()
        assert error["code"] == "environment.locator_conflict"
        assert error["details"]["option"] == option and option in error["message"]
    assert "pw-x" not in journal.out
    assert same.code == 2 and same.json()["code"] == "journal.not_found"  # no conflict


def test_a_published_plan_that_was_altered_is_refused(
        registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread) -> None:
    dpone = Dpone(registry, tmp_path / "state", journal=journal_url)
    pending = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN, "--format", "json")
    assert pending.code == 0, pending.out + pending.err
    parent_id = str(pending.json()["parent_id"])
    [published] = (tmp_path / "state" / "artifacts" / "plans" / "sha256").glob("*.json")
    published.chmod(0o640)
    published.write_bytes(published.read_bytes().replace(b"mock.dataset-jobs",
                                                         b"mock.dataset-jabs"))
    for plan in (tmp_path / "state" / "plans").rglob("*.json"):
        plan.unlink()
    before = posts(receiver)

    resumed = dpone.resume(parent_id, "--apply", "--format", "json")
    redelivered = dpone("deliver", str(registry / "workloads" / "measurements_async.yaml"),
                        "--registry", str(registry), "--interval-start", TWO_ASYNC_CHILDREN[0],
                        "--interval-end", TWO_ASYNC_CHILDREN[1], "--journal", journal_url,
                        "--artifacts", str(tmp_path / "state" / "artifacts"), "--plans",
                        str(tmp_path / "fresh-plans"), "--format", "json")

    for run in (resumed, redelivered):
        assert run.code == 2, run.out + run.err
        assert run.json()["code"] == "plan.digest_mismatch"
    assert posts(receiver) == before
