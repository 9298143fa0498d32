"""The synthetic requests a certification sends: rendered as the sealer renders a child's.

Every case draws fresh random keys (:func:`fresh_keys`): a ``delivery_key`` and a
``receiver_mutation_key`` of the sealer's form (``sha256:<hex>``), so the receiver sees the key
where the profile's fence carries it: in the multipart payload filename
(``<hex of receiver_mutation_key>.<extension>``, the sealer's naming rule) or in the header the
request template renders from ``{receiver_mutation_key}``. ``resource`` is the binding's
certification sandbox, ``scope.from`` today (UTC) and ``scope.to`` the day after. The body is
three synthetic rows (:data:`MAPPING`) encoded in the profile's payload format with its codec
and compression, inside the same deterministic multipart envelope as a sealed child's;
``variant`` changes the row values, so the same keys can go out with other bytes. Rows carry
only the run's marker, a row number, the day and a number: never data of anyone's.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

import pyarrow as pa

from dpone.codecs import MultipartEnvelope, compress, encode_rows
from dpone.contracts.mapping import MappedColumn, PayloadMapping
from dpone.contracts.profile import KeyEcho, OperationProfile, PayloadFormat
from dpone.contracts.transport import OutboundRequest
from dpone.executor.seal import payload_extension
from dpone.grammar import TemplateContext, parse_template

MAPPING = PayloadMapping(
    schema_id="dpone.payload_mapping.v1", id="dpone.certification.v1",
    columns=(MappedColumn(name="certification_run", type="string", nullable=False),
             MappedColumn(name="row", type="int64", nullable=False),
             MappedColumn(name="business_date", type="date", nullable=False),
             MappedColumn(name="value", type="float64", nullable=False)),
    sort_keys=("row",))
"""The synthetic rows' closed mapping."""
ROWS = 3


@dataclass(frozen=True, slots=True)
class Keys:
    """One case's keys, in the sealer's ``sha256:<hex>`` form."""

    delivery_key: str
    receiver_mutation_key: str


def fresh_keys() -> Keys:
    return Keys(delivery_key="sha256:" + secrets.token_hex(32),
                receiver_mutation_key="sha256:" + secrets.token_hex(32))


@dataclass(frozen=True, slots=True)
class Submit:
    """One synthetic submit: the request (its body replayable), its keys and wire digest."""

    request: OutboundRequest
    keys: Keys
    filename: str | None
    body_digest: str
    variant: int


def _payload(marker: str, variant: int, day: dt.date, profile: OperationProfile,
             payload: PayloadFormat) -> bytes:
    if payload.format == "raw":  # a file, not rows: send the rows' CSV text as the file
        lines = [f"{marker},{row},{day.isoformat()},{row + variant}.5" for row in range(1, ROWS + 1)]
        return ("certification_run,row,business_date,value\n" + "\n".join(lines) + "\n").encode()
    table = pa.table({
        "certification_run": pa.array([marker] * ROWS, pa.string()),
        "row": pa.array(list(range(1, ROWS + 1)), pa.int64()),
        "business_date": pa.array([day] * ROWS, pa.date32()),
        "value": pa.array([row + variant + 0.5 for row in range(1, ROWS + 1)], pa.float64()),
    })
    decoded = encode_rows(table, MAPPING, payload, profile.codec)
    return b"".join(compress(decoded, payload, profile.codec))


def _extension(payload: PayloadFormat) -> str:
    return "raw" if payload.format == "raw" else payload_extension(payload)


def payload_filename(receiver_key: str, payload: PayloadFormat) -> str:
    """The sealer's multipart filename rule: ``<hex of the key>.<extension>``."""
    return f"{receiver_key.removeprefix('sha256:')}.{_extension(payload)}"


