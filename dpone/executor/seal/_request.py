"""Per-child identities and the rendered request: templates, multipart envelope, digests.

Template symbols available to the request: ``resource`` (the workload's sink resource),
``delivery_key`` and ``receiver_mutation_key`` (rendered ``sha256:<hex>``), ``scope.from``
(ISO date, first day of the child's scope) and ``scope.to``. ``scope.to`` follows the
workload's scope type: for an ``inclusive_date_window`` it is the INCLUSIVE last date of the
scope (the half-open end minus one day); for a ``half_open_date_window`` it is the half-open
end. Identities always use the canonical half-open scope.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dpone.codecs import MultipartEnvelope
from dpone.contracts.children import ChildDescriptor
from dpone.contracts.identity import (
    delivery_key,
    mutation_intent_digest,
    receiver_mutation_key,
    rendered_request_semantics_digest,
)
from dpone.contracts.journal import Generation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import ChildIdentities, RenderedRequest
from dpone.contracts.source_parent import SourceParent
from dpone.executor.seal._names import filename
from dpone.grammar import Template, TemplateContext, parse_template

_SAMPLE_DIGEST = "sha256:" + "0" * 64


@functools.lru_cache(maxsize=256)
def _template(text: str, context: TemplateContext) -> Template:
    """The parsed template (immutable): one parse per text and context, not one per child."""
    return parse_template(text, context=context)


@dataclass(frozen=True, slots=True)
class ChildKeys:
    """The identities that do not depend on the payload bytes."""

    generation: Generation
    delivery_key: str
    receiver_mutation_key: str


def generation(plan: RestDeliveryPlan, parent: SourceParent) -> Generation:
    end = parent.boundary.to_date
    return Generation(
        scheduled_interval_end_utc=dt.datetime(end.year, end.month, end.day, tzinfo=dt.UTC),
        correction_revision=plan.source_boundary.correction_revision)


def child_keys(plan: RestDeliveryPlan, parent: SourceParent, child: ChildDescriptor) -> ChildKeys:
    gen = generation(plan, parent)
    key = delivery_key(
        logical_route_id=plan.logical_route_id,
        target_effect_scope={"resource": plan.workload.sink.resource,
                             "scope_from": child.scope_from, "scope_to": child.scope_to,
                             "part": child.part, "parts": child.parts},
        source_boundary={"from": parent.boundary.from_date, "to": parent.boundary.to_date},
        mutation_kind=plan.source_boundary.mutation_kind,
        explicit_generation=[gen.scheduled_interval_end_utc, gen.correction_revision],
    )
    fence = receiver_mutation_key(operation_namespace=plan.environment.operation_namespace,
                                  delivery_key=key)
    return ChildKeys(gen, key, fence)


def symbols(plan: RestDeliveryPlan, keys: ChildKeys, scope_from: dt.date,
            scope_to: dt.date) -> dict[str, str]:
    """The template symbol values of one child (see the module docstring for ``scope.to``)."""
    shown_to = scope_to
    if plan.source_boundary.scope_type == "inclusive_date_window":
        shown_to = scope_to - dt.timedelta(days=1)
    return {"resource": plan.workload.sink.resource, "delivery_key": keys.delivery_key,
            "receiver_mutation_key": keys.receiver_mutation_key,
            "scope.from": scope_from.isoformat(), "scope.to": shown_to.isoformat()}


def sample_symbols(plan: RestDeliveryPlan, parent: SourceParent) -> dict[str, str]:
    """Symbol values of the same lengths as every child's (for the envelope overhead)."""
    day = parent.boundary.from_date
    sample = ChildKeys(generation(plan, parent), _SAMPLE_DIGEST, _SAMPLE_DIGEST)
    return symbols(plan, sample, day, day + dt.timedelta(days=1))


def scalar_parts(plan: RestDeliveryPlan, values: Mapping[str, str]) -> list[tuple[str, str]]:
    parts: list[tuple[str, str]] = []
    for name, part in plan.profile.snapshot.request.body.scalar_parts.items():
        if part.value_from is not None:
            parts.append((name, values[part.value_from]))
        elif part.template is not None:
            template = _template(part.template, TemplateContext.MULTIPART_SCALAR)
            parts.append((name, template.render(values)))
    return parts


