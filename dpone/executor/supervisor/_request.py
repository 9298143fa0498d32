"""The outbound request of one sealed child: the rendered summary plus the payload stream."""

from __future__ import annotations

from urllib.parse import parse_qsl

from dpone.contracts import DponeError
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.contracts.sealed import SealedChild
from dpone.executor.transport import OutboundRequest, ReplayableBody


def check_payload(child: SealedChild, artifacts: ImmutableArtifactPort) -> None:
    """Refuse before any mutation when the stored payload is not the sealed one."""
    stored = artifacts.stat(child.payload.key)
    if stored is None or stored.digest != child.payload.digest or stored.size != child.payload.size:
        raise DponeError(code="REST_DELIVERY_INTENT_CONFLICT",
                         message="the stored payload is missing or differs from the sealed payload",
                         details={"payload_key": child.payload.key})


def outbound_request(child: SealedChild, artifacts: ImmutableArtifactPort) -> OutboundRequest:
    """The request exactly as sealed: method, path, query, semantic headers, payload body.

    Only a single-body request is built here; its ``content_length`` is the sealed payload size.
    """
    rendered = child.request
    if rendered.multipart_boundary is not None or rendered.scalar_parts:
        raise DponeError(code="REST_DELIVERY_PROTOCOL_UNKNOWN",
                         message="a multipart body is not part of the synchronous batch family")
    if rendered.content_length != child.payload.size:
        raise DponeError(code="REST_DELIVERY_INTENT_CONFLICT",
                         message="the sealed request length differs from the payload size")
    path, _, query = rendered.path.partition("?")
    key = child.payload.key
    return OutboundRequest(
        method=rendered.method,
        path=path,
        content_type=rendered.content_type,
        body=ReplayableBody(lambda: artifacts.open_stream(key)),
        content_length=rendered.content_length,
        query=tuple(parse_qsl(query, keep_blank_values=True)),
        headers=tuple(sorted(rendered.headers.items())),
    )
