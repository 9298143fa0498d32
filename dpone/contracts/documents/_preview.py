"""``dpone preview --format json``: the requests a plan sends for a boundary, offline
(``dpone.request_preview.v1``). Credentials appear as their references, never as values."""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

from pydantic import Field

from dpone.contracts._base import Digest
from dpone.contracts.documents._report import Interval, Report
from dpone.contracts.documents._seal import SealedScope

REQUEST_PREVIEW_SCHEMA_ID: Final = "dpone.request_preview.v1"


class PreviewHeader(Report):
    name: str
    value: str
    credential: bool = False
    """The value is the credential's reference (``<bearer from env NAME>``), not a value."""


class PreviewKeys(Report):
    """The child's identities and where its request carries the receiver's key."""

    delivery_key: Digest
    receiver_mutation_key: Digest
    mutation_intent_digest: Digest
    fence: str
    """The profile's mutation fence: ``none``, ``receiver_duplicate_key`` or
    ``idempotency_key_header``."""
    carried_in: str | None
    """Where the request carries the key (``header X-Idempotency-Key``, ``payload filename``);
    None when no fence carries it."""


class PreviewReceipt(Report):
    """What the acknowledgement reads from the answer, and how the receipt is polled."""

    accepted_statuses: tuple[int, ...]
    fields: tuple[str, ...]
    """The receipt fields extracted from an accepted answer."""
    poll: str | None
    """``METHOD path-template`` of the read-only receipt poll (None for a synchronous batch)."""


class PreviewedRequest(Report):
    """One child's request, exactly as the transport sends it (the credential as a reference)."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"sample"})

    ordinal: int
    scope: SealedScope
    method: str
    url: str
    path: str
    """The path and query as the receiver sees them on the request line."""
    headers: tuple[PreviewHeader, ...]
    content_type: str
    content_encoding: str | None
    """The payload's compression (``gzip``), None when it is sent as it is."""
    rows: int
    decoded_bytes: int
    wire_bytes: int
    payload_digest: Digest
    body_bytes: int
    body_digest: Digest
    """The digest of the exact body bytes (for a multipart request, the whole envelope)."""
    keys: PreviewKeys
    receipt: PreviewReceipt
    sample: tuple[dict[str, Any], ...] | None = None
    """The first decoded records of the payload (``--sample K``)."""


class RequestPreview(Report):
    """``dpone preview --format json``: nothing was sent, no credential was read."""

    schema_id: Literal["dpone.request_preview.v1"] = Field(default=REQUEST_PREVIEW_SCHEMA_ID,
                                                          alias="schema")
    plan_digest: Digest
    parent_digest: Digest
    boundary: Interval
    profile: str
    binding: str
    authority: str
    children_total: int
    requests: tuple[PreviewedRequest, ...]
    """Every child's request, or the one ``--child`` names."""
