"""The strict frozen base model, validated scalar types and canonical JSON."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints

_DIGEST_RE = re.compile(r"^sha256:[0-9a-f]{64}$")


class StrictModel(BaseModel):
    """Every artifact and authoring model: closed to unknown fields, immutable, no coercion."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        populate_by_name=True,
        validate_default=True,
        defer_build=True,
    )


def _check_digest(value: str) -> str:
    if not _DIGEST_RE.match(value):
        raise ValueError("expected 'sha256:' followed by 64 lowercase hex digits")
    return value


Digest = Annotated[str, AfterValidator(_check_digest)]
"""A rendered identity or content digest: ``sha256:<64 hex>``."""

Name = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*(?:[.-][a-z0-9_]+)*$", max_length=128)]
"""A lower-case dotted identifier such as ``mock.dataset-jobs`` or ``mock_measurements``."""

def canonical_json(document: Any) -> bytes:
    """Canonical JSON: sorted keys, UTF-8, no insignificant whitespace, no NaN."""
    return json.dumps(
        document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def content_digest(data: bytes) -> str:
    """The content address of a byte string: ``sha256:<hex>`` of the bytes themselves."""
    return "sha256:" + hashlib.sha256(data).hexdigest()
