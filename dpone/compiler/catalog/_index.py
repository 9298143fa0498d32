"""The catalog's index: every profile in one table, the source/sink matrix, and what each
maturity means."""

from __future__ import annotations

import datetime as dt

from dpone.compiler.catalog._blocks import (
    INDEX,
    Block,
    Bullets,
    Code,
    Heading,
    Link,
    Page,
    Paragraph,
    Strong,
    codes,
    row,
    table,
    text,
)
from dpone.compiler.catalog._certifications import summary
from dpone.compiler.catalog._inventory import SOURCE_KINDS, Inventory
from dpone.compiler.catalog._profile_page import MATURITY_MEANING
from dpone.contracts.certification import MATURITY_ORDER

TITLE = "Operation profile catalog"


def _profiles(inventory: Inventory, as_of: dt.date) -> list[Block]:
    if not inventory.profiles:
        return [Heading(2, ("Profiles",)), Paragraph(("The registry holds no profile.",))]
    return [Heading(2, ("Profiles",)), table(
        ("profile", "protocol family", "maturity", "lifecycle", "mutations", "mutation fence",
         "certifications", "workloads"),
        (row(Link(p.ref, p.ref), Code(p.protocol_family), Strong(p.maturity), p.lifecycle,
             codes(p.supported_mutations), Code(p.mutation_fence.type),
             summary(entry, inventory, as_of),
             codes(sorted({u.workload for u in inventory.usages_of(p.ref)})))
         for entry in inventory.profiles for p in (entry.profile,)))]


def _matrix(inventory: Inventory) -> list[Block]:
    refs = [entry.profile.ref for entry in inventory.profiles]
    cells = {(u.source_kind, u.profile): sorted({x.workload for x in inventory.usages
                                                 if (x.source_kind, x.profile)
                                                 == (u.source_kind, u.profile)})
             for u in inventory.usages}
    return [
        Heading(2, ("Source/sink matrix",)),
        Paragraph(("Rows: the kinds of source a workload reads. Columns: the profiles it "
                   "delivers through. A cell names the workloads of the registry that use the "
                   "pair; an empty cell is a pair no workload uses yet.",)),
        table(("source", *refs),
              (row(kind, *(codes(cells.get((kind, ref), ()), empty="—") for ref in refs))
               for kind in SOURCE_KINDS)),
    ]


def _orphans(inventory: Inventory) -> list[Block]:
    refs = {entry.profile.ref for entry in inventory.profiles}
    orphans = [c for c in inventory.certifications if c.certification.profile not in refs]
    if not orphans:
        return []
    return [Heading(2, ("Certifications of no profile here",)), table(
        ("file", "profile", "environment", "level", "result"),
        (row(Code(c.file), Code(c.certification.profile), Code(c.certification.environment),
             c.certification.level, Strong(c.certification.result)) for c in orphans))]


def index_page(inventory: Inventory, as_of: dt.date) -> Page:
    blocks: list[Block] = [
        Paragraph(("Every operation profile of the registry: the endpoints it calls, the body "
                   "and codec it sends, its limits, retry and rate, what its idempotency rests "
                   "on, how mature it is and what certifies it, and the workloads that use it.",)),
        Paragraph(text("Certification ages and staleness are judged at ", Strong(as_of.isoformat()),
                       ", this catalog's as-of date. Rebuild with ",
                       Code("dpone catalog build --registry REGISTRY --out DIR --as-of DATE"),
                       "; ", Code("dpone catalog check --registry REGISTRY --out DIR"),
                       " fails when a page is stale.")),
        *_profiles(inventory, as_of),
        *_matrix(inventory),
        Heading(2, ("Maturity",)),
        Bullets(tuple(text(Strong(level), f": {MATURITY_MEANING[level]}.")
                      for level in MATURITY_ORDER)),
        Paragraph(("Static tests alone never raise maturity; a skipped live case is "
                   "UNVERIFIED, never PASS. An environment's certification.minimum_maturity "
                   "refuses a less mature profile.",)),
        *_orphans(inventory),
    ]
    return Page(INDEX, TITLE, tuple(blocks))
