"""Which receipt polls are journaled (:mod:`dpone.executor.supervisor._quiet`), as a pure rule.

A table names the cases one by one; hypothesis then drives any sequence of answers through the
rule as the observation loop does and checks what keeps the journal honest: every poll is
counted by the records (their ``polls`` sum to the polls sent), a change or an ending is never
left unrecorded, no record waits longer than ``RECORD_EVERY`` polls, and the poll that reaches
``max_observations`` is recorded.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpone.contracts.state import StateName as S
from dpone.executor.supervisor._quiet import RECORD_EVERY, QuietPolls, records_poll
from dpone.executor.supervisor._transitions import PollOutcome

_RUNNING: dict[str, Any] = {"http_status": 200, "phase": "running", "outcome": "running"}
_LATER = dt.datetime(2026, 12, 4, 12, 0, tzinfo=dt.UTC)


def _seen(last: dict[str, Any] | None, count: int = 0) -> QuietPolls:
    return QuietPolls(count=count, due=_LATER if count else None, last=last)


@pytest.mark.parametrize(("state", "outcome", "observation", "quiet", "remaining", "recorded"), [
    (S.WAITING, "running", _RUNNING, _seen(_RUNNING), 100, False),  # unchanged: counted only
    (S.WAITING, "running", _RUNNING, _seen(None), 100, True),  # this observer's first answer
    (S.ACCEPTED, "running", _RUNNING, _seen(_RUNNING), 100, True),  # ACCEPTED -> WAITING
    (S.WAITING, "running", {**_RUNNING, "phase": "pending"}, _seen(_RUNNING), 100, True),
    (S.WAITING, "running", {**_RUNNING, "accepted_rows": 5}, _seen(_RUNNING), 100, True),
    (S.WAITING, "succeeded", _RUNNING, _seen(_RUNNING), 100, True),  # an ending, always
    (S.WAITING, "protocol_unknown", _RUNNING, _seen(_RUNNING), 100, True),
    (S.WAITING, "running", _RUNNING, _seen(_RUNNING, RECORD_EVERY - 2), 100, False),
    (S.WAITING, "running", _RUNNING, _seen(_RUNNING, RECORD_EVERY - 1), 100, True),  # heartbeat
    (S.WAITING, "running", _RUNNING, _seen(_RUNNING, 3), 1, True),  # the last poll allowed
])
def test_a_poll_is_recorded_when_it_says_something_new(
        state: S, outcome: PollOutcome, observation: dict[str, Any], quiet: QuietPolls,
        remaining: int, recorded: bool) -> None:
    assert records_poll(state, outcome, observation, quiet, remaining=remaining) is recorded


def test_a_record_covers_the_unrecorded_polls_and_starts_counting_again() -> None:
    quiet = QuietPolls(last=_RUNNING)
    quiet.skip(_LATER)
    quiet.skip(_LATER + dt.timedelta(seconds=2))
    assert (quiet.count, quiet.counted(7), quiet.next_due(None)) == (
        2, 9, _LATER + dt.timedelta(seconds=2))

    assert quiet.recorded({**_RUNNING, "phase": "pending"}) == 3
    assert (quiet.count, quiet.due, quiet.last) == (0, None, {**_RUNNING, "phase": "pending"})
    assert quiet.next_due(_LATER) == _LATER  # the journal's due time again


_PHASES = st.sampled_from(["pending", "running"])
_ANSWERS = st.lists(st.one_of(_PHASES, st.just("complete")), min_size=1, max_size=60)


@given(_ANSWERS, st.integers(min_value=1, max_value=80))
def test_every_poll_is_counted_and_nothing_new_is_left_unrecorded(
        answers: list[str], max_observations: int) -> None:
    quiet, state, ordinal, sent, records = QuietPolls(), S.ACCEPTED, 0, 0, []
    for phase in answers:
        if quiet.counted(ordinal) >= max_observations:
            break  # observation.limit_reached: nothing more is polled
        outcome: PollOutcome = "succeeded" if phase == "complete" else "running"
        observation = {"http_status": 200, "phase": phase, "outcome": outcome}
        sent += 1
        new = quiet.last is None or observation != quiet.last
        if not records_poll(state, outcome, observation, quiet,
                            remaining=max_observations - quiet.counted(ordinal)):
            assert not new and state == S.WAITING and outcome == "running"
            quiet.skip(_LATER)
            assert quiet.count < RECORD_EVERY
            continue
        polls = quiet.recorded(observation)
        ordinal += polls
        records.append(polls)
        state = S.WAITING
        if outcome != "running":
            break
    assert sum(records) == ordinal
    assert ordinal + quiet.count == sent  # every poll sent is recorded or counted in process
    if sent >= max_observations:
        assert quiet.count == 0 and ordinal == max_observations  # the bound is in the journal
