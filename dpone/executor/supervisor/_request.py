"""Outbound requests of one sealed child: the submit exactly as sealed, and the receipt poll.

The submit carries the sealed payload; a multipart body is rebuilt around it from the sealed
envelope (names, filename, ordered scalar parts) and must reproduce the sealed boundary and
length, else nothing is sent. A payload of at most :data:`IN_MEMORY_PAYLOAD_BYTES` is read once,
checked against its sealed digest and sent from those very bytes (nothing can change between
the check and the send); a larger one is checked by hashing the stored artifact and streamed.
The poll is a read-only request rendered from the profile's poll template and the durable
receipt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from urllib.parse import parse_qsl

from dpone.codecs import MultipartEnvelope
from dpone.contracts import DponeError, content_digest
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.contracts.sealed import SealedChild
from dpone.executor.transport import OutboundRequest, ReplayableBody
from dpone.grammar import TemplateContext, parse_template

IN_MEMORY_PAYLOAD_BYTES = 16 << 20
"""Payloads up to this size are held while their request is sent (one per request in flight)."""


def check_payload(child: SealedChild, artifacts: ImmutableArtifactPort) -> bytes | None:
    """Refuse before any mutation when the stored payload is not the sealed one.

    Returns the checked bytes when the payload is small enough to hold, else None (the request
    then streams the stored artifact, hashed just now)."""
    if child.payload.size > IN_MEMORY_PAYLOAD_BYTES:
        stored = artifacts.stat(child.payload.key)
        if stored is None or stored.digest != child.payload.digest \
                or stored.size != child.payload.size:
            raise _altered(child, None if stored is None else stored.digest)
        return None
    try:
        data = artifacts.get_bytes(child.payload.key)
    except DponeError as error:
        if error.code != "artifact.not_found":
            raise
        raise _altered(child, None) from error
    digest = content_digest(data)
    if digest != child.payload.digest or len(data) != child.payload.size:
        raise _altered(child, digest)
    return data


def _altered(child: SealedChild, stored_digest: str | None) -> DponeError:
    state = "is missing" if stored_digest is None else "no longer matches its digest"
    return DponeError(
        code="REST_DELIVERY_INTENT_CONFLICT",
        message=f"the sealed payload {state}: {child.payload.key} "
                f"(sealed {child.payload.digest})",
        hint="The artifact store was altered after sealing; nothing was sent for this child. "
             "Restore the payload's exact bytes from a backup, or remove the altered file and "
             "run `dpone seal` for the same plan and boundary from the unchanged source "
             "(sealing is deterministic); then resume.",
        details={"payload_key": child.payload.key, "sealed_digest": child.payload.digest,
                 "stored_digest": stored_digest})


def _conflict(message: str) -> DponeError:
    return DponeError(code="REST_DELIVERY_INTENT_CONFLICT", message=message)


def _payload_chunks(child: SealedChild, artifacts: ImmutableArtifactPort,
                    payload: bytes | None) -> Callable[[], Iterable[bytes]]:
    """The payload's bytes for each (re)send: the checked bytes held, else the stored stream."""
    if payload is not None:
        return lambda: (payload,)
    key = child.payload.key
    return lambda: artifacts.open_stream(key)


def _multipart_body(plan: RestDeliveryPlan, child: SealedChild,
                    chunks: Callable[[], Iterable[bytes]]) -> ReplayableBody:
    rendered = child.request
    part = plan.profile.snapshot.request.body.payload_part
    if part is None or rendered.payload_part_name is None or rendered.filename is None:
        raise _conflict("the sealed multipart request has no payload part")
    try:
        # The boundary was collision-checked against these bytes at seal time; streaming the
        # body re-checks their size and digest, so the payload is not read an extra time here.
        envelope = MultipartEnvelope(
            payload_name=rendered.payload_part_name, filename=rendered.filename,
            content_type=part.content_type, scalar_parts=rendered.scalar_parts,
            payload_size=child.payload.size, payload_digest=child.payload.digest, payload=chunks,
            sealed_boundary=rendered.multipart_boundary)
    except ValueError as error:
        raise _conflict(f"the sealed multipart request is not reproducible: {error}") from error
    if envelope.content_length != rendered.content_length:
        raise _conflict("the multipart envelope does not reproduce the sealed length")

    def body() -> Iterator[bytes]:
        return envelope.iter_body(chunks())

    return ReplayableBody(body)


def outbound_request(plan: RestDeliveryPlan, child: SealedChild,
                     artifacts: ImmutableArtifactPort, payload: bytes | None = None
                     ) -> OutboundRequest:
    """The request exactly as sealed: method, path, query, semantic headers, body.

    ``payload``: the payload's bytes as :func:`check_payload` returned them (sent as they are),
    or None to stream the stored artifact."""
    rendered = child.request
    chunks = _payload_chunks(child, artifacts, payload)
    if rendered.multipart_boundary is not None:
        body = _multipart_body(plan, child, chunks)
    else:
        if rendered.content_length != child.payload.size:
            raise _conflict("the sealed request length differs from the payload size")
        body = ReplayableBody(chunks)
    path, _, query = rendered.path.partition("?")
    return OutboundRequest(
        method=rendered.method,
        path=path,
        content_type=rendered.content_type,
        body=body,
        content_length=rendered.content_length,
        query=tuple(parse_qsl(query, keep_blank_values=True)),
        headers=tuple(sorted(rendered.headers.items())),
    )


def poll_request(plan: RestDeliveryPlan, receipt: Mapping[str, object]) -> OutboundRequest:
    """The read-only receipt poll: the profile's poll path rendered with ``receipt.<field>``."""
    poll = plan.profile.snapshot.acknowledgement.poll
    if poll is None:
        raise DponeError(code="REST_DELIVERY_PROTOCOL_UNKNOWN",
                         message=f"profile {plan.profile.snapshot.ref} declares no receipt poll")
    values = {f"receipt.{name}": str(value) for name, value in receipt.items()
              if isinstance(value, str | int) and not isinstance(value, bool)}
    path = parse_template(poll.path, context=TemplateContext.PATH, allow_receipt=True).render(values)
    return OutboundRequest(method=poll.method, path=path)
