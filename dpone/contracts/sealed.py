"""Sealed child payloads: the `dpone.rest_payload.v1` document and the sealed topology.

The sealer turns one frozen parent and one compiled plan into ordered children, each with a
content-addressed payload, its identities (delivery key, receiver mutation key, rendered
request semantics, mutation intent) and a summary of the request that will carry it. Every
value here is a function of the parent bytes, the plan and the codec libraries, so sealing
twice gives the same documents and digests.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Final, Literal

from pydantic import Field

from dpone.contracts._base import Digest, StrictModel, canonical_json
from dpone.contracts.children import ByteCount, ChildDescriptor, CoverageProof, RowIndex
from dpone.contracts.journal import Generation
from dpone.contracts.ports import ArtifactRef
from dpone.contracts.profile import Codec, PayloadFormat

PAYLOAD_SCHEMA_ID: Final = "dpone.rest_payload.v1"
PAYLOAD_KEY_PREFIX: Final = "payloads/sha256/"


class ChildIdentities(StrictModel):
    """The identities of one child (see the canonical identity policy)."""

    delivery_key: Digest
    receiver_mutation_key: Digest
    rendered_request_semantics_digest: Digest
    mutation_intent_digest: Digest
    generation: Generation


class RenderedRequest(StrictModel):
    """The request that carries one child, as rendered at seal time (no secrets, no transport
    headers).

    ``path`` is the rendered path plus the normalized query (keys sorted). ``headers`` are the
    profile's semantic headers. For a multipart body, ``content_type`` includes the boundary and
    ``content_length`` is the complete emitted body; for a single body both describe the payload.
    """

    method: str
    path: str
    headers: dict[str, str]
    content_type: str
    content_length: ByteCount
    scalar_parts: tuple[tuple[str, str], ...] = ()
    payload_part_name: str | None = None
    filename: str | None = None
    multipart_boundary: str | None = None


class PayloadCodec(StrictModel):
    """How the payload bytes were produced: format, compression, codec rules and libraries."""

    payload: PayloadFormat
    codec: Codec
    libraries: dict[str, str]


class PayloadLineage(StrictModel):
    """Where the payload came from: the frozen parent and the compiled plan."""

    parent_digest: Digest
    parent_key: str
    plan_digest: Digest
    logical_route_id: str
    environment: str


class PayloadDocument(StrictModel):
    """`dpone.rest_payload.v1`: one sealed child, published next to its payload bytes."""

    schema_id: Literal["dpone.rest_payload.v1"] = Field(default=PAYLOAD_SCHEMA_ID, alias="schema")
    producer: str
    child: ChildDescriptor
    lineage: PayloadLineage
    payload: ArtifactRef
    decoded_bytes: ByteCount
    wire_bytes: ByteCount
    codec: PayloadCodec
    identities: ChildIdentities
    request: RenderedRequest

    def canonical_bytes(self) -> bytes:
        """The document as canonical JSON: the bytes published and hashed for its key."""
        return canonical_json(self.model_dump(mode="json", by_alias=True))


class SealedChild(StrictModel):
    """One sealed child: descriptor, payload and document refs, identities, request summary."""

    descriptor: ChildDescriptor
    payload: ArtifactRef
    document: ArtifactRef
    identities: ChildIdentities
    request: RenderedRequest


class SealedTopology(StrictModel):
    """Every child of one parent, sealed and published, bound by ``parent_plan_digest``."""

    parent_digest: Digest
    plan_digest: Digest
    profile_contract_digest: Digest
    planner_algorithm_version: str
    parent_plan_digest: Digest
    total_rows: RowIndex
    children: tuple[SealedChild, ...]
    coverage: CoverageProof


SEAL_RECORD_SCHEMA_ID: Final = "dpone.seal_record.v1"
SEAL_RECORD_KEY_PREFIX: Final = "seals/sha256/"


class SealRecord(StrictModel):
    """`dpone.seal_record.v1`: which frozen parent one seal of a plan and boundary produced.

    Published create-if-absent under ``seals/sha256/<plan hex>/<from>_<to>/<sequence>.json``;
    the highest sequence is the last seal of that plan and boundary, so a later seal can say
    that its source bytes differ from the last one.
    """

    schema_id: Literal["dpone.seal_record.v1"] = Field(default=SEAL_RECORD_SCHEMA_ID,
                                                       alias="schema")
    sequence: Annotated[int, Field(ge=1)]
    plan_digest: Digest
    boundary_from: dt.date
    boundary_to: dt.date
    parent_digest: Digest
    parent_plan_digest: Digest
    total_rows: RowIndex
    child_count: Annotated[int, Field(ge=0)]

    def canonical_bytes(self) -> bytes:
        return canonical_json(self.model_dump(mode="json", by_alias=True))
