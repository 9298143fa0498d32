"""The receipt cases: how long a receipt answers, and whether a key is found right after.

* ``receipt_ttl``: the receipt of an accepted submit polls right after acceptance; polled on
  until ``timeouts.receipt_ttl_s``, it must not expire before that, and after it the answer must
  be one of ``acknowledgement.poll.expired_statuses``. The expiry answer counts only when it is
  observed, which needs a TTL within ``--max-wait``: a longer one is UNVERIFIED (and says so),
  never PASS.
* ``query_consistency`` (only with ``acknowledgement.query_by_key``): the lookup sent right
  after acceptance must find the key (and, where it names one, the accepted job); an absent
  answer fails: the query is not read-after-write consistent, and an absent answer could then
  hide an effect.
"""

from __future__ import annotations

from dpone.contracts.certification import CaseResult
from dpone.executor.certify._answers import (
    PollReading,
    Receipt,
    read_key_query,
    read_poll,
    same_receipt,
    shown_receipt,
)
from dpone.executor.certify._probe import Answer
from dpone.executor.certify._synthetic import Submit
from dpone.executor.certify._verdicts import (
    CaseContext,
    not_accepted,
    not_applicable,
    result,
)

ALIVE = ("running", "terminal")
POLLS_BEFORE_TTL = 10
"""At most this many polls before the claimed TTL (they prove the receipt did not expire early)."""


def poll_once(context: CaseContext, submit: Submit,
              receipt: Receipt) -> tuple[Answer, PollReading]:
    """One poll of ``receipt`` (the profile has a poll)."""
    answer = context.probe.send(context.factory.poll(receipt))
    return answer, read_poll(context.profile, answer, submit)


def receipt_ttl(context: CaseContext) -> CaseResult:
    profile, max_wait = context.profile, context.options.max_wait_s
    poll, ttl = profile.acknowledgement.poll, profile.timeouts.receipt_ttl_s
    if poll is None:
        return not_applicable("receipt_ttl", "acknowledgement.poll: none", f"the profile has no "
                              f"receipt poll (protocol_family {profile.protocol_family})")
    claim = f"timeouts.receipt_ttl_s: {ttl}, poll.expired_statuses: {list(poll.expired_statuses)}"
    if (skipped := context.offline("receipt_ttl", claim)) is not None:
        return skipped
    submit = context.fresh_submit()
    first, reading = context.send(submit)
    if reading.kind != "accepted":
        return not_accepted("receipt_ttl", claim, reading, [first])
    shown, at_once = poll_once(context, submit, reading.receipt)
    evidence = [first, shown]
    if at_once.kind == "expired":
        return result("receipt_ttl", claim, "FAIL", f"the receipt answered {at_once.detail} "
                      f"right after acceptance; the profile claims it lives {ttl} s",
                      evidence=evidence)
    if at_once.kind == "other_key":
        return result("receipt_ttl", claim, "FAIL", f"the receipt's poll answered "
                      f"{at_once.detail}", evidence=evidence)
    if at_once.kind not in ALIVE:
        return result("receipt_ttl", claim, "UNVERIFIED", f"the receipt's poll right after "
                      f"acceptance got {at_once.detail}: the claim was not tested",
                      evidence=evidence)
    if ttl > max_wait:
        return result("receipt_ttl", claim, "UNVERIFIED", f"the receipt polls right after "
                      f"acceptance ({at_once.detail}); its expiry answer was not observed: "
                      f"timeouts.receipt_ttl_s {ttl} s is beyond --max-wait {max_wait:g} s",
                      measured={"receipt_ttl_s": ttl, "max_wait_s": max_wait},
                      evidence=evidence)
    return _until_expiry(context, submit, reading.receipt, first, evidence, claim)


