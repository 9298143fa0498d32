"""Run every case against one receiver and write the ``dpone.rest_sink_certification.v1``.

:func:`certify` runs the static case, then (at ``local-live`` and ``vendor-live``) the live
cases against the receiver through the transport it is given, each with fresh random keys, in
the order that keeps the long waits last; ``clock_skew`` judges the answers the others got.
At level ``static`` nothing is sent: the transport is never touched. The certification is
bound to the profile contract, the operation semantics, the binding's semantics, the
environment, the level and the product version; it is valid for :data:`VALIDITY`, and never
past the binding's remote identity attestation. Its content address is the digest of its
canonical JSON (:func:`canonical_document`, :func:`artifact_key`).
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Final

from dpone import __version__
from dpone.compiler.certification_gate import CERTIFICATIONS_DIR
from dpone.compiler.certification_subject import CertificationSubject
from dpone.contracts import canonical_json, content_digest
from dpone.contracts.certification import (
    CASES,
    CERTIFICATION_KEY_PREFIX,
    CaseName,
    CaseResult,
    Level,
    SinkCertification,
)
from dpone.contracts.ports import Clock, RestTransportPort
from dpone.contracts.transport import OutboundRequest, TransportOutcome
from dpone.executor.certify._key_cases import (
    concurrent_duplicates,
    key_payload_binding,
    key_retention,
)
from dpone.executor.certify._probe import Probe
from dpone.executor.certify._receipt_cases import query_consistency, receipt_ttl
from dpone.executor.certify._static import static_profile
from dpone.executor.certify._synthetic import RequestFactory
from dpone.executor.certify._timing_cases import clock_skew, operation_duration
from dpone.executor.certify._verdicts import CaseContext, Options, run_result
from dpone.executor.clock import SystemClock

VALIDITY: Final = dt.timedelta(days=365)
"""How long a certification stays valid (an environment's max_age_days may accept less)."""
LIVE_ORDER: Final[tuple[tuple[CaseName, Callable[[CaseContext], CaseResult]], ...]] = (
    ("key_payload_binding", key_payload_binding),
    ("concurrent_duplicates", concurrent_duplicates),
    ("query_consistency", query_consistency),
    ("key_retention", key_retention),
    ("operation_duration", operation_duration),
    ("receipt_ttl", receipt_ttl),
    ("clock_skew", clock_skew),
)
"""The live cases in the order they run: quick ones first, the waits last, the skew on all."""


class NoNetwork:
    """The transport of level static: it refuses to send."""

    def send(self, request: OutboundRequest) -> TransportOutcome:
        raise RuntimeError(f"level static sends no request ({request.method} {request.path})")

    def close(self) -> None:
        return None


def certify(subject: CertificationSubject, level: Level, transport: RestTransportPort | None,
            *, options: Options | None = None, clock: Clock | None = None,
            redact: tuple[str, ...] = (),
            progress: Callable[[CaseResult], None] | None = None) -> SinkCertification:
    """The certification of ``subject``'s profile through its binding at ``level``.

    ``transport`` is the binding's (None only at level static); ``redact`` are values no
    evidence may show (the credential's); ``progress`` is told each case as it ends."""
    if level != "static" and transport is None:
        raise ValueError(f"level {level} needs the binding's transport")
    clock = clock or SystemClock()
    certified_at = clock.now().replace(microsecond=0)
    marker = f"dpone-certification-{secrets.token_hex(6)}"
    probe = Probe(transport or NoNetwork(), clock, redact=(*redact, marker))
    context = CaseContext(
        profile=subject.profile, probe=probe, clock=clock, options=options or Options(),
        factory=RequestFactory(subject.profile, subject.scope.resource, marker,
                               certified_at.date()),
        live=level != "static")
    done = [static_profile(subject.profile, subject.profile_contract_digest)]
    if progress is not None:
        progress(done[0])
    for _name, case in LIVE_ORDER:
        done.append(case(context))
        if progress is not None:
            progress(done[-1])
    cases = tuple(sorted(done, key=lambda item: CASES.index(item.case)))
    identity_until = subject.binding.remote_identity.valid_until
    return SinkCertification(
        profile=subject.profile.ref, profile_contract_digest=subject.profile_contract_digest,
        operation_semantics_digest=subject.operation_semantics_digest,
        binding=subject.binding.id, receiver_binding_semantics_digest=subject.binding_digest,
        environment=subject.environment.id, level=level, product_version=__version__,
        certified_at=certified_at, valid_until=min(certified_at + VALIDITY, identity_until),
        sandbox_resource=subject.scope.resource, cases=cases, result=run_result(cases))


def canonical_document(certification: SinkCertification) -> bytes:
    """The certification's canonical JSON: what its content address is the digest of."""
    return canonical_json(certification.model_dump(mode="json", by_alias=True))


def artifact_key(canonical: bytes) -> str:
    """``certifications/sha256/<hex of the canonical JSON's digest>.json``."""
    return f"{CERTIFICATION_KEY_PREFIX}{content_digest(canonical).removeprefix('sha256:')}.json"


def registry_file(directory: Path, certification: SinkCertification) -> Path:
    """Where the registry keeps the newest certification of one profile, environment and
    level: ``<directory>/<profile id>@<version>/<environment>/<level>.json``."""
    return directory / certification.profile / certification.environment / (
        f"{certification.level}.json")


def registry_directory(registry: Path) -> Path:
    """``<registry>/certifications``: what the compile gate reads."""
    return registry / CERTIFICATIONS_DIR
