"""The pure parts of the certification: verdict rules, the synthetic requests, answer readings,
evidence redaction, and the cases against an in-memory receiver on a fake clock (so a job's
duration and a receipt's age are exact)."""

from __future__ import annotations

import datetime as dt
import email.utils
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from dpone.compiler.profile_lookup import load_profile
from dpone.contracts.certification import CaseResult
from dpone.contracts.profile import OperationProfile
from dpone.contracts.transport import OutboundRequest, Response, TransportOutcome
from dpone.executor.certify import NOT_APPLICABLE, Options, applies, run_result
from dpone.executor.certify._answers import read_submit
from dpone.executor.certify._key_cases import key_payload_binding, key_retention
from dpone.executor.certify._probe import REDACTED, Probe
from dpone.executor.certify._receipt_cases import receipt_ttl
from dpone.executor.certify._static import contradictions
from dpone.executor.certify._synthetic import RequestFactory, fresh_keys
from dpone.executor.certify._timing_cases import _pause, clock_skew, operation_duration
from dpone.executor.certify._verdicts import CaseContext
from support.common import EXAMPLES

START = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


def _profile(ref: str = "mock.dataset-jobs@1", **timeouts: int) -> OperationProfile:
    profile = load_profile(EXAMPLES, ref)
    if not timeouts:
        return profile
    return profile.model_copy(update={"timeouts": profile.timeouts.model_copy(update=timeouts)})


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def monotonic(self) -> float:
        return self.t

    def now(self) -> dt.datetime:
        return START + dt.timedelta(seconds=self.t)

    def sleep(self, seconds: float) -> None:
        self.t += max(0.0, seconds)


@dataclass
class JobsReceiver:
    """An in-memory dataset-jobs receiver on the fake clock: a job runs ``duration`` seconds,
    its receipt answers 410 after ``receipt_ttl`` seconds, a key is kept ``retain`` seconds."""

    clock: FakeClock
    duration: float = 0.5
    receipt_ttl: float | None = None
    retain: float | None = None
    date_offset_s: float = 0.0
    jobs: dict[str, tuple[float, str]] = field(default_factory=dict)
    keys: dict[str, tuple[str, float]] = field(default_factory=dict)

    def send(self, request: OutboundRequest) -> TransportOutcome:
        self.clock.t += 0.001  # every exchange takes a millisecond
        now = self.clock.t
        if request.method == "POST":
            body = b"".join(request.body)
            name = body.split(b'filename="', 1)[1].split(b'"', 1)[0].decode()
            known = self.keys.get(name)
            if known is not None and (self.retain is None or now - known[1] < self.retain):
                return self._json(409, {"job_id": known[0], "filename": name})
            job = f"job-{len(self.jobs) + 1}"
            self.jobs[job] = (now, name)
            self.keys[name] = (job, now)
            return self._json(202, {"job_id": job})
        job = request.path.rsplit("/", 1)[1]
        created, name = self.jobs[job]
        if self.receipt_ttl is not None and now - created >= self.receipt_ttl:
            return self._json(410, {"error": "expired"})
        phase = "complete" if now - created >= self.duration else "running"
        return self._json(200, {"job_id": job, "filename": name, "phase": phase,
                                "rows_accepted": 3, "rows_rejected": 0})

    def _json(self, status: int, body: dict[str, object]) -> Response:
        moment = START.timestamp() + self.clock.t + self.date_offset_s
        return Response(status=status, body=json.dumps(body).encode(),
                        headers={"date": email.utils.formatdate(moment, usegmt=True)})

    def close(self) -> None:
        return None


def _context(profile: OperationProfile, receiver: JobsReceiver, clock: FakeClock,
             **options: float) -> CaseContext:
    return CaseContext(profile=profile, probe=Probe(receiver, clock), clock=clock,
                       options=Options(**options),  # type: ignore[arg-type]
                       factory=RequestFactory(profile, "sandbox", "marker-1", START.date()))


