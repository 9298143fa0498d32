"""Which receipt polls are recorded: a job's answers are journaled when they say something new.

A job that runs for an hour and is polled every few seconds would otherwise write a journal
revision and an observation row per poll. A poll is recorded when its answer changes what the
journal knows (the first answer this process reads, a new phase or counter, a terminal, expired
or unknown outcome, an answer from the ACCEPTED state, the last poll ``max_observations`` allows)
and, for an unchanged running job, every ``RECORD_EVERY`` th poll: a heartbeat that shows the
job is still observed. The unrecorded polls are counted in process (``QuietPolls``) and the
next record advances ``observation_ordinal`` by all of them, so
``observability.max_observations`` still bounds the polls sent (a process lost between records
loses fewer than ``RECORD_EVERY`` of them from the count).

Each poll, recorded or not, is still taken under an observation lease and the account's shared
poll rate; the next unrecorded check is due by the journal clock after the profile's
``poll_interval_s``, as a recorded one is.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from dpone.contracts.state import StateName
from dpone.executor.supervisor._transitions import PollOutcome

RECORD_EVERY: Final = 10
"""An unchanged running job is recorded at least every this many polls."""


@dataclass
class QuietPolls:
    """The unchanged running answers one observer polled since its last record.

    ``count``: polls not recorded; ``due``: when the next one is due (journal clock);
    ``last``: the observation this observer last recorded or read (what "unchanged" compares
    with), ``None`` before its first poll.
    """

    count: int = 0
    due: dt.datetime | None = None
    last: Mapping[str, Any] | None = None

    def next_due(self, recorded_due: dt.datetime | None) -> dt.datetime | None:
        """When the next poll is due: the in-process due time while polls went unrecorded."""
        return self.due if self.count else recorded_due

    def counted(self, observations: int) -> int:
        """The polls sent so far: the journal's ``observation_ordinal`` plus the unrecorded."""
        return observations + self.count

    def skip(self, due: dt.datetime) -> None:
        """One more unrecorded poll; the next is due at ``due``."""
        self.count += 1
        self.due = due

    def recorded(self, observation: Mapping[str, Any]) -> int:
        """The polls a record of ``observation`` covers (this one and the unrecorded); resets."""
        polls = self.count + 1
        self.count, self.due, self.last = 0, None, dict(observation)
        return polls


def records_poll(state: StateName, outcome: PollOutcome, observation: Mapping[str, Any],
                 quiet: QuietPolls, *, remaining: int) -> bool:
    """True when this poll's answer is journaled (see the module docstring). ``remaining``: the
    polls ``observability.max_observations`` still allows, this one included; the last one is
    always recorded, so a stop at the bound finds every poll in ``observation_ordinal``."""
    unchanged = quiet.last is not None and observation == quiet.last
    return not (state == StateName.WAITING and outcome == "running" and unchanged
                and quiet.count + 1 < RECORD_EVERY and remaining > 1)
