"""Platform-owned operation profiles: protocol semantics, codecs, limits and execution policy."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from dpone.contracts._base import Name, StrictModel
from dpone.contracts.certification import Maturity

PROFILE_SCHEMA_ID = "dpone.operation_profile.v1"

Status = Annotated[int, Field(ge=100, le=599)]
RefusalStatus = Annotated[int, Field(ge=400, le=499)]
"""A client-error status: only a 4xx answer can certify that nothing was applied."""
SuccessStatus = Annotated[int, Field(ge=200, le=299)]
TemplateText = Annotated[str, Field(min_length=1, max_length=2048)]
Pointer = Annotated[str, Field(max_length=512)]
HeaderName = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9-]{0,63}$")]
PartName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")]
Seconds = Annotated[int, Field(ge=0, le=31_536_000)]
PositiveCount = Annotated[int, Field(ge=1, le=1_000_000_000_000)]
PhaseWord = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]

SUBMIT_THROTTLE_STATUSES: frozenset[int] = frozenset({408, 425, 429, 500, 502, 503, 504})
"""Submit answers that ask for a later attempt: replayed only under a certified fence."""


class ReceiptLocation(StrictModel):
    """A receipt carried by a ``Location`` / ``Operation-Location`` header, read as a path.

    The transport canonicalizes an absolute location of the binding's own origin (scheme,
    host, port) to its relative path; an absolute location of any other origin, userinfo,
    a query, a fragment, a backslash or a path outside ``path_prefix`` is refused (the receipt
    is absent: the effect stays UNKNOWN and nothing is polled). The receipt value is the one
    segment after ``path_prefix`` (unreserved characters only, never ``.`` or ``..``), which
    the poll path renders back under the binding's authority.
    """

    path_prefix: Annotated[str, Field(pattern=r"^/(?:[A-Za-z0-9_~-][A-Za-z0-9._~-]*/)*$",
                                      max_length=512)]


class Extractor(StrictModel):
    """A typed receipt/state extractor: an RFC 6901 pointer into the JSON body, or a header."""

    body_json_pointer: Pointer | None = None
    header: HeaderName | None = None
    required: bool = True
    type: Literal["string", "integer"] = "string"
    location: ReceiptLocation | None = None
    """Read the header as a receipt location (see :class:`ReceiptLocation`)."""

    @model_validator(mode="after")
    def _exactly_one_source(self) -> Extractor:
        if (self.body_json_pointer is None) == (self.header is None):
            raise ValueError("give exactly one of 'body_json_pointer' or 'header'")
        if self.location is not None and (self.header is None or self.type != "string"):
            raise ValueError("'location' reads a string header only")
        return self

    @model_serializer(mode="wrap")
    def _without_absent_location(self, handler: SerializerFunctionWrapHandler) -> Any:
        """An extractor without ``location`` dumps as it did before the field existed, so the
        digests of every profile that does not use it are unchanged."""
        dumped = handler(self)
        if isinstance(dumped, dict) and dumped.get("location") is None:
            dumped.pop("location", None)
        return dumped


class PayloadFormat(StrictModel):
    format: Literal["csv", "ndjson", "json_array", "raw"]
    compression: Literal["gzip", "none"] = "none"
    content_type: Annotated[str, Field(pattern=r"^[a-z]+/[A-Za-z0-9.+-]+$")]


class PayloadPart(PayloadFormat):
    name: PartName


class ScalarPart(StrictModel):
    value_from: Annotated[str, Field(max_length=128)] | None = None
    template: TemplateText | None = None
    format: Literal["date", "string"] = "string"

    @model_validator(mode="after")
    def _exactly_one_value(self) -> ScalarPart:
        if (self.value_from is None) == (self.template is None):
            raise ValueError("give exactly one of 'value_from' or 'template'")
        return self


class Body(StrictModel):
    type: Literal["multipart_file", "single"]
    payload_part: PayloadPart | None = None
    payload: PayloadFormat | None = None
    scalar_parts: dict[PartName, ScalarPart] = {}

    @model_validator(mode="after")
    def _shape(self) -> Body:
        if self.type == "multipart_file" and (self.payload_part is None or self.payload):
            raise ValueError("multipart_file takes exactly one 'payload_part' and no 'payload'")
        if self.type == "single" and (self.payload is None or self.payload_part or self.scalar_parts):
            raise ValueError("single takes 'payload' only")
        return self

    @property
    def payload_format(self) -> PayloadFormat:
        chosen = self.payload_part if self.type == "multipart_file" else self.payload
        if chosen is None:  # unreachable after validation
            raise ValueError("body has no payload")
        return chosen


class Request(StrictModel):
    method: Annotated[str, Field(pattern=r"^[A-Z]{3,10}$")]
    path: TemplateText
    query: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")], TemplateText] = {}
    headers: dict[HeaderName, TemplateText] = {}
    media_type: Annotated[str, Field(pattern=r"^[a-z]+/[A-Za-z0-9.+-]+$")]
    body: Body


class Duplicate(StrictModel):
    statuses: Annotated[tuple[Status, ...], Field(min_length=1)]
    requires_receipt_for_same_delivery_key: bool = True
    same_key_receipt: dict[Name, Extractor] = {}


class KeyEcho(StrictModel):
    """Where a receipt poll answer echoes the receiver mutation key of the job it describes.

    Certifying an echo binds every 200 poll answer to the child that submitted the job: the
    value at ``body_json_pointer`` (or in ``header``) must equal the key in the ``form`` the
    sealed request carried it. ``payload_filename``: the sealed multipart filename
    (``<hex of receiver_mutation_key>.<extension>``; needs a ``multipart_file`` body);
    ``receiver_mutation_key``: the key itself (``sha256:<hex>``; needs a request template that
    sends ``{receiver_mutation_key}``). The compiler refuses a form the sealed request does not
    carry. An answer without the echo, or with another value (a reused receipt id naming
    another job), is not an answer about this child: the poll is protocol-unknown and the
    remote effect UNKNOWN. Without a certified echo, a poll answer is trusted on its counters
    alone.
    """

    body_json_pointer: Pointer | None = None
    header: HeaderName | None = None
    form: Literal["payload_filename", "receiver_mutation_key"] = "payload_filename"

    @model_validator(mode="after")
    def _exactly_one_source(self) -> KeyEcho:
        if (self.body_json_pointer is None) == (self.header is None):
            raise ValueError("give exactly one of 'body_json_pointer' or 'header'")
        return self

    def extractor(self) -> Extractor:
        """The echo as an optional string extractor (a missing echo is a mismatch, not an
        extraction failure)."""
        return Extractor(body_json_pointer=self.body_json_pointer, header=self.header,
                         required=False, type="string")


class Poll(StrictModel):
    """The read-only receipt poll; ``key_echo``, when certified, binds answers to the child."""

    method: Literal["GET", "HEAD"]
    path: TemplateText
    state: Extractor
    running: Annotated[tuple[PhaseWord, ...], Field(min_length=1)]
    succeeded: Annotated[tuple[PhaseWord, ...], Field(min_length=1)]
    partial: tuple[PhaseWord, ...] = ()
    failed: tuple[PhaseWord, ...] = ()
    cancelled: tuple[PhaseWord, ...] = ()
    expired_statuses: tuple[Status, ...] = (404, 410)
    key_echo: KeyEcho | None = None


class KeyQueryAbsence(StrictModel):
    """When an absent answer of the query by key proves that the child was NOT applied.

    An answer with one of ``statuses`` means "the receiver holds nothing under this key". It is
    proof only in an environment listed in ``certified_environments`` and only once the
    latest submit attempt of the child started at least ``receipt_ttl_s + skew_margin_s``
    seconds ago: ``receipt_ttl_s`` is the certified longest time a submit can still take effect
    (or its key become visible to the query) after it was sent, ``skew_margin_s`` the clock
    skew allowed between dpone and the receiver. Anywhere else, or earlier, an absent answer
    proves nothing and the effect stays unknown. The certification also asserts that the
    receiver keeps a key's record at least as long as the effect it names.
    """

    statuses: Annotated[tuple[Literal[404, 410], ...], Field(min_length=1)]
    """Only "not found" and "gone" can mean "no such key"; an auth refusal, a throttle or a bad
    request says nothing about the key."""
    certified_environments: tuple[Name, ...] = ()
    receipt_ttl_s: Seconds
    skew_margin_s: Seconds


class QueryByKey(StrictModel):
    """A read-only lookup of what the receiver holds under this child's key.

    ``GET path`` (relative to the binding's authority, like the poll) where the path carries
    only ``{receiver_mutation_key}`` and/or ``{delivery_key}``, and only a key the submit
    request itself carries. A ``found_statuses`` answer names the job or batch applied under
    the key: ``receipt`` extracts it in the shape the journal keeps receipts (every field of
    ``acknowledgement.receipt``), and ``key_echo``, when certified, must echo this child's key
    exactly or the answer is about another key (unknown). An ``absence.statuses`` answer is
    absence, proven only as :class:`KeyQueryAbsence` says. Any other answer is unknown.

    ``answer`` says what a found answer is: ``receipt`` (it names the job; its status is then
    polled with ``acknowledgement.poll``, so an expired receipt proves nothing) or
    ``job_status`` (it IS the job's status document in the form the poll reads: the poll's
    ``state`` extractor, key echo and, with ``verification.counters_from: poll_response``, the
    counters; the effect is proven from it and no receipt poll is sent).
    """

    method: Literal["GET"]
    path: TemplateText
    found_statuses: Annotated[tuple[SuccessStatus, ...], Field(min_length=1)]
    receipt: Annotated[dict[Name, Extractor], Field(min_length=1)]
    answer: Literal["receipt", "job_status"] = "receipt"
    key_echo: KeyEcho | None = None
    absence: KeyQueryAbsence


class Acknowledgement(StrictModel):
    accepted_statuses: Annotated[tuple[Status, ...], Field(min_length=1)]
    rejected_before_effect_statuses: tuple[RefusalStatus, ...] = ()
    """Statuses the receiver answers only when it refused the submit before applying anything
    (an authentication or authorization refusal): the child waits, NONE_PROVEN, until the
    credential is fixed, then is resubmitted with the same delivery key."""
    receipt: dict[Name, Extractor] = {}
    duplicate: Duplicate | None = None
    poll: Poll | None = None
    query_by_key: QueryByKey | None = None


class Verification(StrictModel):
    """Where the receiver's counters come from, compared with the sealed row count."""

    counters_from: Literal["submit_response", "poll_response"]
    accepted_rows: Extractor
    rejected_rows: Extractor | None = None


class MutationFence(StrictModel):
    type: Literal["none", "receiver_duplicate_key", "idempotency_key_header"]
    location: Literal["payload_filename", "header"] | None = None
    value_from: Literal["receiver_mutation_key"] | None = None
    header_name: HeaderName | None = None
    key_payload_binding: Literal["required", "not_required"] | None = None
    certification_ref: Annotated[str, Field(max_length=256)] | None = None
    certified_environments: tuple[Name, ...] = ()


class WindowDays(StrictModel):
    default: Annotated[int, Field(ge=1, le=366)]
    min: Annotated[int, Field(ge=1, le=366)]
    max: Annotated[int, Field(ge=1, le=366)]

    @model_validator(mode="after")
    def _ordered(self) -> WindowDays:
        if not self.min <= self.default <= self.max:
            raise ValueError("need min <= default <= max")
        return self


class Limits(StrictModel):
    max_rows: PositiveCount
    planning_rows: PositiveCount | None = None
    max_decoded_bytes: PositiveCount
    planning_decoded_bytes: PositiveCount
    max_wire_bytes: PositiveCount
    planning_wire_bytes: PositiveCount
    preferred_window_days: WindowDays
    max_children: Annotated[int, Field(ge=1, le=100_000)] = 10_000

    @model_validator(mode="after")
    def _planning_within_hard(self) -> Limits:
        pairs = [("planning_decoded_bytes", self.planning_decoded_bytes, self.max_decoded_bytes),
                 ("planning_wire_bytes", self.planning_wire_bytes, self.max_wire_bytes),
                 ("planning_rows", self.planning_rows or self.max_rows, self.max_rows)]
        for name, planning, hard in pairs:
            if planning > hard:
                raise ValueError(f"{name} exceeds its hard max")
        return self


class CsvCodec(StrictModel):
    encoding: Literal["utf-8"] = "utf-8"
    bom: bool = False
    delimiter: Literal[",", ";", "\t", "|"] = ","
    quote: Literal['"'] = '"'
    escape: Literal["double_quote"] = "double_quote"
    quoting: Literal["needed", "all_strings"] = "needed"
    line_terminator: Literal["\n", "\r\n"] = "\n"
    header: bool = True
    null: Annotated[str, Field(max_length=16)] = ""
    empty_string: Annotated[str, Field(max_length=16)] = '""'
    decimal: Literal["shortest_roundtrip"] = "shortest_roundtrip"
    timestamp_precision: Literal["s", "ms", "us"] = "ms"
    timestamp_zone: Literal["UTC"] = "UTC"

    @model_validator(mode="after")
    def _null_is_distinct(self) -> CsvCodec:
        if self.null == self.empty_string:
            raise ValueError("null and empty string must have distinct encodings")
        return self


class JsonCodec(StrictModel):
    field_order: Literal["mapping"] = "mapping"
    non_ascii: Literal["raw_utf8", "escape"] = "raw_utf8"
    null: Literal["explicit_null", "omit"] = "explicit_null"
    numbers: Literal["shortest_roundtrip"] = "shortest_roundtrip"
    timestamp_precision: Literal["s", "ms", "us"] = "ms"
    timestamp_zone: Literal["UTC"] = "UTC"


class GzipCodec(StrictModel):
    level: Annotated[int, Field(ge=1, le=9)] = 6
    mtime: Literal[0] = 0
    library: Literal["zlib"] = "zlib"


class Codec(StrictModel):
    csv: CsvCodec = CsvCodec()
    json_codec: JsonCodec = Field(default=JsonCodec(), alias="json")
    gzip: GzipCodec = GzipCodec()


class Timeouts(StrictModel):
    dns_s: Seconds = 5
    connect_s: Seconds = 5
    tls_s: Seconds = 10
    write_s: Seconds = 60
    read_s: Seconds = 60
    pool_s: Seconds = 10
    request_total_s: Seconds = 300
    operation_total_s: Seconds = 86_400
    poll_interval_s: Seconds = 10
    receipt_ttl_s: Seconds = 86_400


class Backoff(StrictModel):
    max_attempts: Annotated[int, Field(ge=1, le=100)]
    initial_delay_s: Seconds = 1
    max_delay_s: Seconds = 60
    budget_s: Seconds = 600


class Retry(StrictModel):
    submit: Backoff
    observation: Backoff
    retry_after: Literal["honor"] = "honor"


class Rate(StrictModel):
    submit_per_minute: PositiveCount = 60
    poll_per_minute: PositiveCount = 120
    max_active_requests: Annotated[int, Field(ge=1, le=64)] = 1
    max_active_remote_jobs: Annotated[int, Field(ge=1, le=64)] = 1


class Retention(StrictModel):
    payload_days: Annotated[int, Field(ge=1, le=3650)] = 30
    observation_days: Annotated[int, Field(ge=1, le=3650)] = 30


class ResponseBounds(StrictModel):
    max_body_bytes: Annotated[int, Field(ge=256, le=16_777_216)] = 65_536
    max_depth: Annotated[int, Field(ge=1, le=64)] = 16
    max_fields: Annotated[int, Field(ge=1, le=100_000)] = 1_000
    max_string_bytes: Annotated[int, Field(ge=16, le=1_048_576)] = 4_096


class Observability(StrictModel):
    max_observations: Annotated[int, Field(ge=1, le=100_000)] = 1_000
    evidence_scalars: tuple[Name, ...] = ()
    response_bounds: ResponseBounds = ResponseBounds()


class ResultPolicy(StrictModel):
    all_rows_accounted: bool = True
    partial_result: Literal["fail_and_retain"] = "fail_and_retain"
    empty_input: Literal["skip", "promote"] = "skip"


class OperationProfile(StrictModel):
    schema_id: Literal["dpone.operation_profile.v1"] = Field(alias="schema")
    id: Name
    version: Annotated[int, Field(ge=1, le=999_999)]
    description: Annotated[str, Field(max_length=2000)] | None = None
    lifecycle: Literal["active", "deprecated"] = "active"
    maturity: Maturity = "experimental"
    """How far the profile's claims are proven: ``experimental`` after static tests, ``beta``
    after a local-live certification, ``production`` after a vendor-live one. An environment's
    ``certification.minimum_maturity`` refuses a less mature profile."""
    protocol_family: Annotated[str, Field(pattern=r"^[a-z_]{1,64}$")]
    supported_mutations: Annotated[
        tuple[Literal["partition_replace", "incremental_append"], ...], Field(min_length=1)
    ]
    request: Request
    acknowledgement: Acknowledgement
    verification: Verification
    mutation_fence: MutationFence
    effect_conflict_group: Name
    limits: Limits
    max_in_flight_children: Annotated[int, Field(ge=1, le=64)] = 1
    codec: Codec = Codec()
    timeouts: Timeouts = Timeouts()
    retry: Retry
    rate: Rate = Rate()
    retention: Retention = Retention()
    observability: Observability = Observability()
    result_policy: ResultPolicy = ResultPolicy()

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"