def _run(case: Callable[[CaseContext], CaseResult], profile: OperationProfile,
         **receiver: float | None) -> CaseResult:
    clock = FakeClock()
    return case(_context(profile, JobsReceiver(clock, **receiver), clock, max_wait_s=30))


# -- verdict rules --------------------------------------------------------------------------

def _case(verdict: str, reason: str = "r") -> CaseResult:
    return CaseResult(case="clock_skew", claim="c", verdict=verdict,  # type: ignore[arg-type]
                      reason=reason)


@pytest.mark.parametrize(("verdicts", "expected"), [
    (["PASS", "PASS"], "PASS"),
    (["PASS", "FAIL", "UNVERIFIED"], "FAIL"),
    (["PASS", "UNVERIFIED"], "UNVERIFIED"),
    (["PASS", "N/A"], "PASS"),
])
def test_the_run_result_counts_only_the_cases_that_apply(verdicts: list[str],
                                                         expected: str) -> None:
    cases = [_case("UNVERIFIED", NOT_APPLICABLE + "no claim") if v == "N/A" else _case(v)
             for v in verdicts]
    assert run_result(cases) == expected
    assert not applies(_case("UNVERIFIED", NOT_APPLICABLE + "x"))
    assert applies(_case("UNVERIFIED", "max-wait"))


# -- synthetic requests ----------------------------------------------------------------------

def test_a_synthetic_submit_carries_its_key_where_the_fence_says_and_variants_change_bytes(
        ) -> None:
    factory = RequestFactory(_profile(), "sandbox", "marker-1", START.date())
    keys = fresh_keys()
    first, again, other = (factory.submit(keys), factory.submit(keys),
                           factory.submit(keys, variant=1))
    assert first.filename == keys.receiver_mutation_key.removeprefix("sha256:") + ".csv.gz"
    assert f'filename="{first.filename}"'.encode() in b"".join(first.request.body)
    assert first.request.content_type is not None
    assert first.request.content_type.startswith("multipart/form-data; boundary=dpone-")
    assert first.body_digest == again.body_digest != other.body_digest
    assert first.body_digest == "sha256:" + hashlib.sha256(
        b"".join(first.request.body)).hexdigest()
    assert first.request.content_length == len(b"".join(first.request.body))
    assert first.keys != fresh_keys()

    sync = RequestFactory(_profile("mock.batch-ndjson@1"), "sandbox", "marker-1", START.date())
    batch = sync.submit(keys)
    assert batch.request.path == "/mock/v1/batches/sandbox"
    assert batch.request.headers == (("X-Delivery-Key", keys.delivery_key),)
    rows = [json.loads(line) for line in b"".join(batch.request.body).splitlines()]
    assert [row["row"] for row in rows] == [1, 2, 3]
    assert {row["certification_run"] for row in rows} == {"marker-1"}


# -- readings and evidence -------------------------------------------------------------------

def test_submit_answers_are_read_as_the_profile_classifies_them() -> None:
    profile, clock = _profile(), FakeClock()

    def reading(status: int, body: dict[str, object]) -> str:
        class One:
            def send(self, request: OutboundRequest) -> TransportOutcome:
                return Response(status=status, headers={}, body=json.dumps(body).encode())

            def close(self) -> None:
                return None

        answer = Probe(One(), clock).send(OutboundRequest(method="POST", path="/x"))
        return read_submit(profile, answer).kind

    assert reading(202, {"job_id": "j"}) == "accepted"
    assert reading(202, {}) == "unreadable"
    assert reading(409, {"job_id": "j"}) == "duplicate"
    assert reading(429, {}) == "throttled"
    assert reading(422, {}) == "refused"
    assert reading(501, {}) == "unclassified"


