"""Where sealed payloads live and what they are called: pure naming rules (contracts only).

Kept apart from the encoders so that a command that only names a payload (``inspect`` of a
multipart delivery) loads no Arrow, codec or template grammar.
"""

from __future__ import annotations

from dpone.contracts import DponeError
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.profile import PayloadFormat
from dpone.contracts.sealed import PAYLOAD_KEY_PREFIX

_EXTENSIONS = {"csv": "csv", "ndjson": "ndjson", "json_array": "json"}


def payload_extension(payload: PayloadFormat) -> str:
    """The file extension of a payload: ``csv``, ``ndjson`` or ``json``, plus ``.gz`` if gzipped."""
    base = _EXTENSIONS.get(payload.format)
    if base is None:
        raise DponeError(code="input.invalid_argument",
                         message=f"payload format {payload.format!r} is a file, not rows; "
                                 "the sealer encodes rows only")
    return base + (".gz" if payload.compression == "gzip" else "")


def payload_key(digest: str, extension: str) -> str:
    """Where payload bytes live: ``payloads/sha256/<hex>.<extension>``."""
    return f"{PAYLOAD_KEY_PREFIX}{digest.removeprefix('sha256:')}.{extension}"


def filename(receiver_key: str, extension: str) -> str:
    """The deterministic multipart filename: ``<hex of receiver_mutation_key>.<extension>``."""
    return f"{receiver_key.removeprefix('sha256:')}.{extension}"


def payload_filename(plan: RestDeliveryPlan, receiver_key: str) -> str | None:
    """The filename a child of ``plan`` is sent under (None when its body is not multipart)."""
    body = plan.profile.snapshot.request.body
    if body.type != "multipart_file":
        return None
    return filename(receiver_key, payload_extension(body.payload_format))
