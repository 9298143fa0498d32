"""The static case: the profile compiles and its claims do not contradict one another.

It sends nothing. The profile was already loaded and checked as a compilation checks it (a
profile that does not compile is refused before any case runs); this case adds the claims a
receiver could never satisfy together: one submit status with two meanings, a receipt that
expires before its first poll, a fence whose repeated key no answer could recognize.
"""

from __future__ import annotations

from dpone.contracts.certification import CaseResult
from dpone.contracts.profile import OperationProfile
from dpone.executor.certify._verdicts import result

CLAIM = "the profile compiles; its claims are consistent"


def contradictions(profile: OperationProfile) -> list[str]:
    """Every pair of claims that cannot both hold, as sentences."""
    ack, timeouts, fence = profile.acknowledgement, profile.timeouts, profile.mutation_fence
    found: list[str] = []
    if ack.duplicate is not None:
        both = sorted(set(ack.duplicate.statuses) & set(ack.accepted_statuses))
        found += [f"status {status} is both accepted and a duplicate answer" for status in both]
    if ack.poll is not None and timeouts.receipt_ttl_s < timeouts.poll_interval_s:
        found.append(f"a receipt expires after {timeouts.receipt_ttl_s} s, before its first "
                     f"poll (poll_interval_s {timeouts.poll_interval_s})")
    if fence.type != "none" and ack.duplicate is None and not ack.receipt:
        found.append(f"the {fence.type} fence claims a repeated key is recognized, but the "
                     "profile names neither a duplicate answer nor a receipt")
    return found


def _summary(profile: OperationProfile) -> str:
    ack = profile.acknowledgement
    parts = [profile.protocol_family, f"fence {profile.mutation_fence.type}"]
    if ack.duplicate is not None:
        parts.append(f"duplicate {list(ack.duplicate.statuses)}")
    if ack.poll is not None:
        parts.append("receipt poll")
    if ack.query_by_key is not None:
        parts.append("query by key")
    return ", ".join(parts)


def static_profile(profile: OperationProfile, contract_digest: str) -> CaseResult:
    found = contradictions(profile)
    measured = {"profile_contract_digest": contract_digest, "contradictions": len(found)}
    if found:
        return result("static_profile", CLAIM, "FAIL", "the profile's claims contradict one "
                      "another: " + "; ".join(found), measured=measured)
    return result("static_profile", CLAIM, "PASS", f"compiles; its claims are consistent "
                  f"({_summary(profile)})", measured=measured)
