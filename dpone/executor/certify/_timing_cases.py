"""The timing cases: how long an operation takes, and how far the receiver's clock is off.

* ``operation_duration``: an async job (``acknowledgement.poll``) is polled from its submit until
  it ends: ending within ``timeouts.operation_total_s`` passes, still running past it fails, not
  ended within ``--max-wait`` (shorter than the claim) is UNVERIFIED. A sync submit must be
  answered within ``timeouts.request_total_s``.
* ``clock_skew``: every answer of the run that carried a ``Date`` header is compared with this
  machine's UTC clock at the middle of its exchange (a ``Date`` has whole seconds and servers
  reuse it for up to a second, so a second and half the exchange are allowed for): within the
  profile's skew margin
  (``acknowledgement.query_by_key.absence.skew_margin_s``, else :data:`DEFAULT_SKEW_MARGIN_S`)
  passes. No ``Date`` at all is UNVERIFIED.
"""

from __future__ import annotations

import datetime as dt
from email.utils import parsedate_to_datetime
from typing import Final

from dpone.contracts.certification import CaseResult, Verdict
from dpone.contracts.transport import FailureKind
from dpone.executor.certify._probe import Answer
from dpone.executor.certify._receipt_cases import poll_once
from dpone.executor.certify._verdicts import CaseContext, not_accepted, result

DEFAULT_SKEW_MARGIN_S: Final = 60
DATE_RESOLUTION_S: Final = 1.0


def operation_duration(context: CaseContext) -> CaseResult:
    profile = context.profile
    if profile.acknowledgement.poll is None:
        return _sync_duration(context)
    limit, max_wait = profile.timeouts.operation_total_s, context.options.max_wait_s
    claim = f"timeouts.operation_total_s: {limit}"
    if (skipped := context.offline("operation_duration", claim)) is not None:
        return skipped
    submit = context.fresh_submit()
    first, reading = context.send(submit)
    if reading.kind != "accepted":
        return not_accepted("operation_duration", claim, reading, [first])
    shown: list[Answer] = [first]
    polls, running_at = 0, 0.0
    while True:
        answer, polled = poll_once(context, submit, reading.receipt)
        polls += 1
        shown = [*shown[:2], answer] if len(shown) >= 2 else [*shown, answer]
        # The job began between the submit's start and its answer: a running answer proves
        # at least `lower` seconds of it, a terminal one at most `upper`.
        lower, upper = answer.started - first.finished, answer.finished - first.started
        measured = {"operation_total_s": limit, "elapsed_s": round(upper, 3), "polls": polls}
        if polled.kind == "terminal":
            if upper <= limit:
                return result("operation_duration", claim, "PASS", f"the job ended "
                              f"{polled.phase} within {upper:.1f} s (claimed at most {limit} s)",
                              measured=measured, evidence=shown)
            return result("operation_duration", claim, "UNVERIFIED", f"the job ended "
                          f"{polled.phase} between {running_at:.1f} s and {upper:.1f} s: the "
                          f"claimed {limit} s lies between", measured=measured, evidence=shown)
        if polled.kind == "expired":  # the receipt_ttl case judges how long receipts live
            return result("operation_duration", claim, "UNVERIFIED", f"the receipt expired "
                          f"({polled.detail}) before the job's end was observed: the claim was "
                          "not tested", measured=measured, evidence=shown)
        retry = polled.kind in ("throttled", "no_answer") or (
            polled.kind == "unclassified" and (answer.status or 0) >= 500)
        if polled.kind != "running" and not retry:
            return result("operation_duration", claim, "FAIL", f"before the job ended, its poll "
                          f"answered {polled.detail}", measured=measured, evidence=shown)
        if polled.kind == "running":
            running_at = lower
            if lower > limit:
                return result("operation_duration", claim, "FAIL", f"the job was still "
                              f"{polled.phase} after {lower:.1f} s; the profile claims at most "
                              f"{limit} s", measured=measured, evidence=shown)
        now = context.clock.monotonic()
        if now - first.started + context.poll_interval_s > max_wait:
            return result("operation_duration", claim, "UNVERIFIED", f"the job had not ended "
                          f"after {now - first.started:.1f} s ({polled.detail}): not within "
                          f"--max-wait {max_wait:g} s, shorter than the claimed {limit} s",
                          measured=measured, evidence=shown)
        guard = 0.05 + 2 * (answer.finished - answer.started)
        context.clock.sleep(_pause(now - first.started, now - first.finished, limit,
                                   context.poll_interval_s, guard))


