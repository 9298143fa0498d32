"""Refuse secret *values* in any authoring file: bindings hold `credential_ref` only."""

from __future__ import annotations

import re

from dpone.compiler._yaml import LoadedDocument, iter_paths
from dpone.contracts import DponeError

_SECRET_KEY = re.compile(
    r"(pass(word|wd)?|secret|api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|^token$|"
    r"private[_-]?key|client[_-]?secret|authorization|bearer|cookie)",
    re.IGNORECASE,
)
_ALLOWED_KEYS = {"credential_ref", "token_path", "api_key_header"}
_SECRET_VALUE = re.compile(
    r"^(Bearer\s+\S|Basic\s+[A-Za-z0-9+/=]{8,})|-----BEGIN [A-Z ]*PRIVATE KEY-----|"
    r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|\bsk_(live|test)_[A-Za-z0-9]{8,}|"
    r"\bAKIA[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{20,}|\bxox[abpr]-[A-Za-z0-9-]{10,}",
)
_CREDENTIAL_REF = re.compile(r"^(env:[A-Z][A-Z0-9_]*|file:/\S+|vault://\S+|conn:[A-Za-z0-9_]+)$")


def refuse_secret_values(doc: LoadedDocument) -> None:
    """Raise ``binding.secret_value`` for anything that looks like an inline credential."""
    for path, value in iter_paths(doc.data):
        key = path[-1] if path else None
        secret_key = isinstance(key, str) and key not in _ALLOWED_KEYS and _SECRET_KEY.search(key)
        if secret_key and value not in (None, "", []) and not isinstance(value, dict):
            raise DponeError(
                code="binding.secret_value",
                message=f"field {key!r} holds a value; secrets are never written in files",
                location=doc.locate(path),
                hint="bindings name a credential_ref (env:NAME, file:/path, vault://path)",
            )
        if isinstance(value, str) and _SECRET_VALUE.search(value):
            raise DponeError(
                code="binding.secret_value",
                message="value looks like a credential; secrets are never written in files",
                location=doc.locate(path),
                hint="reference it with credential_ref instead",
            )
        if key == "credential_ref" and isinstance(value, str) and not _CREDENTIAL_REF.match(value):
            raise DponeError(
                code="binding.secret_value",
                message="credential_ref must be a reference (env:, file:, vault:, conn:), "
                "not a value",
                location=doc.locate(path),
            )
