"""`dpone deliver` with a vault:// binding, on both journals, over loopback: the receiver token
is read from Vault's KV v2 (a real `vault server -dev` when the binary is on PATH, otherwise the
loopback fake of its API driven by the real hvac client), the delivery completes, and neither
that token nor the Vault token appears in stdout, stderr, the journal, the artifacts or the plans.
A Vault that cannot be reached stops the run with credential.unavailable (exit 3, naming the
reference and the Vault address) before any request, and a resume once Vault is back delivers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from dpone.receiver import ReceiverThread
from support.cli import TOKEN, TOKEN_ENV, Dpone, Run, posts
from support.delivery import postgres_contents
from support.vault import VAULT_TOKEN, DevVault, FakeVault, vault_server

ONE_SYNC_CHILD = ("2026-08-01", "2026-08-08")
REF = "vault://secret/dpone/mock-measurements#token"
SENTINELS = (TOKEN.encode(), VAULT_TOKEN.encode())


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeVault | DevVault]:
    workdir = tmp_path / "vault"
    workdir.mkdir()
    with vault_server(workdir) as running:
        running.put("secret", "dpone/mock-measurements", token=TOKEN)
        monkeypatch.setenv("VAULT_ADDR", running.url)
        monkeypatch.setenv("VAULT_TOKEN", VAULT_TOKEN)
        yield running


@pytest.fixture
def dpone(registry: Path, tmp_path: Path, journal_url: str, receiver: ReceiverThread,
          monkeypatch: pytest.MonkeyPatch) -> Dpone:
    monkeypatch.delenv(TOKEN_ENV)  # the receiver token lives only in Vault
    binding = registry / "bindings" / "mock_measurements.yaml"
    text = binding.read_text(encoding="utf-8")
    binding.write_text(re.sub(r"^credential_ref: .*$", f"credential_ref: {REF}", text,
                              flags=re.M), encoding="utf-8")
    return Dpone(registry, tmp_path / "state", journal=journal_url)


def _stored(dpone: Dpone, request: pytest.FixtureRequest) -> Iterator[tuple[str, bytes]]:
    """Every byte the run left: the journal (SQLite files or every PostgreSQL value), the
    artifacts, the published plans, the registry copy."""
    if dpone.journal_url.startswith("postgresql"):
        found = re.search(r"search_path%3D(cli_[0-9a-f]+)|search_path=(cli_[0-9a-f]+)",
                          dpone.journal_url)
        assert found is not None, dpone.journal_url
        schema = found.group(1) or found.group(2)
        yield "journal", postgres_contents(str(request.getfixturevalue("postgres_dsn")), schema)
    roots = [dpone.state, dpone.registry, Path(dpone.journal_url).parent]
    for root in roots:
        if root.is_dir():
            for path in sorted(p for p in root.rglob("*") if p.is_file()):
                yield str(path), path.read_bytes()


def _no_sentinel(runs: list[Run], dpone: Dpone, request: pytest.FixtureRequest) -> None:
    texts = [run.out + run.err for run in runs]
    assert [t[:200] for t in texts if any(s.decode() in t for s in SENTINELS)] == []
    stored = list(_stored(dpone, request))
    assert any(name == "journal" or name.endswith(".sqlite3") for name, _ in stored)
    assert [name for name, data in stored if any(s in data for s in SENTINELS)] == []


def test_a_vault_binding_delivers_and_no_secret_leaves_the_process(
        dpone: Dpone, vault: FakeVault | DevVault, receiver: ReceiverThread,
        request: pytest.FixtureRequest) -> None:
    check = dpone("check", str(dpone.registry / "workloads" / "measurements_sync.yaml"),
                  "--registry", str(dpone.registry))
    assert check.code == 0, check.out + check.err

    run = dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json")

    assert run.code == 0, run.out + run.err
    document = run.json()
    assert document["status"] == "completed"
    assert receiver.state.ledger.snapshot()["mutations_total"] == 1
    if isinstance(vault, FakeVault):  # the token came from one KV v2 read, with the Vault token
        reads = [seen for seen in vault.state.seen if seen.method == "GET"]
        assert [seen.path for seen in reads] == ["/v1/secret/data/dpone/mock-measurements"]
        assert reads[0].headers["X-Vault-Token"] == VAULT_TOKEN
    inspected = dpone.inspect(document["parent_id"], "--format", "json")
    assert inspected.code == 0, inspected.out + inspected.err
    _no_sentinel([check, run, inspected], dpone, request)


def test_an_unreachable_vault_stops_before_freezing_and_a_rerun_delivers(
        dpone: Dpone, vault: FakeVault | DevVault, receiver: ReceiverThread,
        request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    address = vault.url
    monkeypatch.setenv("VAULT_ADDR", "http://127.0.0.1:9")  # nothing listens on discard

    run = dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json")

    assert run.code == 3, run.out + run.err
    document = run.json()
    assert (document["schema"], document["code"]) == ("dpone.error.v1",
                                                      "credential.unavailable"), document
    assert REF in run.out and "http://127.0.0.1:9" in run.out
    assert "Traceback" not in run.out + run.err
    assert receiver.state.ledger.snapshot()["requests"] == {}
    assert not (dpone.state / "artifacts").exists()  # nothing frozen, sealed or admitted

    monkeypatch.setenv("VAULT_ADDR", address)
    delivered = dpone.deliver("measurements_sync", ONE_SYNC_CHILD, "--format", "json")

    assert delivered.code == 0, delivered.out + delivered.err
    assert delivered.json()["status"] == "completed"
    assert delivered.json()["children"][0]["attempt_ordinal"] == 1
    assert posts(receiver) == 1
    assert receiver.state.ledger.snapshot()["mutations_total"] == 1
    _no_sentinel([run, delivered], dpone, request)
