"""The two protocol families as data: what differs between a synchronous batch and an
asynchronous bulk job, read in one place.

A :class:`Family` says how many children a run may have in flight (``width``), how often it
promotes the frontier (``stride``), whether a submit answer is a durable receipt that is polled
(``observes``) and where verification reads the receiver's counters (``checks``). Every other
module asks the family, never the profile's ``protocol_family`` (the one lookup is
:func:`family_of`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from dpone.contracts import DponeError
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.profile import OperationProfile

PROMOTION_STRIDE: Final = 8
"""A synchronous batch promotes its frontier once this many children past it are done: one
promotion transaction per stride of children instead of one per child."""


@dataclass(frozen=True)
class Family:
    """One protocol family as the supervisor drives it."""

    name: Literal["sync_batch", "async_bulk_job"]
    checks: Literal["submit_response", "poll_response"]
    """Where verification reads the counters: the submit answer, or the job's status."""
    observes: bool
    """A submit answer is a durable receipt, observed by read-only polls until the job ends."""
    stride: int
    """Children done past the frontier before it is promoted."""
    width: int = 1
    """Children in flight at once: one remote job at a time for a bulk job (V1)."""


_FAMILIES: Final[Mapping[str, Family]] = {
    "sync_batch": Family("sync_batch", checks="submit_response", observes=False,
                         stride=PROMOTION_STRIDE),
    "async_bulk_job": Family("async_bulk_job", checks="poll_response", observes=True, stride=1),
}


def family_of(profile: OperationProfile) -> Family:
    """The family ``profile`` declares, with its certified width; ``profile.unsupported_family``
    when the supervisor cannot drive it (an unknown family, counters read from the other
    answer, a bulk job without a receipt poll)."""
    family = _FAMILIES.get(profile.protocol_family)
    if family is None or family.checks != profile.verification.counters_from:
        raise DponeError(code="profile.unsupported_family",
                         message=f"profile {profile.ref}: protocol family "
                         f"{profile.protocol_family!r} with counters from "
                         f"{profile.verification.counters_from!r} is not supported")
    if family.observes:
        if profile.acknowledgement.poll is None:
            raise DponeError(code="profile.unsupported_family",
                             message=f"profile {profile.ref} declares no receipt poll")
        return family
    # Every attempt holds one of the effect domain's remote-job slots and one active request.
    rate = profile.rate
    return dataclasses.replace(family, width=min(
        profile.max_in_flight_children, rate.max_active_requests, rate.max_active_remote_jobs))


def check_profile(plan: RestDeliveryPlan) -> None:
    """Refuse, before any freeze, seal or HTTP, a profile this supervisor cannot drive."""
    family_of(plan.profile.snapshot)