def test_evidence_never_shows_the_credential_or_the_row_marker_and_is_bounded() -> None:
    class Echo:
        def send(self, request: OutboundRequest) -> TransportOutcome:
            return Response(status=400, headers={"date": "Tue, 01 Dec 2026 12:00:00 GMT"},
                            body=("you sent tok-SECRET-1 and marker-1; " * 40).encode())

        def close(self) -> None:
            return None

    probe = Probe(Echo(), FakeClock(), redact=("tok-SECRET-1", "marker-1"))
    exchange = probe.send(OutboundRequest(method="POST", path="/x"), "sha256:" + "a" * 64).exchange
    assert "tok-SECRET-1" not in exchange.answer_excerpt
    assert "marker-1" not in exchange.answer_excerpt
    assert REDACTED in exchange.answer_excerpt
    assert len(exchange.answer_excerpt) == 512
    assert exchange.date_header == "Tue, 01 Dec 2026 12:00:00 GMT"
    assert exchange.request_body_digest == "sha256:" + "a" * 64


def test_static_contradictions_are_named() -> None:
    profile = _profile(receipt_ttl_s=1, poll_interval_s=5)
    assert contradictions(_profile()) == []
    assert contradictions(profile) == [
        "a receipt expires after 1 s, before its first poll (poll_interval_s 5)"]


# -- cases on the fake clock -----------------------------------------------------------------

def test_a_job_that_ends_within_the_claim_passes_and_one_that_runs_past_it_fails() -> None:
    ended = _run(operation_duration, _profile(operation_total_s=2), duration=1.5)
    assert ended.verdict == "PASS", ended.reason
    late = _run(operation_duration, _profile(operation_total_s=1), duration=3.0)
    assert late.verdict == "FAIL", late.reason
    assert re.search(r"still running after 1\.\d s; the profile claims at most 1 s", late.reason)
    unseen = _run(operation_duration, _profile(operation_total_s=7200), duration=100.0)
    assert unseen.verdict == "UNVERIFIED"
    assert "--max-wait 30 s" in unseen.reason


def test_a_poll_is_placed_just_before_and_just_after_the_claimed_limit() -> None:
    assert _pause(0.0, 0.0, 10, 1.0, 0.05) == 1.0
    assert _pause(9.5, 9.49, 10, 1.0, 0.05) == pytest.approx(0.45)
    assert _pause(9.96, 9.95, 10, 1.0, 0.05) == pytest.approx(0.1)
    assert _pause(10.2, 10.1, 10, 1.0, 0.05) == 1.0


def test_receipt_ttl_passes_on_the_expiry_answer_and_fails_an_early_expiry() -> None:
    kept = _run(receipt_ttl, _profile(receipt_ttl_s=3), receipt_ttl=3.0)
    assert kept.verdict == "PASS", kept.reason
    early = _run(receipt_ttl, _profile(receipt_ttl_s=5), receipt_ttl=2.0)
    assert early.verdict == "FAIL", early.reason
    never = _run(receipt_ttl, _profile(receipt_ttl_s=3))
    assert never.verdict == "UNVERIFIED"
    assert "not observed within --max-wait" in never.reason


def test_key_retention_measures_the_delay_the_key_was_proven_held() -> None:
    clock = FakeClock()
    held = key_retention(_context(_profile(), JobsReceiver(clock), clock, retention_delay_s=5))
    assert held.verdict == "PASS"
    assert held.measured["retention_tested_s"] == 5  # from the first answer to the resubmit
    forgot = _run(key_retention, _profile(), retain=1.0)
    assert forgot.verdict == "FAIL"
    assert "retention_tested_s" not in forgot.measured
    bound = _run(key_payload_binding, _profile())
    assert bound.verdict == "PASS"  # the same filename is a duplicate, whatever the bytes


def test_clock_skew_reads_every_date_of_the_run() -> None:
    clock = FakeClock()
    for offset, verdict in ((0.0, "PASS"), (300.0, "FAIL")):
        context = _context(_profile(), JobsReceiver(clock, date_offset_s=offset), clock)
        key_payload_binding(context)
        judged = clock_skew(context)
        assert judged.verdict == verdict, judged.reason
    nothing = clock_skew(_context(_profile(), JobsReceiver(clock), clock))
    assert nothing.verdict == "UNVERIFIED"
