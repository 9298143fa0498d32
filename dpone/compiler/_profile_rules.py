"""Profile rules: refuse unsupported families and features excluded from V1, parse templates."""

from __future__ import annotations

from typing import Any

from dpone.compiler._fence_rules import check_fence
from dpone.compiler._key_query_rules import (
    check_key_echo,
    check_query_by_key,
    check_raw_query_by_key,
)
from dpone.compiler._located import located_error as _fail
from dpone.compiler._located import located_pointer as _pointer
from dpone.compiler._located import located_template as _template
from dpone.compiler._mapping_rules import check_raw_limits
from dpone.compiler._policy_values import check_policy_values
from dpone.compiler._yaml import LoadedDocument, YamlPath
from dpone.contracts.profile import SUBMIT_THROTTLE_STATUSES, OperationProfile
from dpone.grammar import TemplateContext

SUPPORTED_FAMILIES = ("sync_batch", "async_bulk_job")
_EXCLUDED_BODIES = {"form_urlencoded", "xml", "nested_multipart", "multipart_files", "graphql"}
_MUTATION_METHODS = {"POST", "PUT", "PATCH"}
_FORBIDDEN_HEADERS = {
    "authorization", "proxy-authorization", "cookie", "set-cookie", "host", "content-length",
    "transfer-encoding", "connection", "te", "upgrade", "date", "traceparent", "tracestate",
    "x-api-key", "api-key", "content-type", "expect",
}
_API_KEY_QUERY = {"api_key", "apikey", "key", "token", "access_token", "auth", "signature", "sig"}
SYMBOLS = ("resource", "delivery_key", "receiver_mutation_key", "scope.from", "scope.to")


def check_raw_profile(doc: LoadedDocument) -> None:
    """Checks on the raw document, before the closed model, so codes are specific."""
    check_raw_limits(doc)
    data: dict[str, Any] = doc.data
    family = data.get("protocol_family")
    if isinstance(family, str) and family not in SUPPORTED_FAMILIES:
        raise _fail("profile.unsupported_family",
                    f"protocol family {family!r} is not supported in V1", doc,
                    ("protocol_family",), hint="use sync_batch or async_bulk_job")
    check_raw_query_by_key(data, doc)
    request = data.get("request")
    if not isinstance(request, dict):
        return
    method = request.get("method")
    if isinstance(method, str) and method.upper() not in _MUTATION_METHODS:
        raise _fail("profile.excluded_feature",
                    f"method {method!r} is excluded: V1 mutations are POST, PUT, or PATCH with a "
                    "certified fence", doc, ("request", "method"))
    body = request.get("body")
    if isinstance(body, dict):
        for key in ("payload_parts", "file_parts", "files"):
            if key in body:
                raise _fail("profile.excluded_feature",
                            "multiple file parts are excluded: V1 multipart carries exactly one "
                            "sealed payload part", doc, ("request", "body", key))
        if body.get("type") in _EXCLUDED_BODIES:
            raise _fail("profile.excluded_feature", f"body type {body.get('type')!r} is excluded "
                        "from V1", doc, ("request", "body", "type"))
    for name in (request.get("headers") or {}):
        if isinstance(name, str) and name.lower() in _FORBIDDEN_HEADERS:
            raise _fail("profile.forbidden_header", f"header {name!r} is not a semantic header",
                        doc, ("request", "headers", name))
    for name in (request.get("query") or {}):
        if isinstance(name, str) and name.lower() in _API_KEY_QUERY:
            raise _fail("profile.excluded_feature", f"query parameter {name!r} would carry a "
                        "credential: API keys in the query are forbidden", doc,
                        ("request", "query", name), hint="use auth_provider api_key_header")


