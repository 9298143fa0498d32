"""Rules of the read-only lookups: the query by key (``acknowledgement.query_by_key``) and the
key echo that binds a lookup or poll answer to the child.

The query by key is a ``GET`` whose path carries only ``{receiver_mutation_key}`` and/or
``{delivery_key}``, and only a key the submit request carries (a template symbol, or the
receiver mutation key as the hex of a ``multipart_file`` payload filename): the receiver can
index nothing it was never sent. A found answer yields a receipt of the journal's shape (every
field of ``acknowledgement.receipt``). An absent answer can prove "not applied" only after the
certified ``receipt_ttl_s``, which cannot be shorter than the time our own submit may still be
in flight (``timeouts.request_total_s``). A found answer read as the job's status
(``answer: job_status``) needs the poll's state and the poll's counters to read it with.
"""

from __future__ import annotations

from typing import Any, Final

from dpone.compiler._located import (
    located_error,
    located_pointer,
    located_template,
    template_symbols,
)
from dpone.compiler._yaml import LoadedDocument, YamlPath
from dpone.contracts.profile import KeyEcho, OperationProfile
from dpone.grammar import TemplateContext

KEY_SYMBOLS: Final = frozenset({"receiver_mutation_key", "delivery_key"})
_WHERE: Final[YamlPath] = ("acknowledgement", "query_by_key")


def check_raw_query_by_key(data: dict[str, Any], doc: LoadedDocument) -> None:
    """Before the closed model: a lookup that is not a GET gets its own code, not a type error."""
    ack = data.get("acknowledgement")
    query = ack.get("query_by_key") if isinstance(ack, dict) else None
    method = query.get("method") if isinstance(query, dict) else None
    if isinstance(method, str) and method != "GET":
        raise located_error("profile.query_by_key_not_read_only", f"the query by key is a "
                            f"read-only GET, not {method!r}: a lookup never sends a mutation",
                            doc, (*_WHERE, "method"), hint="use method: GET")


def template_carried(parsed: dict[str, Any]) -> set[str]:
    """The symbols the submit request's templates (path, query, headers, scalar parts) send."""
    templates = [parsed["path"], *parsed["query"].values(), *parsed["headers"].values(),
                 *parsed["scalar_parts"].values()]
    return set().union(*(template_symbols(template) for template in templates))


def _keys_sent(profile: OperationProfile, parsed: dict[str, Any]) -> set[str]:
    sent = template_carried(parsed) & KEY_SYMBOLS
    if profile.request.body.type == "multipart_file":
        sent.add("receiver_mutation_key")  # the payload filename is the hex of the key
    return sent


def check_key_echo(echo: KeyEcho | None, where: YamlPath, profile: OperationProfile,
                   parsed: dict[str, Any], doc: LoadedDocument) -> None:
    """A certified key echo must compare with a key the sealed request actually carries."""
    if echo is None:
        return
    located_pointer(doc, (*where, "body_json_pointer"), echo.body_json_pointer)
    if echo.form == "payload_filename" and profile.request.body.type != "multipart_file":
        raise located_error(
            "schema.invalid_value", "key_echo form payload_filename compares the answer with the "
            "sealed multipart filename, but the request body is not multipart_file", doc,
            (*where, "form"), hint="use form: receiver_mutation_key with a request template that "
            "carries {receiver_mutation_key}")
    if echo.form == "receiver_mutation_key" and "receiver_mutation_key" not in template_carried(
            parsed):
        raise located_error(
            "schema.invalid_value", "key_echo form receiver_mutation_key compares the answer "
            "with a key the request never sends: no path, query, header or scalar part template "
            "carries {receiver_mutation_key}", doc, (*where, "form"),
            hint="send the key in a request template, or use form: payload_filename for a "
            "multipart filename")


def check_query_by_key(profile: OperationProfile, parsed: dict[str, Any],
                       doc: LoadedDocument) -> None:
    """Check the query by key, if any, and add its parsed path to ``parsed``."""
    ack = profile.acknowledgement
    query = ack.query_by_key
    if query is None:
        return
    path = located_template(doc, (*_WHERE, "path"), query.path, TemplateContext.PATH)
    used = template_symbols(path)
    if not used or not used <= KEY_SYMBOLS:
        foreign = sorted(used - KEY_SYMBOLS)
        found = f"it carries {', '.join('{' + s + '}' for s in foreign)}" if foreign else \
            "it carries no key"
        raise located_error("profile.query_by_key_symbol", "the query by key path may carry only "
                            f"{{receiver_mutation_key}} and/or {{delivery_key}}; {found}", doc,
                            (*_WHERE, "path"), hint="look the child up by its key, e.g. "
                            "/v1/jobs/by-key/{receiver_mutation_key}")
    unsent = sorted(used - _keys_sent(profile, parsed))
    if unsent:
        raise located_error("profile.query_by_key_unsent_key", f"the query by key looks up "
                            f"{{{unsent[0]}}}, but the submit request never sends it: the "
                            "receiver cannot hold anything under that key", doc,
                            (*_WHERE, "path"), hint="look up a key the request carries, or send "
                            "it in a request template")
    missing = sorted(set(ack.receipt) - set(query.receipt))
    if missing:
        raise located_error("profile.query_by_key_receipt_incomplete", "a found answer must give "
                            "the receipt the journal keeps for this profile; the query by key "
                            f"extracts no {', '.join(missing)}", doc, (*_WHERE, "receipt"),
                            hint=f"add {missing[0]} under query_by_key.receipt")
    for name, extractor in query.receipt.items():
        located_pointer(doc, (*_WHERE, "receipt", name, "body_json_pointer"),
                        extractor.body_json_pointer)
    check_key_echo(query.key_echo, (*_WHERE, "key_echo"), profile, parsed, doc)
    if query.absence.receipt_ttl_s < profile.timeouts.request_total_s:
        raise located_error(
            "profile.query_by_key_horizon_short", f"absence.receipt_ttl_s "
            f"({query.absence.receipt_ttl_s} s) is shorter than timeouts.request_total_s "
            f"({profile.timeouts.request_total_s} s): a submit may still be in flight when an "
            "absent answer would count as proof", doc, (*_WHERE, "absence", "receipt_ttl_s"),
            hint="certify a receipt_ttl_s of at least timeouts.request_total_s")
    _check_job_status_answer(profile, doc)
    parsed["query_by_key_path"] = path


def _check_job_status_answer(profile: OperationProfile, doc: LoadedDocument) -> None:
    """A found answer read as the job's status needs the poll that says how to read a status
    and counters that come from it."""
    if profile.acknowledgement.query_by_key is None or (
            profile.acknowledgement.query_by_key.answer != "job_status"):
        return
    lacking = [need for need, missing in (
        ("acknowledgement.poll", profile.acknowledgement.poll is None),
        ("verification.counters_from: poll_response",
         profile.verification.counters_from != "poll_response")) if missing]
    if lacking:
        raise located_error(
            "profile.query_by_key_answer_not_status", "answer: job_status reads a found answer "
            "as the job's status document with the poll's state and counters, but the profile "
            f"has no {' and no '.join(lacking)}", doc, (*_WHERE, "answer"),
            hint="keep answer: receipt, or read the status and counters from the poll")