def _pause(upper: float, lower: float, limit: float, interval: float, guard: float) -> float:
    """Seconds to the next poll: the poll interval, except that a poll that would step over
    the claimed limit is preceded by one just before it (a terminal answer there proves the
    claim) and one just after it (a running answer there disproves it)."""
    if upper + interval <= limit:
        return interval
    if upper < limit - guard:
        return limit - guard - upper
    if lower <= limit:
        return max(0.0, min(interval, limit + guard - lower))
    return interval


def _sync_duration(context: CaseContext) -> CaseResult:
    limit = context.profile.timeouts.request_total_s
    claim = f"timeouts.request_total_s: {limit}"
    if (skipped := context.offline("operation_duration", claim)) is not None:
        return skipped
    answer, reading = context.send(context.fresh_submit())
    elapsed = answer.finished - answer.started
    measured = {"request_total_s": limit, "elapsed_s": round(elapsed, 3)}
    if answer.failure is not None and answer.failure.kind == FailureKind.TOTAL_DEADLINE:
        return result("operation_duration", claim, "FAIL", f"the submit got no answer within "
                      f"{limit} s ({answer.shown()})", measured=measured, evidence=[answer])
    if reading.kind != "accepted":
        return not_accepted("operation_duration", claim, reading, [answer])
    within: Verdict = "PASS" if elapsed <= limit else "FAIL"
    return result("operation_duration", claim, within, f"the submit was answered "
                  f"{reading.detail} after {elapsed:.1f} s (claimed at most {limit} s)",
                  measured=measured, evidence=[answer])


def skew_margin(claimed: int | None) -> tuple[int, str]:
    """The margin the clock-skew case allows, and where it comes from."""
    if claimed is None:
        return DEFAULT_SKEW_MARGIN_S, "skew margin (default, the profile names none)"
    return claimed, "query_by_key.absence.skew_margin_s"


def _skew(answer: Answer) -> tuple[float, float] | None:
    """(skew estimate, tolerance) in seconds, or None for an unreadable ``Date``."""
    try:
        date = parsedate_to_datetime(answer.exchange.date_header or "")
    except (TypeError, ValueError, IndexError):
        return None
    if date.tzinfo is None:
        date = date.replace(tzinfo=dt.UTC)
    # The receiver's time was in [date, date + 2 s) (whole seconds, reused up to a second)
    # while ours was in [sent_at, received_at]: the middle of the skew's range, and its half.
    exchange = answer.received_at - answer.sent_at
    middle = answer.sent_at + exchange / 2
    estimate = (date - middle).total_seconds() + DATE_RESOLUTION_S
    return estimate, DATE_RESOLUTION_S + exchange.total_seconds() / 2


def clock_skew(context: CaseContext) -> CaseResult:
    """Judge the ``Date`` of every answer the run's other cases got (run it last)."""
    query = context.profile.acknowledgement.query_by_key
    margin, source = skew_margin(query.absence.skew_margin_s if query is not None else None)
    claim = f"{source}: {margin}"
    if (skipped := context.offline("clock_skew", claim)) is not None:
        return skipped
    answers = [answer for answer in context.probe.answers() if answer.response is not None]
    dated = [(answer, skew) for answer in answers
             if answer.exchange.date_header and (skew := _skew(answer)) is not None]
    if not dated:
        why = ("no answer carried a readable Date header" if answers
               else "the run got no answer to read a Date from")
        return result("clock_skew", claim, "UNVERIFIED", f"{why}: the claim was not tested",
                      measured={"margin_s": margin, "answers": len(answers)})
    # The answer proving the largest skew, and the largest skew any answer allows.
    worst, (estimate, tolerance) = max(dated, key=lambda item: abs(item[1][0]) - item[1][1])
    off = max(0.0, abs(estimate) - tolerance)
    bound = max(abs(skew) + spread for _, (skew, spread) in dated)
    measured = {"margin_s": margin, "skew_s": round(estimate, 3),
                "skew_bound_s": round(bound, 3), "dated_answers": len(dated)}
    if off <= margin:
        return result("clock_skew", claim, "PASS", f"{len(dated)} answer Date header(s): the "
                      f"receiver's clock is within {bound:.0f} s of UTC (allowed {margin} s)",
                      measured=measured, evidence=[worst])
    side = "ahead of" if estimate > 0 else "behind"
    return result("clock_skew", claim, "FAIL", f"the receiver's Date is at least {off:.0f} s "
                  f"{side} UTC; the profile allows {margin} s", measured=measured,
                  evidence=[worst])