def _until_expiry(context: CaseContext, submit: Submit, receipt: Receipt, first: Answer,
                  evidence: list[Answer], claim: str) -> CaseResult:
    """Poll until the receipt's expiry answer, an early expiry or ``--max-wait``."""
    profile, clock, max_wait = context.profile, context.clock, context.options.max_wait_s
    ttl = profile.timeouts.receipt_ttl_s
    step = max(context.poll_interval_s, ttl / POLLS_BEFORE_TTL)
    alive_at, polls = 0.0, 1
    while True:
        age = clock.monotonic() - first.started
        if age + step > max_wait:
            return result("receipt_ttl", claim, "UNVERIFIED", f"the receipt still answered "
                          f"after {alive_at:.1f} s (claimed {ttl} s): its expiry answer was not "
                          f"observed within --max-wait {max_wait:g} s",
                          measured={"receipt_ttl_s": ttl, "alive_s": round(alive_at, 3),
                                    "polls": polls}, evidence=evidence)
        clock.sleep(step if age >= ttl else min(step, ttl - age))
        answer, reading = poll_once(context, submit, receipt)
        polls += 1
        # The receipt was issued between the submit's start and its answer: an answer came at
        # a receipt age of at least `lower` and at most `upper` seconds.
        lower, upper = answer.started - first.finished, answer.finished - first.started
        measured = {"receipt_ttl_s": ttl, "alive_s": round(alive_at, 3),
                    "expired_after_s": round(upper, 3), "polls": polls}
        if reading.kind in ALIVE:
            alive_at = max(alive_at, lower)
            continue
        if reading.kind == "expired":
            if upper < ttl:
                return result("receipt_ttl", claim, "FAIL", f"the receipt expired within "
                              f"{upper:.1f} s ({reading.detail}); the profile claims {ttl} s",
                              measured=measured, evidence=[*evidence, answer])
            return result("receipt_ttl", claim, "PASS", f"the receipt answered until "
                          f"{alive_at:.1f} s and {reading.detail} after {upper:.1f} s (claimed "
                          f"{ttl} s)", measured=measured, evidence=[*evidence, answer])
        if reading.kind in ("throttled", "no_answer") or (
                reading.kind == "unclassified" and upper < ttl and (answer.status or 0) >= 500):
            continue
        when = "before" if upper < ttl else "after"
        return result("receipt_ttl", claim, "FAIL", f"{when} the claimed {ttl} s the receipt "
                      f"answered {reading.detail}, neither its status nor an expired status",
                      measured=measured, evidence=[*evidence, answer])


def query_consistency(context: CaseContext) -> CaseResult:
    profile = context.profile
    query = profile.acknowledgement.query_by_key
    if query is None:
        return not_applicable("query_consistency", "acknowledgement.query_by_key: none",
                              "the profile declares no query by key")
    claim = f"query_by_key.found_statuses: {list(query.found_statuses)}"
    if (skipped := context.offline("query_consistency", claim)) is not None:
        return skipped
    submit = context.fresh_submit()
    first, reading = context.send(submit)
    if reading.kind != "accepted":
        return not_accepted("query_consistency", claim, reading, [first])
    answer = context.probe.send(context.factory.key_query(submit.keys))
    found = read_key_query(profile, answer, submit)
    evidence = [first, answer]
    after = round(answer.started - first.finished, 3)
    measured = {"queried_after_s": after, "answer": found.kind}
    if found.kind == "found":
        same = same_receipt({k: v for k, v in reading.receipt.items() if k in found.receipt},
                            found.receipt)
        if same is False:
            return result("query_consistency", claim, "FAIL", f"the query by key answered "
                          f"{found.detail}, another job than the accepted one "
                          f"({shown_receipt(reading.receipt)})", measured=measured,
                          evidence=evidence)
        return result("query_consistency", claim, "PASS", f"a query right after acceptance "
                      f"({after * 1000:.0f} ms) answered {found.detail}", measured=measured,
                      evidence=evidence)
    if found.kind in ("throttled", "no_answer") or (
            found.kind == "unclassified" and (answer.status or 0) >= 500):
        return result("query_consistency", claim, "UNVERIFIED", f"the query by key got "
                      f"{found.detail}: the claim was not tested", measured=measured,
                      evidence=evidence)
    if found.kind == "absent":
        return result("query_consistency", claim, "FAIL", f"a query right after acceptance "
                      f"answered {found.detail}: the lookup is not read-after-write consistent",
                      measured=measured, evidence=evidence)
    return result("query_consistency", claim, "FAIL", f"the query by key answered "
                  f"{found.detail}", measured=measured, evidence=evidence)
