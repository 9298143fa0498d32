"""The fence cases: what the receiver does with a key it was sent before.

* ``key_retention``: the same key and bytes resubmitted ``--retention-delay`` seconds after the
  first was accepted must be answered as a duplicate naming the first receipt (or with the first
  receipt again); accepted as new, the receiver forgot the key. ``retention_tested_s`` measures
  how long the key was proven held.
* ``key_payload_binding`` (only when the fence claims ``key_payload_binding: required``): the
  same key with other bytes must not be applied: a duplicate answer, a refusal or the first
  receipt again passes; accepted as new fails.
* ``concurrent_duplicates``: ``--concurrency`` parallel submits of one key and bytes must be
  accepted once: the others are duplicates naming that receipt, or refusals.

A profile without a fence (``mutation_fence.type: none``) claims none of this: each case is
not applicable.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from dpone.compiler.certification_gate import RETENTION_MEASURE
from dpone.contracts.certification import CaseName, CaseResult, Verdict
from dpone.contracts.profile import OperationProfile
from dpone.executor.certify._answers import (
    Receipt,
    SubmitReading,
    names_receipt,
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

NO_FENCE = "the profile claims no fence (mutation_fence.type: none)"
BARRIER_TIMEOUT_S = 30.0
"""How long the parallel submitters wait for one another before they all start."""


def _fence_claim(profile: OperationProfile) -> str:
    """``mutation_fence.type: receiver_duplicate_key, duplicate.statuses: [409]``."""
    duplicate = profile.acknowledgement.duplicate
    statuses = f", duplicate.statuses: {list(duplicate.statuses)}" if duplicate is not None else ""
    return f"mutation_fence.type: {profile.mutation_fence.type}{statuses}"


def _no_fence(profile: OperationProfile) -> bool:
    return profile.mutation_fence.type == "none"


def _repeat_verdict(case: CaseName, profile: OperationProfile, first: Receipt,
                    reading: SubmitReading, what: str) -> tuple[Verdict, str]:
    """(verdict, reason) of a repeat of the first accepted submit under its key."""
    if reading.kind == "duplicate":
        if names_receipt(profile, first, reading) is False:
            return "FAIL", (f"{what} was answered {reading.detail}, not naming the first "
                            f"receipt ({shown_receipt(first)})")
        return "PASS", f"{what} was answered {reading.detail}"
    if reading.kind == "accepted":
        same = same_receipt(first, reading.receipt)
        if same is None:
            return "UNVERIFIED", (f"{what} was answered {reading.detail}: the answer carries no "
                                  "receipt to tell a replayed answer from a new effect")
        if same:
            return "PASS", f"{what} was answered with the first receipt again ({reading.detail})"
        return "FAIL", f"{what} was accepted as new: {reading.detail}"
    refused_credential = reading.status in profile.acknowledgement.rejected_before_effect_statuses
    if reading.kind == "refused" and not refused_credential:
        if case == "key_payload_binding":
            return "PASS", f"{what} was {reading.detail}: nothing applied"
        return "FAIL", (f"{what} was {reading.detail}: neither a duplicate answer nor the first "
                        "receipt")
    return "UNVERIFIED", f"{what} got {reading.detail}: the claim was not tested"


def key_retention(context: CaseContext) -> CaseResult:
    profile, delay = context.profile, context.options.retention_delay_s
    claim = _fence_claim(profile)
    if _no_fence(profile):
        return not_applicable("key_retention", claim, NO_FENCE)
    if (skipped := context.offline("key_retention", claim)) is not None:
        return skipped
    submit = context.fresh_submit()
    first, reading = context.send(submit)
    if reading.kind != "accepted":
        return not_accepted("key_retention", claim, reading, [first])
    context.clock.sleep(delay)
    repeat, again = context.send(submit)
    held = repeat.started - first.finished
    what = f"the same key and bytes, resubmitted after {held:.1f} s,"
    verdict, reason = _repeat_verdict("key_retention", profile, reading.receipt, again, what)
    measured: dict[str, object] = {"retention_delay_s": delay}
    if verdict == "PASS":
        measured[RETENTION_MEASURE] = int(held)
    elif verdict == "FAIL":
        measured["forgotten_within_s"] = round(held, 3)
    if verdict == "FAIL" and again.kind == "accepted":
        reason += f": the receiver kept the key less than {held:.1f} s"
    return result("key_retention", claim, verdict, reason, measured=measured, evidence=[first, repeat])


def key_payload_binding(context: CaseContext) -> CaseResult:
    profile = context.profile
    binding = profile.mutation_fence.key_payload_binding
    claim = f"mutation_fence.key_payload_binding: {binding or 'not given'}"
    if _no_fence(profile):
        return not_applicable("key_payload_binding", claim, NO_FENCE)
    if binding != "required":
        return not_applicable("key_payload_binding", claim, "the profile does not claim the key "
                              "is bound to the payload")
    if (skipped := context.offline("key_payload_binding", claim)) is not None:
        return skipped
    submit = context.fresh_submit()
    first, reading = context.send(submit)
    if reading.kind != "accepted":
        return not_accepted("key_payload_binding", claim, reading, [first])
    other = context.factory.submit(submit.keys, variant=1)
    repeat, again = context.send(other)
    verdict, reason = _repeat_verdict("key_payload_binding", profile, reading.receipt, again,
                                      "the same key with other bytes")
    if verdict == "FAIL" and again.kind == "accepted":
        reason += ": the key is not bound to the payload"
    return result("key_payload_binding", claim, verdict, reason,
                  measured={"answer": again.kind}, evidence=[first, repeat])


def _parallel(context: CaseContext, submit: Submit) -> list[tuple[Answer, SubmitReading]]:
    count = context.options.concurrency
    start = threading.Barrier(count, timeout=BARRIER_TIMEOUT_S)

    def one(_: int) -> tuple[Answer, SubmitReading]:
        start.wait()
        return context.send(submit)

    with ThreadPoolExecutor(max_workers=count, thread_name_prefix="dpone-certify") as pool:
        return list(pool.map(one, range(count)))


def concurrent_duplicates(context: CaseContext) -> CaseResult:
    profile, count = context.profile, context.options.concurrency
    if _no_fence(profile):
        return not_applicable("concurrent_duplicates", "mutation_fence.type: none", NO_FENCE)
    claim = f"mutation_fence.type: {profile.mutation_fence.type} ({count} parallel submits)"
    if (skipped := context.offline("concurrent_duplicates", claim)) is not None:
        return skipped
    answers = _parallel(context, context.fresh_submit())
    evidence = [answer for answer, _ in answers]
    readings = [reading for _, reading in answers]
    accepted = [r for r in readings if r.kind == "accepted"]
    duplicates = [r for r in readings if r.kind == "duplicate"]
    refused = [r for r in readings if r.kind == "refused"]
    unknown = [r for r in readings if r.kind not in ("accepted", "duplicate", "refused")]
    measured = {"parallel": count, "accepted": len(accepted), "duplicate": len(duplicates),
                "refused": len(refused), "unknown": len(unknown)}
    if not accepted:
        return result("concurrent_duplicates", claim, "UNVERIFIED", f"none of {count} parallel "
                      f"submits was accepted ({readings[0].detail}): the claim was not tested",
                      measured=measured, evidence=evidence)
    first = accepted[0].receipt
    new = [r for r in accepted[1:] if same_receipt(first, r.receipt) is not True]
    if new:
        shown = "; ".join(shown_receipt(r.receipt) for r in accepted)
        return result("concurrent_duplicates", claim, "FAIL", f"{len(accepted)} of {count} "
                      f"parallel same-key submits were accepted as new ({shown})",
                      measured=measured, evidence=evidence)
    others = [r for r in duplicates if names_receipt(profile, first, r) is False]
    if others:
        return result("concurrent_duplicates", claim, "FAIL", f"a duplicate answer named "
                      f"another receipt than the accepted one ({shown_receipt(first)}): "
                      f"{others[0].detail}", measured=measured, evidence=evidence)
    if unknown:
        return result("concurrent_duplicates", claim, "UNVERIFIED", f"{len(unknown)} of {count} "
                      f"parallel submits got no classified answer ({unknown[0].detail}): their "
                      "effect is unknown", measured=measured, evidence=evidence)
    return result("concurrent_duplicates", claim, "PASS", f"{count} parallel same-key submits: "
                  f"1 accepted ({shown_receipt(first)}), {len(duplicates)} duplicate(s), "
                  f"{len(refused)} refused", measured=measured, evidence=evidence)
