"""One profile's catalog page: what it is, the endpoints it calls, the body and codec it
sends, its limits, timeouts, retry and rate, its idempotency in words, how an effect is
verified, what is retained, its certification results and the workloads and bindings that use
it. Every value comes from the validated profile; nothing is read from the clock."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from dpone.compiler.catalog._blocks import (
    INDEX,
    Block,
    Code,
    Heading,
    Inline,
    Link,
    Page,
    Paragraph,
    Strong,
    Text,
    codes,
    fields,
    row,
    table,
    text,
)
from dpone.compiler.catalog._certifications import certification_section
from dpone.compiler.catalog._inventory import Inventory, ProfileEntry
from dpone.compiler.catalog._semantics import extractor_source, idempotency_section
from dpone.contracts.certification import MATURITY_ORDER, CertificationPolicy
from dpone.contracts.profile import Backoff, Codec, OperationProfile, Poll

MATURITY_MEANING = {
    "experimental": "its claims are proven by static tests only",
    "beta": "its claims are proven by a local-live certification",
    "production": "its claims are proven by a vendor-live certification",
}
FAMILY_MEANING = {
    "sync_batch": "one request per child; the response carries the row counters",
    "async_bulk_job": "one submit per child, then read-only receipt polling; one child in flight",
}
_DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}


def number(value: int) -> str:
    return f"{value:,}"


def seconds(value: int) -> str:
    return f"{value:,} s"


def _overview(entry: ProfileEntry) -> list[Block]:
    profile = entry.profile
    family: Text = (Code(profile.protocol_family),)
    if profile.protocol_family in FAMILY_MEANING:
        family = text(family, f": {FAMILY_MEANING[profile.protocol_family]}")
    blocks: list[Block] = [Paragraph(text(Link("Catalog", INDEX), " · maturity ",
                                          Strong(profile.maturity), " · lifecycle ",
                                          profile.lifecycle))]
    if profile.description:
        blocks.append(Paragraph((profile.description,)))
    blocks.append(fields([
        ("profile", Code(profile.ref)),
        ("lifecycle", profile.lifecycle + (": it compiles no new plan; plans compiled before "
                                           "run on by digest" if profile.lifecycle == "deprecated"
                                           else "")),
        ("maturity", text(Strong(profile.maturity), f": {MATURITY_MEANING[profile.maturity]}")),
        ("protocol family", family),
        ("supported mutations", codes(profile.supported_mutations)),
        ("effect conflict group", Code(profile.effect_conflict_group)),
        ("profile contract digest", Code(entry.contract_digest)),
        ("operation semantics digest", Code(entry.semantics_digest)),
        ("file", Code(entry.file)),
    ]))
    return blocks


def _phases(poll: Poll) -> Text:
    parts: list[Inline | Text] = ["state from ", extractor_source(poll.state)]
    for name in ("running", "succeeded", "partial", "failed", "cancelled"):
        values = getattr(poll, name)
        if values:
            parts += [f"; {name} ", codes(values)]
    return text(*parts, "; expired ", codes(poll.expired_statuses))


def _endpoints(profile: OperationProfile) -> list[Block]:
    request, ack = profile.request, profile.acknowledgement
    answers = text("accepted ", codes(ack.accepted_statuses))
    if ack.duplicate is not None:
        answers = text(answers, "; duplicate ", codes(ack.duplicate.statuses))
    if ack.rejected_before_effect_statuses:
        answers = text(answers, "; refused before effect ",
                       codes(ack.rejected_before_effect_statuses))
    rows = [row("submit", Code(f"{request.method} {request.path}"), answers)]
    if ack.poll is not None:
        rows.append(row("receipt poll", Code(f"{ack.poll.method} {ack.poll.path}"),
                        _phases(ack.poll)))
    if ack.query_by_key is not None:
        query = ack.query_by_key
        rows.append(row("query by key", Code(f"{query.method} {query.path}"),
                        text("found ", codes(query.found_statuses), f" ({query.answer}); absent ",
                             codes(query.absence.statuses))))
    headers = codes(f"{name}: {value}" for name, value in sorted(request.headers.items()))
    query_parts = codes(f"{name}={value}" for name, value in sorted(request.query.items()))
    return [Heading(2, ("Endpoints",)),
            Paragraph(text("Paths are relative to the binding's authority; ", Code("{...}"),
                           " are the profile's template symbols.")),
            table(("role", "request", "answers"), rows),
            fields([("submit media type", Code(request.media_type)),
                    ("semantic headers", headers), ("query parameters", query_parts)])]


def _codec_rows(codec: Codec, payload_format: str, compression: str) -> list[tuple[str, Text]]:
    found: list[tuple[str, Text]] = []
    if payload_format == "csv":
        csv = codec.csv
        found += [("CSV", text(
            f"{csv.encoding}, ", "with BOM" if csv.bom else "no BOM",
            f", delimiter {_DELIMITERS[csv.delimiter]}, quote ", Code(csv.quote),
            f", escape {csv.escape}, quoting {csv.quoting}, line terminator ",
            Code(csv.line_terminator.encode("unicode_escape").decode("ascii")),
            ", header row" if csv.header else ", no header row", "; null ", Code(csv.null),
            ", empty string ", Code(csv.empty_string), f"; decimals {csv.decimal}; timestamps "
            f"{csv.timestamp_precision} {csv.timestamp_zone}"))]
    elif payload_format in ("ndjson", "json_array"):
        json = codec.json_codec
        found += [("JSON", text(
            f"field order {json.field_order}, non-ASCII {json.non_ascii}, null {json.null}, "
            f"numbers {json.numbers}, timestamps {json.timestamp_precision} {json.timestamp_zone}"
        ))]
    if compression == "gzip":
        gzip = codec.gzip
        found.append(("gzip", (f"level {gzip.level}, mtime {gzip.mtime}, {gzip.library}",)))
    return found


def _body(profile: OperationProfile) -> list[Block]:
    body = profile.request.body
    payload = body.payload_format
    shape = (text("multipart file, payload part ", Code(body.payload_part.name))
             if body.payload_part is not None else ("single payload",))
    scalar = codes(f"{name} = {part.template or '{' + str(part.value_from) + '}'} ({part.format})"
                   for name, part in sorted(body.scalar_parts.items()))
    rows: list[tuple[str, Inline | Text]] = [
        ("body", shape),
        ("payload format", Code(payload.format)),
        ("compression", Code(payload.compression)),
        ("content type", Code(payload.content_type)),
        ("scalar parts", scalar)]
    rows += _codec_rows(profile.codec, payload.format, payload.compression)
    return [Heading(2, ("Body and codec",)), fields(rows)]


def _limits(profile: OperationProfile) -> list[Block]:
    limits = profile.limits
    window = limits.preferred_window_days
    return [
        Heading(2, ("Limits",)),
        table(("limit", "hard", "planning target"), [
            row("rows per child", number(limits.max_rows),
                number(limits.planning_rows or limits.max_rows)),
            row("decoded bytes per child", number(limits.max_decoded_bytes),
                number(limits.planning_decoded_bytes)),
            row("wire bytes per child", number(limits.max_wire_bytes),
                number(limits.planning_wire_bytes))]),
        fields([
            ("window days", f"default {window.default}; a workload may choose "
                            f"{window.min} to {window.max}"),
            ("children per plan", f"at most {number(limits.max_children)}"),
            ("children in flight", str(profile.max_in_flight_children))]),
    ]


def _timeouts(profile: OperationProfile) -> list[Block]:
    names = {"dns_s": "DNS", "connect_s": "connect", "tls_s": "TLS", "write_s": "write",
             "read_s": "read", "pool_s": "pool", "request_total_s": "request total",
             "operation_total_s": "operation total", "poll_interval_s": "poll interval",
             "receipt_ttl_s": "receipt TTL"}
    values = profile.timeouts.model_dump()
    return [Heading(2, ("Timeouts",)),
            fields(((label, text(seconds(values[name]), " (", Code(name), ")"))
                    for name, label in names.items()), ("timeout", "value"))]


def _backoff(name: str, backoff: Backoff) -> tuple[Text, ...]:
    return row(name, str(backoff.max_attempts), seconds(backoff.initial_delay_s),
               seconds(backoff.max_delay_s), seconds(backoff.budget_s))


def _retry(profile: OperationProfile) -> list[Block]:
    retry, rate = profile.retry, profile.rate
    return [
        Heading(2, ("Retry and rate",)),
        table(("retry", "max attempts", "initial delay", "max delay", "budget"),
              [_backoff("submit", retry.submit), _backoff("observation", retry.observation)]),
        Paragraph(text("Delays are full jitter up to the backoff. ", Code("Retry-After"),
                       " is honoured (", Code(f"retry_after: {retry.retry_after}"), "): never an "
                       "attempt earlier than the receiver asked; a delay beyond the budget stops "
                       "the operation instead.")),
        fields([("submits per minute", number(rate.submit_per_minute)),
                ("polls per minute", number(rate.poll_per_minute)),
                ("max active requests", str(rate.max_active_requests)),
                ("max active remote jobs", str(rate.max_active_remote_jobs))], ("rate", "value")),
    ]


def _verification(profile: OperationProfile) -> list[Block]:
    verification, result = profile.verification, profile.result_policy
    rows: list[tuple[str, Inline | Text]] = [
        ("counters from", Code(verification.counters_from)),
        ("accepted rows", extractor_source(verification.accepted_rows))]
    if verification.rejected_rows is not None:
        rows.append(("rejected rows", extractor_source(verification.rejected_rows)))
    rows += [("all rows accounted", "yes" if result.all_rows_accounted else "no"),
             ("partial result", Code(result.partial_result)),
             ("empty input", Code(result.empty_input))]
    return [Heading(2, ("Verification",)),
            Paragraph(("The receiver's counters are compared with the sealed row count before "
                       "a child's effect is verified.",)),
            fields(rows)]


def _retention(profile: OperationProfile) -> list[Block]:
    retention, observability = profile.retention, profile.observability
    bounds = observability.response_bounds
    return [Heading(2, ("Retention and evidence",)), fields([
        ("sealed payloads kept", f"{retention.payload_days} day(s)"),
        ("observations kept", f"{retention.observation_days} day(s)"),
        ("observations per operation", f"at most {number(observability.max_observations)}"),
        ("evidence scalars", codes(observability.evidence_scalars)),
        ("response bounds", f"body {number(bounds.max_body_bytes)} bytes, depth "
                            f"{bounds.max_depth}, {number(bounds.max_fields)} fields, strings "
                            f"{number(bounds.max_string_bytes)} bytes"),
    ])]


def _policy_words(profile: OperationProfile, policy: CertificationPolicy | None) -> Text:
    if policy is None:
        return ("no certification policy: the profile's claims stand as written",)
    below = (MATURITY_ORDER.index(profile.maturity)
             < MATURITY_ORDER.index(policy.minimum_maturity))
    refused = f" (refused: this profile is {profile.maturity})" if below else ""
    return text("requires maturity ", Code(policy.minimum_maturity), f" or more{refused}",
                "; certification levels ", codes(policy.required_levels),
                f", at most {policy.max_age_days} day(s) old")


def _usage(entry: ProfileEntry, inventory: Inventory) -> list[Block]:
    usages = inventory.usages_of(entry.profile.ref)
    blocks: list[Block] = [Heading(2, ("Workloads and bindings",))]
    if not usages:
        return [*blocks, Paragraph(("No workload of the registry uses this profile.",))]
    blocks.append(table(
        ("workload", "source", "binding", "environment", "mutation", "resource", "file"),
        (row(Code(u.workload), u.source_kind, Code(u.binding), Code(u.environment),
             Code(u.mutation), Code(u.resource), Code(u.file)) for u in usages)))
    bound = sorted({(u.environment, u.binding) for u in usages})
    blocks.append(table(("environment", "bindings", "what the environment requires"), (
        row(Code(environment), codes(b for e, b in bound if e == environment),
            _policy_words(entry.profile, inventory.policies.get(environment)))
        for environment in sorted({e for e, _ in bound}))))
    return blocks


def profile_page(entry: ProfileEntry, inventory: Inventory, as_of: dt.date) -> Page:
    profile = entry.profile
    sections: Iterable[list[Block]] = (
        _overview(entry), _endpoints(profile), _body(profile), _limits(profile),
        _timeouts(profile), _retry(profile), idempotency_section(profile),
        _verification(profile), _retention(profile),
        certification_section(entry, inventory, as_of), _usage(entry, inventory))
    return Page(profile.ref, f"Operation profile {profile.ref}",
                tuple(block for section in sections for block in section))
