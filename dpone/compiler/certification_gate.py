"""The maturity and certification an environment requires of a profile, checked offline.

An environment's ``certification`` policy (:class:`CertificationPolicy`) names the minimum
``maturity`` of the profiles its plans may use and the certification levels they need. A level
is met by a certification in the registry (``<registry>/certifications/**/*.json``, written by
`dpone profile certify`) of the *exact* profile contract, binding semantics and environment, at
that level or a higher one, whose result is PASS, that is younger than ``max_age_days`` and not
past its ``valid_until``. Anything else refuses the compilation before any HTTP, naming the
evidence that is missing (``certification.maturity_too_low``, ``certification.missing``,
``certification.stale``).

A production environment whose file states no policy gets :data:`PRODUCTION_DEFAULT`.

In such an environment the profile's mutation fence is trusted only as far as it was proven:
its claim (``certified_environments``) authorizes a same-key replay only when a valid
certification also PASSes the fence cases (key bound to the payload, key retention). In an
environment without a policy the claims stand as written for a replay inside the run that sent
the first attempt (development). Either way, the takeover of a lost run's submit replays the
key only with such a certification (not past its ``valid_until``): the plan then carries the
tested key retention (``fence.certified_retention_s``) the journal measures the first attempt's
age against; without one a lost submit stays UNKNOWN.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from dpone.compiler._located import located_error
from dpone.compiler._yaml import LoadedDocument
from dpone.contracts import DponeError
from dpone.contracts.certification import (
    FENCE_CASES,
    LEVEL_ORDER,
    MATURITY_ORDER,
    CertificationPolicy,
    Level,
    SinkCertification,
)
from dpone.contracts.profile import OperationProfile

CERTIFICATIONS_DIR = "certifications"
RETENTION_MEASURE = "retention_tested_s"
"""What the key retention case measured: the delay after which the same key was still held."""
PRODUCTION_DEFAULT = CertificationPolicy(minimum_maturity="production",
                                         required_levels=("vendor-live",), max_age_days=90)
"""The policy of a production environment whose file states none: production profiles only,
certified vendor-live within 90 days (the spec's production maturity)."""


def effective_policy(policy: CertificationPolicy | None,
                     tier: str) -> CertificationPolicy | None:
    """The environment's own policy, else :data:`PRODUCTION_DEFAULT` for a production tier."""
    if policy is not None:
        return policy
    return PRODUCTION_DEFAULT if tier == "production" else None


@dataclass(frozen=True, slots=True)
class FenceProof:
    """Whether the fence claim stands here, and for how long after a first attempt."""

    proven: bool
    retention_s: int | None = None


@dataclass(frozen=True, slots=True)
class Subject:
    """What a certification must name to count for a plan."""

    profile: OperationProfile
    profile_contract_digest: str
    binding: str
    binding_digest: str
    environment: str


def registry_certifications(registry: Path) -> Iterator[tuple[Path, SinkCertification]]:
    """Every readable certification under ``<registry>/certifications`` (others are skipped:
    a file that is not a certification proves nothing)."""
    root = registry / CERTIFICATIONS_DIR
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*.json")):
        try:
            yield path, SinkCertification.model_validate_json(path.read_bytes())
        except (OSError, ValueError, ValidationError):
            continue


def _matches(certification: SinkCertification, subject: Subject) -> bool:
    return (certification.profile == subject.profile.ref
            and certification.profile_contract_digest == subject.profile_contract_digest
            and certification.binding == subject.binding
            and certification.receiver_binding_semantics_digest == subject.binding_digest
            and certification.environment == subject.environment)


def _fresh(certification: SinkCertification, policy: CertificationPolicy,
           now: dt.datetime) -> bool:
    return (now <= certification.valid_until
            and now - certification.certified_at <= dt.timedelta(days=policy.max_age_days))


def _covers(certification: SinkCertification, level: Level) -> bool:
    return LEVEL_ORDER.index(certification.level) >= LEVEL_ORDER.index(level)


def _refusal(code: str, message: str, doc: LoadedDocument, hint: str,
             details: dict[str, object]) -> DponeError:
    error = located_error(code, message, doc, ("certification",), hint=hint)
    error.details.update(details)
    return error


def check_certification(subject: Subject, policy: CertificationPolicy | None, registry: Path,
                        pdoc: LoadedDocument, edoc: LoadedDocument,
                        now: dt.datetime | None = None) -> FenceProof:
    """Refuse a profile the environment's policy does not accept; return how far the profile's
    fence claim is proven here (without a policy the claim stands as written, bounded only by a
    valid certification that PASSes the fence cases)."""
    moment = now or dt.datetime.now(dt.UTC)
    if policy is None:
        found = [c for _, c in registry_certifications(registry) if _matches(c, subject)]
        proof = _fence_proof([c for c in found if moment <= c.valid_until])
        return FenceProof(True, proof.retention_s)
    profile = subject.profile
    if MATURITY_ORDER.index(profile.maturity) < MATURITY_ORDER.index(policy.minimum_maturity):
        raise located_error(
            "certification.maturity_too_low",
            f"profile {profile.ref} is {profile.maturity}; environment {subject.environment} "
            f"requires {policy.minimum_maturity} or more", pdoc, ("maturity",),
            hint=f"Certify the profile at the level its maturity needs and raise `maturity:`, "
                 f"or use a {policy.minimum_maturity} profile.")
    found = [c for _, c in registry_certifications(registry) if _matches(c, subject)]
    for level in policy.required_levels:
        passing = [c for c in found if _covers(c, level) and c.result == "PASS"]
        if any(_fresh(c, policy, moment) for c in passing):
            continue
        details = {"profile": profile.ref, "profile_contract_digest":
                   subject.profile_contract_digest, "binding": subject.binding,
                   "receiver_binding_semantics_digest": subject.binding_digest,
                   "environment": subject.environment, "level": level,
                   "max_age_days": policy.max_age_days}
        command = (f"dpone profile certify {profile.ref} --binding {subject.binding} "
                   f"--environment {subject.environment} --level {level}")
        if passing:
            newest = max(c.certified_at for c in passing)
            raise _refusal("certification.stale",
                           f"the newest {level} certification of {profile.ref} through "
                           f"{subject.binding} in {subject.environment} is from "
                           f"{newest.date().isoformat()}: older than {policy.max_age_days} "
                           "day(s) or past its validity", edoc,
                           f"Certify again: `{command}`.", details)
        failed = [c for c in found if _covers(c, level) and c.result == "FAIL"]
        why = (" (its certification FAILED: " + ", ".join(
            r.case for r in failed[-1].cases if r.verdict == "FAIL") + ")") if failed else ""
        raise _refusal("certification.missing",
                       f"environment {subject.environment} requires a {level} certification of "
                       f"{profile.ref} (contract {subject.profile_contract_digest[:19]}…) "
                       f"through binding {subject.binding}, and the registry holds no passing "
                       f"one{why}", edoc,
                       f"Run `{command}` against the receiver's sandbox and keep the artifact "
                       f"under {CERTIFICATIONS_DIR}/.", details)
    return _fence_proof([c for c in found if _fresh(c, policy, moment)])


def _fence_proof(valid: list[SinkCertification]) -> FenceProof:
    """The fence claim as far as ``valid`` certifications PASS its cases, with the longest
    key retention one of them tested."""
    proofs = [c for c in valid if all(c.verdict(case) == "PASS" for case in FENCE_CASES)]
    retained = [c.measured("key_retention", RETENTION_MEASURE) for c in proofs]
    tested = [int(value) for value in retained if isinstance(value, int | float)]
    return FenceProof(bool(proofs), max(tested) if tested else 0 if proofs else None)
