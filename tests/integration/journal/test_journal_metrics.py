"""The metrics snapshot on every adapter, where the delivery suite's runs cannot reach: deliveries
of several profiles and one admitted before the journal recorded a profile ref (``unrecorded``),
and an effect-conflict domain whose only remote-job slot another environment of the same store
holds (the domain is full for this environment too; the slot is not its remote job)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dpone.contracts.journal import ParentAdmission
from dpone.contracts.journal_metrics import UNRECORDED_PROFILE, profile_label
from dpone.journal.postgres import PostgresJournal
from dpone.journal.sqlite import SqliteJournal
from support.journal import ENVIRONMENT, OTHER_DOMAIN, admission, complete_full, submit

OTHER_ENVIRONMENT = "journal-test-other"


def _in(environment_id: str, request: ParentAdmission, profile_ref: str | None) -> ParentAdmission:
    tenancy = request.tenancy.model_copy(update={"environment_id": environment_id})
    return request.model_copy(update={"tenancy": tenancy, "profile_ref": profile_ref})


@pytest.fixture
def neighbour(journal_dialect: str, request: pytest.FixtureRequest
              ) -> Iterator[PostgresJournal | SqliteJournal]:
    """The test's store opened for another environment."""
    adapter: PostgresJournal | SqliteJournal
    if journal_dialect == "postgres":
        adapter = PostgresJournal(request.getfixturevalue("journal_dsn"),
                                  environment_id=OTHER_ENVIRONMENT)
    else:
        path: Path = request.getfixturevalue("journal_path")
        adapter = SqliteJournal(path, environment_id=OTHER_ENVIRONMENT)
    try:
        yield adapter
    finally:
        adapter.close()


def test_profile_labels_are_configured_names_or_unrecorded() -> None:
    assert profile_label("mock.dataset-jobs@1") == "mock.dataset-jobs"
    assert profile_label(None) == UNRECORDED_PROFILE
    assert profile_label("Not A Name@1") == UNRECORDED_PROFILE


def test_profiles_fold_by_id_and_a_domain_s_slots_are_shared_across_environments(
        journal: PostgresJournal | SqliteJournal,
        neighbour: PostgresJournal | SqliteJournal) -> None:
    first = journal.admit_parent(_in(ENVIRONMENT, admission(
        [(0, 10)], max_remote_jobs=1), "mock.other@1")).parent
    journal.admit_parent(_in(ENVIRONMENT, admission(
        [(10, 20)], max_remote_jobs=1, route="route-b"), "mock.other@2"))
    journal.admit_parent(admission([(20, 30)], route="route-c", domain=OTHER_DOMAIN,
                                   max_remote_jobs=2))  # no profile ref recorded
    complete_full(journal, first.children[0].operation_id)  # its slot is released
    theirs = neighbour.admit_parent(_in(OTHER_ENVIRONMENT, admission(
        [(40, 50)], max_remote_jobs=1, route="route-d"), "mock.other@2")).parent
    submit(neighbour, theirs.children[0].operation_id)  # holds the domain's only slot

    snapshot = journal.metrics_snapshot(ENVIRONMENT)

    assert [p.profile for p in snapshot.profiles] == ["mock.other", UNRECORDED_PROFILE]
    other, unrecorded = snapshot.profiles
    assert other.on_axis("execution_state", "FINALIZED") == 1
    assert other.on_axis("execution_state", "SEALED") == 1
    assert other.ttl_profile_ref == "mock.other@2"  # the newest delivery's version
    # One domain with admitted work (the sealed child), one slot, held by the other environment.
    assert (other.remote_jobs_active, other.remote_jobs_capacity,
            other.remote_job_domains_full) == (0, 1, 1)
    assert other.checkpoint_lag_children == 1  # verified; nobody moved the frontier yet
    assert (unrecorded.remote_jobs_active, unrecorded.remote_jobs_capacity,
            unrecorded.remote_job_domains_full) == (0, 2, 0)
    assert unrecorded.ttl_profile_ref is None

    mine = neighbour.metrics_snapshot(OTHER_ENVIRONMENT)
    [theirs_profile] = mine.profiles
    assert (theirs_profile.profile, theirs_profile.remote_jobs_active,
            theirs_profile.remote_jobs_capacity, theirs_profile.remote_job_domains_full) == (
        "mock.other", 1, 1, 1)
    assert theirs_profile.on_axis("execution_state", "SUBMITTING") == 1
