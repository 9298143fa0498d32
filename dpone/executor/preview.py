"""The requests a sealed boundary sends, rendered without sending them and without a credential.

Each child's request is built by the supervisor's own :func:`outbound_request` (the bytes and
headers it sends), its URL and headers by the transport's own :func:`request_url`,
:func:`wire_headers` and client headers, composed by httpx exactly as the transport's client
composes them (``build_request`` opens no connection). Only the credential is different: its
header carries the binding's reference (``<bearer from env NAME>``), and nothing resolves it.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

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
from dpone.executor.supervisor import outbound_request
from dpone.executor.transport import (
    CLIENT_HEADERS,
    credential_header,
    request_url,
    wire_headers,
)
from dpone.executor.transport._auth import RESERVED_HEADERS

_CARRIED = {"payload_filename": "payload filename", "header": "header"}


@dataclass(frozen=True, slots=True)
class RenderedChild:
    """One child's previewed request and its exact body bytes."""

    request: PreviewedRequest
    body: bytes


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


def _records(payload: bytes, fmt: str, compression: str, count: int) -> tuple[dict[str, Any], ...]:
    """The first ``count`` records of a sealed payload, decoded."""
    data = gzip.decompress(payload) if compression == "gzip" else payload
    text = data.decode("utf-8-sig")
    rows: Iterator[dict[str, Any]]
    if fmt == "csv":
        rows = iter(csv.DictReader(io.StringIO(text, newline="")))
    elif fmt == "ndjson":
        rows = (json.loads(line) for line in text.splitlines() if line.strip())
    elif fmt == "json_array":
        document = json.loads(text)
        rows = iter(document if isinstance(document, list) else [document])
    else:  # raw bytes have no records to show
        return ()
    return tuple(itertools.islice(rows, count))


def render_child(plan: RestDeliveryPlan, child: SealedChild, artifacts: ImmutableArtifactPort,
                 *, sample: int = 0) -> RenderedChild:
    """``child``'s request as the transport sends it, the credential as its reference."""
    outbound = outbound_request(plan, child, artifacts)
    body = b"".join(outbound.body)
    binding = plan.binding.snapshot
    base = httpx.URL(binding.authority)
    credential = credential_header(binding)
    owned = set(RESERVED_HEADERS) | {"authorization"}
    if credential is not None:
        owned.add(credential[0].lower())
    with httpx.Client(base_url=base, headers=CLIENT_HEADERS, trust_env=False) as client:
        built = client.build_request(outbound.method, request_url(base, outbound.path),
                                     params=list(outbound.query),
                                     headers=wire_headers(outbound, owned))
    headers = [PreviewHeader(name=name.decode("latin-1"), value=value.decode("latin-1"))
               for name, value in built.headers.raw]
    if credential is not None:
        headers.append(PreviewHeader(name=credential[0], value=credential[1], credential=True))
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
        body_bytes=len(body), body_digest="sha256:" + hashlib.sha256(body).hexdigest(),
        keys=_keys(plan, child), receipt=_receipt(plan))
    if sample > 0:
        payload = artifacts.get_bytes(child.payload.key)
        request = request.model_copy(update={"sample": _records(
            payload, payload_format.format, payload_format.compression, sample)})
    return RenderedChild(request, body)
