"""A profile's certification results at the catalog's as-of date: per environment and level,
the result, each case's verdict, when it was certified, its age, whether it is stale, and
whether it still counts for a plan compiled now.

The reference instant is the end of the as-of date (UTC), never the clock, so a committed
catalog renders the same on every later day until it is rebuilt with a new ``--as-of``. An age
is in calendar days from the day it was certified to the as-of date. A certification is stale
past its ``valid_until``, or when it is older than its environment's
``certification.max_age_days`` (both judged at the end of the day, as the compiler's
certification gate would judge them at that instant); it counts only when it PASSed, is not
stale, and names this exact profile contract and the binding's current semantics.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

from dpone.compiler.catalog._blocks import (
    Block,
    Code,
    Heading,
    Paragraph,
    Strong,
    Text,
    codes,
    row,
    table,
    text,
)
from dpone.compiler.catalog._inventory import CertificationEntry, Inventory, ProfileEntry
from dpone.contracts.certification import LEVEL_ORDER, CaseResult, SinkCertification


def reference_instant(as_of: dt.date) -> dt.datetime:
    """The end of the as-of date: the first instant of the next day, UTC."""
    return dt.datetime(as_of.year, as_of.month, as_of.day, tzinfo=dt.UTC) + dt.timedelta(days=1)


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)


def timestamp(moment: dt.datetime) -> str:
    return _utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Standing:
    """One certification judged at the as-of instant."""

    entry: CertificationEntry
    age_days: int
    """Calendar days from the day of ``certified_at`` to the as-of date (negative: after it)."""
    elapsed: dt.timedelta
    """From ``certified_at`` to the end of the as-of date."""
    expired: bool
    max_age_days: int | None
    """The environment's ``certification.max_age_days`` (None: the environment has no policy)."""
    contract_matches: bool
    binding_matches: bool | None
    """None: the certification names a binding the registry does not hold."""

    @property
    def too_old(self) -> bool:
        """Past the environment's ``max_age_days``, as the certification gate counts it."""
        return self.max_age_days is not None and self.elapsed > dt.timedelta(days=self.max_age_days)

    @property
    def stale(self) -> bool:
        return self.expired or self.too_old

    @property
    def counts(self) -> bool:
        return (self.entry.certification.result == "PASS" and not self.stale
                and self.contract_matches and self.binding_matches is True)

    def reasons(self) -> list[str]:
        """Why it does not count (empty when it does)."""
        found = []
        if self.entry.certification.result != "PASS":
            found.append(f"result {self.entry.certification.result}")
        if self.expired:
            found.append("stale: past valid_until")
        if self.too_old:
            found.append(f"stale: older than {self.max_age_days} day(s), the environment's "
                         "max_age_days")
        if not self.contract_matches:
            found.append("certifies another profile contract")
        if self.binding_matches is None:
            found.append("binding not in the registry")
        elif not self.binding_matches:
            found.append("the binding's semantics changed since")
        return found


def judge(entry: CertificationEntry, profile: ProfileEntry, inventory: Inventory,
          as_of: dt.date) -> Standing:
    certification = entry.certification
    now = reference_instant(as_of)
    policy = inventory.policies.get(certification.environment)
    binding = inventory.binding_digests.get(certification.binding)
    certified_at = _utc(certification.certified_at)
    return Standing(
        entry=entry,
        age_days=(as_of - certified_at.date()).days,
        elapsed=now - certified_at,
        expired=now > _utc(certification.valid_until),
        max_age_days=policy.max_age_days if policy is not None else None,
        contract_matches=certification.profile_contract_digest == profile.contract_digest,
        binding_matches=None if binding is None
        else binding == certification.receiver_binding_semantics_digest)


def standings(profile: ProfileEntry, inventory: Inventory, as_of: dt.date) -> list[Standing]:
    """The profile's certifications, by environment, level, newest first."""
    judged = [judge(entry, profile, inventory, as_of)
              for entry in inventory.certifications_of(profile.profile.ref)]
    return sorted(judged, key=lambda s: (
        s.entry.certification.environment, LEVEL_ORDER.index(s.entry.certification.level),
        -_utc(s.entry.certification.certified_at).timestamp(), s.entry.digest))