def _check_refusal_statuses(profile: OperationProfile, doc: LoadedDocument) -> None:
    """A status certified as refused before any effect has no other submit meaning."""
    ack = profile.acknowledgement
    roles = {"listed in accepted_statuses": set(ack.accepted_statuses),
             "listed in duplicate.statuses": set(ack.duplicate.statuses if ack.duplicate else ()),
             "a throttle status (408, 425, 429, 5xx)": set(SUBMIT_THROTTLE_STATUSES)}
    for index, status in enumerate(ack.rejected_before_effect_statuses):
        for role, statuses in roles.items():
            if status in statuses:
                raise _fail("profile.status_conflict", f"status {status} is certified as refused "
                            f"before effect and is also {role}", doc,
                            ("acknowledgement", "rejected_before_effect_statuses", index))


def check_profile(profile: OperationProfile, doc: LoadedDocument) -> dict[str, Any]:
    """Semantic checks after validation; returns the canonical parsed request templates."""
    request, ack, fence = profile.request, profile.acknowledgement, profile.mutation_fence
    _check_refusal_statuses(profile, doc)
    if request.method == "PATCH" and (fence.type == "none" or fence.certification_ref is None):
        raise _fail("profile.excluded_feature", "PATCH needs a certified mutation fence", doc,
                    ("request", "method"))
    if profile.protocol_family == "async_bulk_job":
        if ack.poll is None or not ack.receipt:
            raise _fail("schema.invalid_value", "async_bulk_job needs acknowledgement.receipt "
                        "and acknowledgement.poll", doc, ("acknowledgement",))
        if profile.max_in_flight_children != 1:
            raise _fail("profile.excluded_feature", "async_bulk_job runs exactly one child in "
                        "flight in V1", doc, ("max_in_flight_children",))
    elif ack.poll is not None or profile.verification.counters_from == "poll_response":
        raise _fail("schema.invalid_value", "sync_batch has no poll; counters come from the "
                    "submit response", doc, ("acknowledgement", "poll"))
    check_fence(profile, doc)
    check_policy_values(profile, doc)
    body_format = request.body.payload_format
    if body_format.format in ("raw",) and body_format.compression != "none":
        raise _fail("profile.invalid_codec", "raw payloads are sent as sealed, uncompressed",
                    doc, ("request", "body"))
    parsed: dict[str, Any] = {
        "path": _template(doc, ("request", "path"), request.path, TemplateContext.PATH),
        "query": {k: _template(doc, ("request", "query", k), v, TemplateContext.QUERY)
                  for k, v in sorted(request.query.items())},
        "headers": {k.lower(): _template(doc, ("request", "headers", k), v, TemplateContext.HEADER)
                    for k, v in sorted(request.headers.items())},
        "scalar_parts": {},
    }
    for name, part in request.body.scalar_parts.items():
        where: YamlPath = ("request", "body", "scalar_parts", name)
        if part.value_from is not None and part.value_from not in SYMBOLS:
            raise _fail("template.unknown_symbol", f"unknown symbol {part.value_from!r}", doc,
                        (*where, "value_from"))
        text = part.template if part.template is not None else "{" + str(part.value_from) + "}"
        parsed["scalar_parts"][name] = _template(doc, where, text, TemplateContext.MULTIPART_SCALAR)
    if ack.poll is not None:
        parsed["poll_path"] = _template(doc, ("acknowledgement", "poll", "path"), ack.poll.path,
                                        TemplateContext.PATH, allow_receipt=True)
        _pointer(doc, ("acknowledgement", "poll", "state", "body_json_pointer"),
                 ack.poll.state.body_json_pointer)
        check_key_echo(ack.poll.key_echo, ("acknowledgement", "poll", "key_echo"), profile,
                       parsed, doc)
    for name, extractor in ack.receipt.items():
        _pointer(doc, ("acknowledgement", "receipt", name, "body_json_pointer"),
                 extractor.body_json_pointer)
    for key in ("accepted_rows", "rejected_rows"):
        extractor = getattr(profile.verification, key)
        if extractor is not None:
            _pointer(doc, ("verification", key, "body_json_pointer"), extractor.body_json_pointer)
    check_query_by_key(profile, parsed, doc)
    return parsed
