"""Outbound requests of one sealed child: the submit exactly as sealed, and the receipt poll.

The submit carries the sealed payload stream; a multipart body is rebuilt around it from the
sealed envelope (names, filename, ordered scalar parts) and must reproduce the sealed boundary
and length, else nothing is sent. The poll is a read-only request rendered from the profile's
poll template and the durable receipt.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from urllib.parse import parse_qsl

from dpone.codecs import MultipartEnvelope
from dpone.contracts import DponeError
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.contracts.sealed import SealedChild
from dpone.executor.transport import OutboundRequest, ReplayableBody
from dpone.grammar import TemplateContext, parse_template


def check_payload(child: SealedChild, artifacts: ImmutableArtifactPort) -> None:
    """Refuse before any mutation when the stored payload is not the sealed one."""
    stored = artifacts.stat(child.payload.key)
    if stored is None or stored.digest != child.payload.digest or stored.size != child.payload.size:
        state = "is missing" if stored is None else "no longer matches its digest"
        raise DponeError(
            code="REST_DELIVERY_INTENT_CONFLICT",
            message=f"the sealed payload {state}: {child.payload.key} "
                    f"(sealed {child.payload.digest})",
            hint="The artifact store was altered after sealing; nothing was sent for this child. "
                 "Restore the payload's exact bytes from a backup, or remove the altered file and "
                 "run `dpone seal` for the same plan and boundary from the unchanged source "
                 "(sealing is deterministic); then resume.",
            details={"payload_key": child.payload.key, "sealed_digest": child.payload.digest,
                     "stored_digest": None if stored is None else stored.digest})


def _conflict(message: str) -> DponeError:
    return DponeError(code="REST_DELIVERY_INTENT_CONFLICT", message=message)


def _multipart_body(plan: RestDeliveryPlan, child: SealedChild,
                    artifacts: ImmutableArtifactPort) -> ReplayableBody:
    rendered = child.request
    part = plan.profile.snapshot.request.body.payload_part
    key = child.payload.key
    if part is None or rendered.payload_part_name is None or rendered.filename is None:
        raise _conflict("the sealed multipart request has no payload part")

    def chunks() -> Iterable[bytes]:
        return artifacts.open_stream(key)

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
                     artifacts: ImmutableArtifactPort) -> OutboundRequest:
    """The request exactly as sealed: method, path, query, semantic headers, body."""
    rendered = child.request
    key = child.payload.key
    if rendered.multipart_boundary is not None:
        body = _multipart_body(plan, child, artifacts)
    else:
        if rendered.content_length != child.payload.size:
            raise _conflict("the sealed request length differs from the payload size")
        body = ReplayableBody(lambda: artifacts.open_stream(key))
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