def _age(standing: Standing) -> str:
    if standing.age_days < 0:
        return "certified after the as-of date"
    return str(standing.age_days)


def _standing_text(standing: Standing) -> Text:
    reasons = standing.reasons()
    if not reasons:
        return (Strong("counts"),)
    return ("does not count: " + "; ".join(reasons),)


def _measured(case: CaseResult) -> Text:
    return codes((f"{name}={json.dumps(value, sort_keys=True, ensure_ascii=False)}"
                  for name, value in sorted(case.measured.items())), empty="—")


def _cases(certification: SinkCertification) -> Block:
    return table(("case", "verdict", "claim", "reason", "measured", "exchanges"),
                 (row(Code(case.case), Strong(case.verdict), case.claim, case.reason,
                      _measured(case), str(len(case.evidence)))
                  for case in certification.cases))


def _detail(standing: Standing) -> list[Block]:
    certification = standing.entry.certification
    title = (f"{certification.environment} · {certification.level} · "
             f"{timestamp(certification.certified_at)} · {certification.result}")
    return [
        Heading(3, (title,)),
        Paragraph(text(
            "Through binding ", Code(certification.binding), " into sandbox resource ",
            Code(certification.sandbox_resource), ", by dpone ", Code(certification.product_version),
            "; valid until ", timestamp(certification.valid_until), ". Profile contract ",
            Code(certification.profile_contract_digest), ", binding semantics ",
            Code(certification.receiver_binding_semantics_digest), ". Artifact ",
            Code(standing.entry.digest), " (", Code(standing.entry.file), ").")),
        _cases(certification),
    ]


def certification_section(profile: ProfileEntry, inventory: Inventory,
                          as_of: dt.date) -> list[Block]:
    """The "Certification" section of a profile page."""
    judged = standings(profile, inventory, as_of)
    blocks: list[Block] = [Heading(2, ("Certification",)), Paragraph(text(
        "Judged at the end of ", as_of.isoformat(), " (UTC), the catalog's as-of date; ages "
        "are in days since the day of certification. A certification "
        "counts for a plan when its result is PASS, it is not past ", Code("valid_until"),
        " nor older than its environment's ", Code("certification.max_age_days"), ", and it "
        "certifies this exact profile contract through the binding as it is now. A case "
        "skipped or not applicable is UNVERIFIED, never PASS."))]
    if not judged:
        blocks.append(Paragraph(text(
            "No certification of ", Code(profile.profile.ref), " is in the registry (",
            Code("certifications/"), "): nothing here proves its claims beyond the static "
            "checks. ", Code("dpone profile certify"), " writes one.")))
        return blocks
    blocks.append(table(
        ("environment", "level", "binding", "result", "certified at", "age (days)",
         "valid until", "standing", "artifact"),
        (row(Code(c.environment), c.level, Code(c.binding), Strong(c.result),
             timestamp(c.certified_at), _age(s), timestamp(c.valid_until), _standing_text(s),
             Code(s.entry.digest))
         for s in judged for c in (s.entry.certification,))))
    for standing in judged:
        blocks += _detail(standing)
    return blocks


def summary(profile: ProfileEntry, inventory: Inventory, as_of: dt.date) -> str:
    """One line for the index: how many certifications, how many count, how many are stale."""
    judged = standings(profile, inventory, as_of)
    if not judged:
        return "none"
    counting = sum(1 for s in judged if s.counts)
    stale = sum(1 for s in judged if s.stale)
    failed = sum(1 for s in judged if s.entry.certification.result == "FAIL")
    parts = [f"{len(judged)} in registry", f"{counting} counting"]
    parts += [f"{stale} stale"] if stale else []
    parts += [f"{failed} FAIL"] if failed else []
    return ", ".join(parts)
