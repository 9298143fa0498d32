"""The journal's identity, on every dialect: a migrated journal has an id of its own (two
journals never share one), and it records the environment identity of every operation
namespace a run writes for, once (insert-only)."""

from __future__ import annotations

from typing import Any

from dpone.contracts.journal_identity import EnvironmentIdentity, JournalIdentity
from dpone.journal.sqlite import SqliteJournal

NAMESPACE = "sha256:" + "ab" * 32
OTHER = "sha256:" + "cd" * 32


def _identity(namespace: str = NAMESPACE, revision: int = 1) -> EnvironmentIdentity:
    return EnvironmentIdentity(operation_namespace=namespace, platform_instance_id="dpone-test",
                               tenant_id="tenant-a", environment_id="test-env",
                               namespace_revision=revision)


def test_a_migrated_journal_has_an_id_and_no_environment_yet(journal: Any) -> None:
    identity: JournalIdentity = journal.journal_identity()

    assert identity.journal_id.startswith("jrn_") and len(identity.journal_id) == 36
    assert identity.environments == ()
    assert journal.journal_identity() == identity  # read again: the same id


def test_recording_an_environment_is_insert_only_and_keeps_the_id(journal: Any) -> None:
    before = journal.journal_identity()

    first = journal.record_environment(_identity())
    again = journal.record_environment(_identity())
    both = journal.record_environment(_identity(OTHER, revision=2))

    assert first.journal_id == again.journal_id == both.journal_id == before.journal_id
    assert first.environments == again.environments == (_identity(),)
    assert both.environments == (_identity(), _identity(OTHER, revision=2))


def test_two_journals_have_two_ids(journal: Any, tmp_path: Any) -> None:
    other = SqliteJournal(tmp_path / "other.sqlite3", environment_id="test-env")
    other.migrate()
    try:
        assert other.journal_identity().journal_id != journal.journal_identity().journal_id
    finally:
        other.close()