class RequestFactory:
    """Renders one profile's submit, poll and key query for synthetic keys."""

    def __init__(self, profile: OperationProfile, resource: str, marker: str,
                 today: dt.date) -> None:
        self.profile = profile
        self.resource = resource
        self.marker = marker
        self._day = today
        self._scope = {"scope.from": today.isoformat(),
                       "scope.to": (today + dt.timedelta(days=1)).isoformat()}

    def _values(self, keys: Keys) -> dict[str, str]:
        return {"resource": self.resource, "delivery_key": keys.delivery_key,
                "receiver_mutation_key": keys.receiver_mutation_key, **self._scope}

    def submit(self, keys: Keys, variant: int = 0) -> Submit:
        request = self.profile.request
        values = self._values(keys)
        payload_format = request.body.payload_format
        payload = _payload(self.marker, variant, self._day, self.profile, payload_format)
        path = parse_template(request.path, context=TemplateContext.PATH).render(values)
        query = tuple((name, parse_template(text, context=TemplateContext.QUERY).render(values))
                      for name, text in sorted(request.query.items()))
        headers = tuple((name, parse_template(text, context=TemplateContext.HEADER).render(values))
                        for name, text in sorted(request.headers.items()))
        filename: str | None = None
        if request.body.type == "multipart_file" and request.body.payload_part is not None:
            part = request.body.payload_part
            filename = payload_filename(keys.receiver_mutation_key, part)
            envelope = MultipartEnvelope(
                payload_name=part.name, filename=filename, content_type=part.content_type,
                scalar_parts=self._scalars(values), payload_size=len(payload),
                payload_digest="sha256:" + hashlib.sha256(payload).hexdigest(),
                payload=lambda: [payload])
            body, content_type = envelope.body(payload), envelope.content_type
        else:
            body, content_type = payload, payload_format.content_type
        outbound = OutboundRequest(method=request.method, path=path, content_type=content_type,
                                   body=[body], content_length=len(body), query=query,
                                   headers=headers)
        return Submit(request=outbound, keys=keys, filename=filename,
                      body_digest="sha256:" + hashlib.sha256(body).hexdigest(), variant=variant)

    def _scalars(self, values: Mapping[str, str]) -> list[tuple[str, str]]:
        parts: list[tuple[str, str]] = []
        for name, part in self.profile.request.body.scalar_parts.items():
            if part.value_from is not None:
                parts.append((name, values[part.value_from]))
            elif part.template is not None:
                template = parse_template(part.template, context=TemplateContext.MULTIPART_SCALAR)
                parts.append((name, template.render(values)))
        return parts

    def poll(self, receipt: Mapping[str, str | int]) -> OutboundRequest:
        """The read-only receipt poll (the caller checked that the profile has one)."""
        poll = self.profile.acknowledgement.poll
        if poll is None:
            raise ValueError(f"profile {self.profile.ref} has no receipt poll")
        values = {f"receipt.{name}": str(value) for name, value in receipt.items()}
        path = parse_template(poll.path, context=TemplateContext.PATH,
                              allow_receipt=True).render(values)
        return OutboundRequest(method=poll.method, path=path)

    def key_query(self, keys: Keys) -> OutboundRequest:
        """The read-only lookup by key (the caller checked that the profile declares one)."""
        query = self.profile.acknowledgement.query_by_key
        if query is None:
            raise ValueError(f"profile {self.profile.ref} declares no query by key")
        path = parse_template(query.path, context=TemplateContext.PATH).render(
            {"receiver_mutation_key": keys.receiver_mutation_key,
             "delivery_key": keys.delivery_key})
        return OutboundRequest(method=query.method, path=path)


def expected_echo(echo: KeyEcho, submit: Submit) -> str:
    """What a key echo of this submit's job must say, in the echo's form."""
    if echo.form == "payload_filename":
        return submit.filename or ""
    return submit.keys.receiver_mutation_key


def shown_path(request: OutboundRequest) -> str:
    """The request target as evidence shows it: path and query (no credential travels there:
    an API key in the query is refused by the compiler)."""
    return request.path + ("?" + urlencode(request.query) if request.query else "")