def envelope(plan: RestDeliveryPlan, values: Mapping[str, str], file: str, size: int,
             digest: str, payload: Any) -> MultipartEnvelope:
    part = plan.profile.snapshot.request.body.payload_part
    if part is None:
        raise ValueError("a multipart body needs a payload part")
    return MultipartEnvelope(payload_name=part.name, filename=file,
                             content_type=part.content_type,
                             scalar_parts=scalar_parts(plan, values), payload_size=size,
                             payload_digest=digest, payload=payload)


def envelope_overhead(plan: RestDeliveryPlan, parent: SourceParent, extension: str) -> int:
    """Bytes a multipart envelope adds around the payload (0 for a single body)."""
    if plan.profile.snapshot.request.body.type != "multipart_file":
        return 0
    empty = "sha256:" + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    shell = envelope(plan, sample_symbols(plan, parent), filename(_SAMPLE_DIGEST, extension),
                     0, empty, _no_bytes)
    return shell.content_length


def _no_bytes() -> Iterator[bytes]:
    return iter(())


def _path_and_query(plan: RestDeliveryPlan, values: Mapping[str, str]) -> str:
    request = plan.profile.snapshot.request
    path = _template(request.path, TemplateContext.PATH).render(values)
    query = [f"{name}={_template(text, TemplateContext.QUERY).render(values)}"
             for name, text in sorted(request.query.items())]
    return path + ("?" + "&".join(query) if query else "")


def _headers(plan: RestDeliveryPlan, values: Mapping[str, str]) -> dict[str, str]:
    headers = plan.profile.snapshot.request.headers
    return {name: _template(text, TemplateContext.HEADER).render(values)
            for name, text in sorted(headers.items())}


def render_child(plan: RestDeliveryPlan, keys: ChildKeys, values: Mapping[str, str],
                 multipart: MultipartEnvelope | None, payload_size: int,
                 payload_digest: str) -> tuple[RenderedRequest, ChildIdentities]:
    """The rendered request summary and the complete identities of one sealed child."""
    request = plan.profile.snapshot.request
    path = _path_and_query(plan, values)
    headers = _headers(plan, values)
    semantic_headers = {name.lower(): value for name, value in headers.items()}
    if multipart is not None:
        rendered = RenderedRequest(
            method=request.method, path=path, headers=headers,
            content_type=multipart.content_type, content_length=multipart.content_length,
            scalar_parts=multipart.scalar_parts, payload_part_name=multipart.payload_name,
            filename=multipart.filename, multipart_boundary=multipart.boundary)
        body_semantics = multipart.request_semantics()
    else:
        payload = request.body.payload_format
        rendered = RenderedRequest(method=request.method, path=path, headers=headers,
                                   content_type=payload.content_type,
                                   content_length=payload_size)
        body_semantics = {
            "ordered_scalar_multipart_parts": [], "payload_part_name": None,
            "deterministic_filename": None,
            "content_disposition_and_type": {"content_type": payload.content_type},
            "deterministic_multipart_boundary": None, "sealed_payload_digest": payload_digest}
    rendered_digest = rendered_request_semantics_digest(
        method=request.method, normalized_rendered_path_and_query=path,
        all_non_secret_semantic_headers=semantic_headers, **body_semantics)
    intent = mutation_intent_digest(
        receiver_binding_semantics_digest=plan.binding.receiver_binding_semantics_digest,
        operation_semantics_digest=plan.profile.operation_semantics_digest,
        rendered_request_semantics_digest=rendered_digest)
    identities = ChildIdentities(
        delivery_key=keys.delivery_key, receiver_mutation_key=keys.receiver_mutation_key,
        rendered_request_semantics_digest=rendered_digest, mutation_intent_digest=intent,
        generation=keys.generation)
    return rendered, identities
