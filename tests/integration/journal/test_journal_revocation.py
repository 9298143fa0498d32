"""The deny-only revocation list and the remote identity's expiry, on both journals.

A revoked profile or binding, or an identity attestation expired by the journal clock, refuses
every new submit in the transactions that plan an attempt and enter SUBMITTING (nothing is
written: no attempt, no reservation, no state change), while the transitions of a child already
submitted (its response, verification) go on. Every change of the list is one audit row; a
repeated change writes nothing. ``journal`` is parametrized over both adapters in conftest.py.
"""

from __future__ import annotations

import datetime as dt

import pytest

from dpone.contracts import DponeError
from dpone.contracts.journal import DeliveryJournalPort, ParentAdmission
from dpone.contracts.revocation import RevocationTarget
from dpone.journal._marker import marker_digest
from support.journal import ENVIRONMENT, admission, step, submit, sync_success
from support.journal_reservations import Reservations

PROFILE = RevocationTarget(kind="profile", ref="mock.batch-ndjson@1")
BINDING = RevocationTarget(kind="binding", ref="mock_measurements")


def _governed(scopes: list[tuple[int, int]], *, salt: str = "",
              valid_until: dt.datetime | None = None) -> ParentAdmission:
    until = valid_until or dt.datetime(2099, 1, 1, tzinfo=dt.UTC)
    return admission(scopes, salt=salt).model_copy(update={
        "profile_ref": PROFILE.ref, "binding_ref": BINDING.ref, "identity_valid_until": until})


def _revoke(journal: DeliveryJournalPort, target: RevocationTarget, revoked: bool = True) -> bool:
    return journal.set_revocation(ENVIRONMENT, target, revoked=revoked, actor="sec-oncall",
                                  reason="signing key leaked (INC-42)")


@pytest.mark.parametrize(("target", "code"), [(PROFILE, "governance.profile_revoked"),
                                               (BINDING, "governance.binding_revoked")],
                         ids=["profile", "binding"])
def test_a_revocation_refuses_every_new_submit_until_it_is_lifted(
        journal: DeliveryJournalPort, reservations: Reservations, target: RevocationTarget,
        code: str) -> None:
    operation_id = journal.admit_parent(_governed([(0, 10)])).parent.children[0].operation_id
    before = journal.get_child(operation_id)
    lease = journal.acquire_lease(operation_id, "mutation", "worker-1", 60)
    planned = journal.plan_attempt(operation_id, lease)  # planned before the revocation
    assert _revoke(journal, target) is True

    with pytest.raises(DponeError) as entered:
        journal.enter_submitting(planned, marker_digest(planned.marker), lease,
                                 before.revision)
    assert entered.value.code == code and entered.value.operation_id == operation_id
    assert "dpone admin unrevoke" in (entered.value.hint or "")
    with pytest.raises(DponeError) as planning:
        journal.plan_attempt(operation_id, lease)
    assert planning.value.code == code
    journal.release_lease(lease)
    with pytest.raises(DponeError) as begun:
        journal.begin_attempt(operation_id, "worker-2", 60)
    assert begun.value.code == code
    child = journal.get_child(operation_id)
    assert (child.state_name, child.attempt_ordinal, child.revision) == (
        "sealed", 0, before.revision)
    assert journal.list_attempts(operation_id) == [] and reservations(operation_id) == {}

    assert _revoke(journal, target, revoked=False) is True
    entered_now, _ = submit(journal, operation_id)
    assert (entered_now.state_name, entered_now.attempt_ordinal) == ("submitting", 1)


def test_another_profile_or_binding_does_not_block(journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(_governed([(0, 10)])).parent.children[0].operation_id
    _revoke(journal, RevocationTarget(kind="profile", ref="mock.batch-ndjson@2"))
    _revoke(journal, RevocationTarget(kind="binding", ref="other_binding"))
    assert submit(journal, operation_id)[0].state_name == "submitting"


def test_a_submitted_child_is_still_answered_and_verified_while_revoked(
        journal: DeliveryJournalPort) -> None:
    parent = journal.admit_parent(_governed([(0, 10), (10, 20)])).parent
    first, second = (c.operation_id for c in parent.children)
    child, lease = submit(journal, first)
    _revoke(journal, PROFILE)
    answered = sync_success(journal, child, lease)
    observer = journal.acquire_lease(first, "observation", "verifier", 60)
    verified = step(journal, answered, "verifying_succeeded_verified_full", "verification",
                    "FULL_EFFECT_VERIFIED", ["verification_recorded", "all_rows_accounted"],
                    observer)
    assert verified.axes.remote_effect == "FULLY_APPLIED"
    with pytest.raises(DponeError) as refused:
        submit(journal, second)
    assert refused.value.code == "governance.profile_revoked"


def test_an_expired_identity_refuses_new_submits_by_the_journal_clock(
        journal: DeliveryJournalPort) -> None:
    now = journal.now()
    expired = journal.admit_parent(_governed([(0, 10)], salt="expired",
                                             valid_until=now - dt.timedelta(seconds=1))).parent
    valid = journal.admit_parent(_governed([(20, 30)], salt="valid",
                                           valid_until=now + dt.timedelta(hours=1))).parent
    with pytest.raises(DponeError) as refused:
        submit(journal, expired.children[0].operation_id)
    assert refused.value.code == "governance.identity_expired"
    assert refused.value.details["binding"] == BINDING.ref
    assert journal.get_child(expired.children[0].operation_id).attempt_ordinal == 0
    assert submit(journal, valid.children[0].operation_id)[0].state_name == "submitting"


def test_a_parent_without_recorded_authority_is_checked_against_nothing(
        journal: DeliveryJournalPort) -> None:
    operation_id = journal.admit_parent(admission([(0, 10)])).parent.children[0].operation_id
    _revoke(journal, PROFILE)
    assert submit(journal, operation_id)[0].state_name == "submitting"


def test_every_change_is_audited_once_and_listed(journal: DeliveryJournalPort) -> None:
    empty = journal.revocation_status(ENVIRONMENT)
    assert (empty.revoked, empty.history) == ((), ())
    assert _revoke(journal, PROFILE) is True
    assert _revoke(journal, PROFILE) is False  # already revoked: nothing written
    assert _revoke(journal, BINDING) is True
    assert journal.set_revocation(ENVIRONMENT, BINDING, revoked=False, actor="security-owner",
                                  reason="binding rotated") is True
    assert _revoke(journal, BINDING, revoked=False) is False

    status = journal.revocation_status(ENVIRONMENT)
    assert [(r.kind, r.ref, r.revoked_by) for r in status.revoked] == [
        ("profile", PROFILE.ref, "sec-oncall")]
    assert [(h.action, h.kind, h.ref, h.actor, h.reason) for h in status.history] == [
        ("unrevoke", "binding", BINDING.ref, "security-owner", "binding rotated"),
        ("revoke", "binding", BINDING.ref, "sec-oncall", "signing key leaked (INC-42)"),
        ("revoke", "profile", PROFILE.ref, "sec-oncall", "signing key leaked (INC-42)")]
    assert status.revoked[0].revoked_at <= journal.now()


def test_a_change_is_scoped_to_the_journal_environment(journal: DeliveryJournalPort) -> None:
    with pytest.raises(DponeError) as outside:
        journal.set_revocation("another-environment", PROFILE, revoked=True, actor="x",
                               reason="y")
    assert outside.value.code == "journal.not_found"
    assert journal.revocation_status(ENVIRONMENT).revoked == ()
