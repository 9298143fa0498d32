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
_TOKEN = r"[A-Za-z0-9._~+/=-]*[0-9][A-Za-z0-9._~+/=-]*"
_SECRET_VALUE = re.compile(
    # Anywhere in a string, not only at its start: an authored description or comment field
    # can carry a pasted header ("use header Authorization: Bearer 9f8e...").
    rf"\b(?:Bearer|Basic|Token)\s+(?={_TOKEN})[A-Za-z0-9._~+/=-]{{8,}}|"
    r"\bAuthorization\s*[:=]\s*(?!\s*(?:env:|file:/|vault://|conn:))\S{6,}|"
    r"\bBasic\s+(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*[a-z])[A-Za-z0-9+/]{12,}={0,2}|"
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----|"
    r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|\bsk_(live|test)_[A-Za-z0-9]{8,}|"
    r"\bAKIA[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{20,}|\bxox[abpr]-[A-Za-z0-9-]{10,}|"
    # key=value / key: value assignments of a credential word to a token with a digit in it
    rf"(?i:\b(?:pass(?:word|wd)?|pwd|secret|client[_-]?secret|api[_-]?key|apikey|"
    rf"access[_-]?(?:key|token)|auth[_-]?token|token)\s*[:=]\s*[\"']?(?={_TOKEN}\b)"
    rf"(?!(?:env:|file:/|vault://|conn:))[A-Za-z0-9._~+/=-]{{8,}})",
)
_URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@")
"""A URL with a password in its userinfo."""
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
        # A control-plane locator's password has its own refusal (environment.secret_in_url).
        locator = bool(path) and path[0] == "control_plane"
        for text in (value, key):
            if isinstance(text, str) and not locator and (
                    _SECRET_VALUE.search(text) or _URL_PASSWORD.search(text)):
                # The message never repeats the text: it would print the secret.
                raise DponeError(
                    code="binding.secret_value",
                    message=("a value" if text is value else "a key") + " looks like a "
                    "credential (a header, token, key or password inside the text); secrets "
                    "are never written in authoring files",
                    location=doc.locate(path),
                    hint="Remove it: reference a credential with credential_ref (env:NAME, "
                         "file:/path, vault://path) in the binding; never write its value.",
                )
        if key == "credential_ref" and isinstance(value, str) and not _CREDENTIAL_REF.match(value):
            raise DponeError(
                code="binding.secret_value",
                message="credential_ref must be a reference (env:, file:, vault:, conn:), "
                "not a value",
                location=doc.locate(path),
            )
