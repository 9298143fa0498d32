"""What a delivery's verification rests on, as ``inspect`` reports it.

A synchronous batch is verified on the counters of the answer to its own submit. An asynchronous
job is verified on the counters of a receipt poll answer: with a certified key echo
(``acknowledgement.poll.key_echo``) that answer is proven to describe this child's job; without
one it is trusted on its counters alone, and a reused receipt id could make another job's
counters look like this child's.
"""

from __future__ import annotations

from dpone.contracts.documents import KeyEcho, VerificationBasis
from dpone.contracts.plan import RestDeliveryPlan


def verification_basis(plan: RestDeliveryPlan | None) -> VerificationBasis:
    """What verification rests on with the plan's profile (``unknown`` when the plan is not in
    the plan store)."""
    if plan is None:
        return VerificationBasis(rests_on="unknown", counters_from=None, key_echo=None)
    profile = plan.profile.snapshot
    poll = profile.acknowledgement.poll
    echo = poll.key_echo if poll is not None else None
    counters_from = profile.verification.counters_from
    if counters_from == "poll_response" and echo is not None:
        return VerificationBasis(
            rests_on="counters_and_key_echo", counters_from=counters_from,
            key_echo=KeyEcho(source=_source(echo.body_json_pointer, echo.header),
                             form=echo.form))
    return VerificationBasis(rests_on="counters_only", counters_from=counters_from,
                             key_echo=None)


def _source(pointer: str | None, header: str | None) -> str:
    return f"body {pointer}" if pointer is not None else f"header {header}"


def verification_text(basis: VerificationBasis) -> str:
    """One line for people: what a FULLY_APPLIED verdict of this delivery rests on."""
    if basis.rests_on == "unknown":
        return "  verification basis unknown: the plan is not in the plan store (--plans)"
    if basis.counters_from == "submit_response":
        return "  verification rests on counters only: those of the answer to each submit"
    echo = basis.key_echo
    if echo is None:
        return ("  verification rests on counters only: the profile certifies no key echo, so "
                "a poll answer is not proven to describe this child's job")
    shown = "the sealed payload filename" if echo.form == "payload_filename" \
        else "the receiver mutation key"
    return (f"  verification rests on counters and a certified key echo: every poll answer "
            f"carries {shown} ({echo.source})")
