"""Certification of a receiver that is not the mock: a small independent HTTP server (standard
library only) behind its own profile, ``acme.ingest@1``: a sync JSON-array batch whose fence is
an ``Idempotency-Key`` header, created ``201``, a repeated key ``409`` naming the first ingest.
Honest, it certifies PASS; made to contradict some of the profile's claims, exactly those
claims FAIL and the others still PASS."""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from support.certify import certify, verdicts, written
from support.cli import TOKEN, Dpone, bind_registry

PROFILE = "acme.ingest@1"
PROFILE_YAML = """\
schema: dpone.operation_profile.v1
id: acme.ingest
version: 1
protocol_family: sync_batch
supported_mutations: [incremental_append]
request:
  method: POST
  path: /v2/ingest/{resource}
  headers:
    Idempotency-Key: "{receiver_mutation_key}"
  media_type: application/json
  body:
    type: single
    payload: {format: json_array, compression: none, content_type: application/json}
acknowledgement:
  accepted_statuses: [201]
  rejected_before_effect_statuses: [401]
  receipt:
    id: {body_json_pointer: /ingest_id}
  duplicate:
    statuses: [409]
    same_key_receipt:
      id: {body_json_pointer: /ingest_id}
verification:
  counters_from: submit_response
  accepted_rows: {body_json_pointer: /accepted, type: integer}
mutation_fence:
  type: idempotency_key_header
  location: header
  value_from: receiver_mutation_key
  header_name: Idempotency-Key
  key_payload_binding: required
  certified_environments: [local-dev]
effect_conflict_group: acme.ingest
limits:
  max_rows: 1000
  max_decoded_bytes: 1000000
  planning_decoded_bytes: 900000
  max_wire_bytes: 1000000
  planning_wire_bytes: 900000
  preferred_window_days: {default: 1, min: 1, max: 7}
timeouts: {request_total_s: 30}
retry:
  submit: {max_attempts: 3}
  observation: {max_attempts: 1}
"""


@dataclass
class Behaviour:
    """How the independent receiver treats a key (the honest defaults keep every claim)."""

    retain_s: float | None = None
    binds_payload: bool = True
    date_offset_s: float = 0.0
    keys: dict[str, tuple[str, str, float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ingests: int = 0


class _Handler(BaseHTTPRequestHandler):
    behaviour: Behaviour

    def log_message(self, format: str, *args: object) -> None:
        del format, args

    def date_time_string(self, timestamp: float | None = None) -> str:
        moment = (timestamp or time.time()) + self.behaviour.date_offset_s
        return email.utils.formatdate(moment, usegmt=True)

    def _answer(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        payload = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self._answer(401, {"error": "unauthorized"})
            return
        key = self.headers.get("Idempotency-Key", "")
        if not self.path.startswith("/v2/ingest/") or not key:
            self._answer(400, {"error": "bad request"})
            return
        rows = json.loads(payload)
        digest = hashlib.sha256(payload).hexdigest()
        behaviour = self.behaviour
        with behaviour.lock:
            known = behaviour.keys.get(key)
            now = time.monotonic()
            if known is not None and behaviour.retain_s is not None \
                    and now - known[2] >= behaviour.retain_s:
                known = None
            if known is not None and known[1] == digest:
                self._answer(409, {"ingest_id": known[0]})
                return
            if known is not None and behaviour.binds_payload:
                self._answer(422, {"error": "the key was used with another payload"})
                return
            behaviour.ingests += 1
            ingest = f"ing-{behaviour.ingests}"
            behaviour.keys[key] = (ingest, digest, now)
        self._answer(201, {"ingest_id": ingest, "accepted": len(rows)})


@contextlib.contextmanager
def independent_receiver(behaviour: Behaviour) -> Iterator[str]:
    handler = type("Handler", (_Handler,), {"behaviour": behaviour})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _registry(tmp_path: Path, authority: str) -> Dpone:
    dpone = Dpone(bind_registry(tmp_path, authority), tmp_path / "state")
    (dpone.registry / "profiles" / f"{PROFILE}.yaml").write_text(PROFILE_YAML, "utf-8")
    return dpone


def test_an_honest_independent_receiver_certifies_pass(tmp_path: Path) -> None:
    with independent_receiver(Behaviour()) as authority:
        dpone = _registry(tmp_path, authority)
        run = certify(dpone, PROFILE, "local-live", "--retention-delay", "1.2")

    assert run.code == 0, run.out + run.err
    certification = written(dpone, PROFILE)
    assert certification.result == "PASS"
    assert {case: v for case, v in verdicts(certification).items() if v == "PASS"}.keys() == {
        "static_profile", "key_retention", "key_payload_binding", "concurrent_duplicates",
        "operation_duration", "clock_skew"}
    assert certification.measured("key_retention", "retention_tested_s") == 1


def test_exactly_the_claims_the_independent_receiver_contradicts_fail(tmp_path: Path) -> None:
    lying = Behaviour(retain_s=0.5, date_offset_s=3600)
    with independent_receiver(lying) as authority:
        dpone = _registry(tmp_path, authority)
        run = certify(dpone, PROFILE, "local-live", "--retention-delay", "1.2")

    assert run.code == 1, run.out + run.err
    certification = written(dpone, PROFILE)
    failed = sorted(case for case, v in verdicts(certification).items() if v == "FAIL")
    assert failed == ["clock_skew", "key_retention"]
    assert {case: v for case, v in verdicts(certification).items() if v == "PASS"}.keys() == {
        "static_profile", "key_payload_binding", "concurrent_duplicates", "operation_duration"}
    assert "ahead of UTC" in next(c.reason for c in certification.cases
                                  if c.case == "clock_skew")
    assert "  key_retention: mutation_fence.type: idempotency_key_header" in run.out
    assert "  clock_skew: skew margin (default, the profile names none): 60" in run.out


def test_a_receiver_that_does_not_bind_the_key_to_the_payload_fails_that_claim(
        tmp_path: Path) -> None:
    with independent_receiver(Behaviour(binds_payload=False)) as authority:
        dpone = _registry(tmp_path, authority)
        run = certify(dpone, PROFILE, "local-live", "--retention-delay", "0.2")

    assert run.code == 1, run.out + run.err
    failed = [case for case, v in verdicts(written(dpone, PROFILE)).items() if v == "FAIL"]
    assert failed == ["key_payload_binding"]
