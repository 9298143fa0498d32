"""Receiver certification: what a live receiver was proven to do, and what an environment requires.

A profile *claims* how its receiver behaves (a duplicate key is refused and names the first
job, the key is bound to the payload, a receipt lives ``receipt_ttl_s``...). `dpone profile
certify` tests each claim against a receiver inside the sandbox scope the binding allows and
writes one content-addressed ``dpone.rest_sink_certification.v1`` artifact: every case PASS,
FAIL or UNVERIFIED (skipped or not applicable: never PASS), bound to the exact profile contract,
binding semantics, environment and product version. An environment's
:class:`CertificationPolicy` states the minimum maturity and the certification levels its plans
need; :class:`RuntimeFeatures` is its kill switch.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Final, Literal

from pydantic import Field

from dpone.contracts._base import Digest, Name, StrictModel

CERTIFICATION_SCHEMA_ID: Final = "dpone.rest_sink_certification.v1"
CERTIFICATION_KEY_PREFIX: Final = "certifications/sha256/"
"""Where certifications live in an artifact store, by content digest."""

Maturity = Literal["experimental", "beta", "production"]
MATURITY_ORDER: Final[tuple[Maturity, ...]] = ("experimental", "beta", "production")
Level = Literal["static", "local-live", "vendor-live"]
LEVEL_ORDER: Final[tuple[Level, ...]] = ("static", "local-live", "vendor-live")
Verdict = Literal["PASS", "FAIL", "UNVERIFIED"]

CaseName = Literal[
    "static_profile",
    "key_retention",
    "key_payload_binding",
    "concurrent_duplicates",
    "receipt_ttl",
    "query_consistency",
    "operation_duration",
    "clock_skew",
]
CASES: Final[tuple[CaseName, ...]] = (
    "static_profile", "key_retention", "key_payload_binding", "concurrent_duplicates",
    "receipt_ttl", "query_consistency", "operation_duration", "clock_skew")
FENCE_CASES: Final[tuple[CaseName, ...]] = ("key_payload_binding", "key_retention")
"""The cases whose PASS lets a same-key replay or a duplicate-key answer be trusted."""


class Exchange(StrictModel):
    """One request a case sent and the answer it got, redacted: no credential, no payload rows,
    at most :data:`EXCERPT_CHARS` characters of the answer's body."""

    method: str
    path: str
    request_body_digest: Digest | None = None
    status: int | None
    """None: no answer (the connection failed or timed out)."""
    answer_excerpt: Annotated[str, Field(max_length=512)] = ""
    date_header: str | None = None
    elapsed_ms: Annotated[int, Field(ge=0)]


EXCERPT_CHARS: Final = 512


class CaseResult(StrictModel):
    case: CaseName
    claim: str
    """The profile claim the case tests, as the profile states it."""
    verdict: Verdict
    reason: str
    measured: dict[str, Any] = {}
    """What the case measured (e.g. ``retention_tested_s``, ``skew_s``)."""
    evidence: tuple[Exchange, ...] = ()


class SinkCertification(StrictModel):
    """``dpone.rest_sink_certification.v1``: one certification run's result and evidence."""

    schema_id: Literal["dpone.rest_sink_certification.v1"] = Field(
        default=CERTIFICATION_SCHEMA_ID, alias="schema")
    profile: str
    """``id@version``."""
    profile_contract_digest: Digest
    operation_semantics_digest: Digest
    binding: Name
    receiver_binding_semantics_digest: Digest
    environment: Name
    level: Level
    product_version: str
    certified_at: dt.datetime
    valid_until: dt.datetime
    sandbox_resource: Name
    """The resource every live case wrote to (the binding's certification scope)."""
    cases: tuple[CaseResult, ...]
    result: Verdict
    """FAIL when a case failed; PASS when every case that applies passed; else UNVERIFIED."""

    def verdict(self, case: CaseName) -> Verdict:
        """The case's verdict (UNVERIFIED when it was not run)."""
        return next((c.verdict for c in self.cases if c.case == case), "UNVERIFIED")

    def measured(self, case: CaseName, name: str) -> Any:
        return next((c.measured.get(name) for c in self.cases if c.case == case), None)


class CertificationPolicy(StrictModel):
    """What an environment requires of the profiles its plans use (checked by `dpone check`,
    `dpone plan` and every command that compiles, before any HTTP)."""

    minimum_maturity: Maturity = "experimental"
    required_levels: tuple[Level, ...] = ()
    """Each level needs a certification of the exact profile contract, binding and environment
    whose result is PASS and that is not older than ``max_age_days``."""
    max_age_days: Annotated[int, Field(ge=1, le=3650)] = 90


class RuntimeFeatures(StrictModel):
    rest_bulk_delivery_v1: bool = False
    """The kill switch: False stops the admission of new deliveries (``runtime.feature_disabled``);
    observation, reconcile, resume of admitted work, checkpoints, retention and inspection go
    on."""


class Runtime(StrictModel):
    features: RuntimeFeatures = RuntimeFeatures()


class CertificationScope(StrictModel):
    """The sandbox a binding lets `dpone profile certify` write to: its requests use only this
    resource (never a production one) and synthetic rows."""

    resource: Name
    levels: Annotated[tuple[Level, ...], Field(min_length=1)] = ("static", "local-live")
