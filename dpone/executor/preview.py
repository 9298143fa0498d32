"""The requests a sealed boundary sends, rendered without sending them and without a credential.

Each child's request is built by the supervisor's own :func:`outbound_request` (the bytes and
headers it sends), its URL and headers by the transport's own :func:`authority_url`,
:func:`request_url`, :func:`wire_headers` and client headers, composed by httpx exactly as the
transport's client composes them (``build_request`` opens no connection). Only the credential is
different: its header carries the binding's reference (``<bearer from env NAME>``,
:func:`credential_header`), and nothing resolves it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

import httpx

from dpone.codecs import PayloadIntegrityError
from dpone.contracts import DponeError
from dpone.contracts.documents import (
    PreviewedRequest,
    PreviewHeader,
    PreviewKeys,
    PreviewReceipt,
    SealedScope,
)
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.contracts.sealed import SealedChild
from dpone.executor.payload_sample import first_records
from dpone.executor.supervisor import outbound_request
from dpone.executor.transport import (
    CLIENT_HEADERS,
    authority_url,
    credential_header,
    request_url,
    wire_headers,
)

_CARRIED = {"payload_filename": "payload filename", "header": "header"}


@dataclass(frozen=True, slots=True)
class RenderedChild:
    """One child's previewed request and its exact body: replayable, each iteration streams the
    sealed artifact again (a preview of many children never holds their bodies)."""

    request: PreviewedRequest
    body: Iterable[bytes]


def _keys(plan: RestDeliveryPlan, child: SealedChild) -> PreviewKeys:
    fence = plan.profile.snapshot.mutation_fence
    carried = None
    if fence.type != "none" and fence.location is not None:
        carried = _CARRIED[fence.location]
        if fence.location == "header" and fence.header_name is not None:
            carried = f"header {fence.header_name}"
    identities = child.identities
    return PreviewKeys(delivery_key=identities.delivery_key,
                       receiver_mutation_key=identities.receiver_mutation_key,
                       mutation_intent_digest=identities.mutation_intent_digest,
                       fence=fence.type, carried_in=carried)


def _receipt(plan: RestDeliveryPlan) -> PreviewReceipt:
    ack = plan.profile.snapshot.acknowledgement
    poll = f"{ack.poll.method} {ack.poll.path}" if ack.poll is not None else None
    return PreviewReceipt(accepted_statuses=ack.accepted_statuses, fields=tuple(ack.receipt),
                          poll=poll)


def _measured(child: SealedChild, body: Iterable[bytes]) -> tuple[int, str]:
    """The size and digest of the exact body, streamed once. A single body is the payload
    itself; a multipart envelope checks its payload part as it streams: either way the bytes
    shown are the sealed ones, or ``artifact.conflict``."""
    hasher, size = hashlib.sha256(), 0
    try:
        for chunk in body:
            hasher.update(chunk)
            size += len(chunk)
    except PayloadIntegrityError as error:
        raise _not_sealed(child) from error
    digest = "sha256:" + hasher.hexdigest()
    if child.request.multipart_boundary is None and digest != child.payload.digest:
        raise _not_sealed(child)
    return size, digest


def _not_sealed(child: SealedChild) -> DponeError:
    key = child.payload.key
    return DponeError(code="artifact.conflict", details={"key": key},
                      message=f"the payload artifact {key!r} does not hold the bytes sealed for "
                              f"child {child.descriptor.ordinal}")


def render_child(plan: RestDeliveryPlan, child: SealedChild, artifacts: ImmutableArtifactPort,
                 *, sample: int = 0) -> RenderedChild:
    """``child``'s request as the transport sends it, the credential as its reference."""
    outbound = outbound_request(plan, child, artifacts)
    body_bytes, body_digest = _measured(child, outbound.body)
    binding = plan.binding.snapshot
    base = authority_url(binding.authority)
    with httpx.Client(base_url=base, headers=CLIENT_HEADERS, trust_env=False) as client:
        built = client.build_request(outbound.method, request_url(base, outbound.path),
                                     params=list(outbound.query),
                                     headers=wire_headers(outbound, binding))
    headers = [PreviewHeader(name=name.decode("latin-1"), value=value.decode("latin-1"))
               for name, value in built.headers.raw]
    credential = credential_header(binding)
    if credential is not None:
        headers.append(PreviewHeader(name=credential.name, value=credential.reference,
                                     credential=True))
    payload_format = plan.profile.snapshot.request.body.payload_format
    descriptor = child.descriptor
    request = PreviewedRequest(
        ordinal=descriptor.ordinal,
        scope=SealedScope(from_date=descriptor.scope_from, to_date=descriptor.scope_to,
                          part=descriptor.part, parts=descriptor.parts),
        method=built.method, url=str(built.url), path=built.url.raw_path.decode("ascii"),
        headers=tuple(headers), content_type=child.request.content_type,
        content_encoding=None if payload_format.compression == "none"
        else payload_format.compression,
        rows=descriptor.row_count, decoded_bytes=descriptor.decoded_bytes,
        wire_bytes=descriptor.wire_bytes, payload_digest=child.payload.digest,
        body_bytes=body_bytes, body_digest=body_digest,
        keys=_keys(plan, child), receipt=_receipt(plan))
    if sample > 0:
        records = first_records(artifacts.open_stream(child.payload.key), payload_format,
                                plan.profile.snapshot.codec.csv,
                                [column.name for column in plan.mapping.columns], sample,
                                key=child.payload.key)
        request = request.model_copy(update={"sample": records})
    return RenderedChild(request, outbound.body)
