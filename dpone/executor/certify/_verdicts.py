"""What every case shares: the run's options and context, and how a verdict is written.

A case is PASS only on evidence that the claim held, FAIL only on evidence that contradicts it,
and UNVERIFIED otherwise. An UNVERIFIED case whose reason starts with
:data:`NOT_APPLICABLE` tests a claim the profile does not make (or one the level does not
test): it does not count against the run's result (:func:`run_result`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from dpone.contracts.certification import CaseName, CaseResult, Exchange, Verdict
from dpone.contracts.ports import Clock
from dpone.contracts.profile import OperationProfile
from dpone.executor.certify._answers import SubmitReading, read_submit
from dpone.executor.certify._probe import Answer, Probe
from dpone.executor.certify._synthetic import RequestFactory, Submit, fresh_keys

NOT_APPLICABLE: Final = "not applicable: "
OFFLINE: Final = "run local-live or vendor-live to test it"
MIN_POLL_INTERVAL_S: Final = 0.1
MAX_POLL_INTERVAL_S: Final = 1.0


@dataclass(frozen=True, slots=True)
class Options:
    """``--retention-delay``, ``--concurrency`` and ``--max-wait``."""

    retention_delay_s: float = 2.0
    concurrency: int = 4
    max_wait_s: float = 60.0

    def __post_init__(self) -> None:
        if self.retention_delay_s < 0 or self.max_wait_s < 0:
            raise ValueError("delays are non-negative")
        if not 2 <= self.concurrency <= 64:
            raise ValueError("concurrency is 2 to 64 parallel submits")


@dataclass(frozen=True, slots=True)
class CaseContext:
    """One live run: the profile, its synthetic requests, the probe, the clock, the options."""

    profile: OperationProfile
    factory: RequestFactory
    probe: Probe
    clock: Clock
    options: Options
    live: bool = True
    """False at level static: every live case stops before its first request."""

    def offline(self, case: CaseName, claim: str) -> CaseResult | None:
        """The case's result when the level sends no request (None: go on)."""
        if self.live:
            return None
        return not_applicable(case, claim, f"level static sends no request ({OFFLINE})")

    def fresh_submit(self, variant: int = 0) -> Submit:
        return self.factory.submit(fresh_keys(), variant)

    def send(self, submit: Submit) -> tuple[Answer, SubmitReading]:
        answer = self.probe.send(submit.request, submit.body_digest)
        return answer, read_submit(self.profile, answer)

    @property
    def poll_interval_s(self) -> float:
        """The pause between polls: the profile's interval, at most 1 s (a certification
        waits for short synthetic jobs), never faster than its poll rate allows."""
        rate = 60.0 / self.profile.rate.poll_per_minute
        wanted = min(float(self.profile.timeouts.poll_interval_s), MAX_POLL_INTERVAL_S)
        return max(wanted, min(rate, MAX_POLL_INTERVAL_S), MIN_POLL_INTERVAL_S)


def result(case: CaseName, claim: str, verdict: Verdict, reason: str, *,
           measured: dict[str, Any] | None = None,
           evidence: Iterable[Answer | Exchange] = ()) -> CaseResult:
    exchanges = tuple(item.exchange if isinstance(item, Answer) else item for item in evidence)
    return CaseResult(case=case, claim=claim, verdict=verdict, reason=reason,
                      measured=measured or {}, evidence=exchanges)


def not_applicable(case: CaseName, claim: str, why: str) -> CaseResult:
    return result(case, claim, "UNVERIFIED", NOT_APPLICABLE + why)


def not_accepted(case: CaseName, claim: str, reading: SubmitReading,
                 evidence: Sequence[Answer]) -> CaseResult:
    """The case's synthetic submit was not accepted, so the claim was not tested."""
    return result(case, claim, "UNVERIFIED", f"the synthetic submit was not accepted "
                  f"({reading.detail}): the claim was not tested", evidence=evidence)


def applies(case: CaseResult) -> bool:
    return not (case.verdict == "UNVERIFIED" and case.reason.startswith(NOT_APPLICABLE))


def run_result(cases: Sequence[CaseResult]) -> Verdict:
    """FAIL when a case failed; PASS when every case that applies passed; else UNVERIFIED."""
    if any(case.verdict == "FAIL" for case in cases):
        return "FAIL"
    counted = [case for case in cases if applies(case)]
    return "PASS" if counted and all(case.verdict == "PASS" for case in counted) else "UNVERIFIED"
