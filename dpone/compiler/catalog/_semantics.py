"""A profile's idempotency semantics in words: its mutation fence and where the key travels,
what a duplicate answer proves, which receipt fields are kept, and when the query by key's
"absent" answer proves that nothing was applied."""

from __future__ import annotations

from collections.abc import Mapping

from dpone.compiler.catalog._blocks import (
    Block,
    Bullets,
    Code,
    Heading,
    Paragraph,
    Text,
    codes,
    row,
    table,
    text,
)
from dpone.contracts.certification import FENCE_CASES
from dpone.contracts.profile import (
    SUBMIT_THROTTLE_STATUSES,
    Extractor,
    KeyEcho,
    MutationFence,
    OperationProfile,
    QueryByKey,
)

_KEY = Code("receiver_mutation_key")


def extractor_source(extractor: Extractor) -> Text:
    """Where an extracted value is read: a body pointer or a header (as a receipt location)."""
    if extractor.body_json_pointer is not None:
        where = text("body ", Code(extractor.body_json_pointer))
    else:
        where = text("header ", Code(str(extractor.header)))
        if extractor.location is not None:
            where = text(where, " (a location under ", Code(extractor.location.path_prefix), ")")
    return text(where, f", {extractor.type}", "" if extractor.required else ", optional")


def receipt_table(fields: Mapping[str, Extractor]) -> Block:
    return table(("receipt field", "read from"),
                 (row(Code(name), extractor_source(extractor))
                  for name, extractor in sorted(fields.items())))


def _key_travels(fence: MutationFence) -> Text:
    if fence.location == "payload_filename":
        return text("the key (", _KEY, ") travels as the payload's multipart filename (the hex "
                    "of the key and the payload's extension)")
    if fence.location == "header" or fence.header_name is not None:
        return text("the key (", _KEY, ") travels in header ", Code(str(fence.header_name)))
    return text("the profile does not say where the key travels")


def _fence_lines(fence: MutationFence) -> list[Text]:
    if fence.type == "none":
        return [text("No mutation fence (", Code("none"), "): a submit that may have reached the "
                     "receiver is never sent again. Its effect stays UNKNOWN until a poll, a query "
                     "by key or an operator's reconciliation proves it.")]
    what = ("the receiver refuses a second mutation under the same key"
            if fence.type == "receiver_duplicate_key" else
            "the receiver answers a request repeating an idempotency key with the first "
            "request's result instead of applying it again")
    lines = [text("Mutation fence ", Code(fence.type), f": {what}; ", _key_travels(fence), ".")]
    if fence.key_payload_binding == "required":
        lines.append(text("Key bound to the payload (", Code("key_payload_binding: required"),
                          "): the receiver must refuse the same key with another payload."))
    elif fence.key_payload_binding == "not_required":
        lines.append(text("Key not bound to the payload (", Code("key_payload_binding: "
                          "not_required"), "): a same-key request with another payload is not "
                          "claimed to be refused."))
    if fence.certified_environments:
        lines.append(text(
            "A same-key replay of a submit whose effect is unknown is claimed safe in: ",
            codes(fence.certified_environments), ". An environment with a certification policy "
            "trusts the claim only with a current certification whose ", codes(FENCE_CASES,
            " and "), " cases PASS; anywhere else nothing is replayed."))
    else:
        lines.append(text("No environment is claimed certified for a same-key replay: a submit "
                          "whose effect is unknown is never replayed."))
    if fence.certification_ref is not None:
        lines.append(text("Certification reference: ", Code(fence.certification_ref), "."))
    return lines


def _echo(echo: KeyEcho | None, answer: str) -> Text:
    if echo is None:
        return text(f"{answer} is not bound to the child by a key echo: it is trusted on its "
                    "status and counters alone.")
    where = Code(echo.body_json_pointer or f"header {echo.header}")
    return text(f"{answer} must echo this child's key at ", where, " in the form ",
                Code(echo.form), "; another value makes the answer about another job (unknown).")


def _query_lines(query: QueryByKey) -> list[Text]:
    absence = query.absence
    found = ("the job's status document, read as a poll answer even after the receipt expired"
             if query.answer == "job_status" else "a receipt naming the job, then polled")
    lines = [text("Query by key: ", Code(f"{query.method} {query.path}"), "; ",
                  codes(query.found_statuses), f" answers {found}."),
             _echo(query.key_echo, "A found answer")]
    if absence.certified_environments:
        lines.append(text(
            codes(absence.statuses), " (absent) proves that the child was NOT applied only in ",
            codes(absence.certified_environments), " and only once the latest submit attempt "
            f"started at least {absence.receipt_ttl_s} s (receipt_ttl_s) + "
            f"{absence.skew_margin_s} s (skew_margin_s) ago; anywhere else, or earlier, it "
            "proves nothing and the effect stays unknown."))
    else:
        lines.append(text(codes(absence.statuses), " (absent) is certified in no environment: "
                          "it never proves that the child was not applied."))
    return lines


def idempotency_section(profile: OperationProfile) -> list[Block]:
    """The "Idempotency" section of a profile page."""
    ack = profile.acknowledgement
    lines = _fence_lines(profile.mutation_fence)
    if ack.duplicate is not None:
        duplicate = ack.duplicate
        proof = (text(" A duplicate proves the same delivery only with the first job's receipt "
                      "in the answer (", codes(sorted(duplicate.same_key_receipt)), ") matching "
                      "the sealed request; a bare duplicate is REST_DELIVERY_UNSAFE_RETRY.")
                 if duplicate.requires_receipt_for_same_delivery_key else
                 text(" No receipt is required to count a duplicate as already received."))
        lines.append(text("Duplicate statuses: ", codes(duplicate.statuses),
                          " mean the receiver already holds a mutation under this key.", proof))
    else:
        lines.append(text("No duplicate status: the receiver never answers \"already received\"."))
    if ack.rejected_before_effect_statuses:
        lines.append(text("Refused before any effect: ", codes(ack.rejected_before_effect_statuses),
                          "; the child waits, nothing applied, until the credential is fixed, "
                          "then the same delivery key is submitted again."))
    lines.append(text("Throttles: ", codes(sorted(SUBMIT_THROTTLE_STATUSES)), " ask for a later "
                      "attempt; a submit that may have reached the receiver is replayed only "
                      "under a certified fence."))
    if ack.query_by_key is not None:
        lines += _query_lines(ack.query_by_key)
    else:
        lines.append(text("No query by key: an unknown effect is proven by its receipt or by an "
                          "operator's reconciliation only."))
    blocks: list[Block] = [Heading(2, ("Idempotency",)), Bullets(tuple(lines))]
    if ack.receipt:
        blocks += [Paragraph(("Receipt fields kept from an accepted submit:",)),
                   receipt_table(ack.receipt)]
    if ack.duplicate is not None and ack.duplicate.same_key_receipt:
        blocks += [Paragraph(("Receipt fields read from a duplicate answer:",)),
                   receipt_table(ack.duplicate.same_key_receipt)]
    if ack.poll is not None:
        blocks.append(Paragraph(_echo(ack.poll.key_echo, "A poll answer")))
    return blocks
