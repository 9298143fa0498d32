"""OAuth 2.0 client-credentials token fetch (RFC 6749 section 4.4) at the binding authority.

The token endpoint is ``authority + auth_options.token_path``: data never chooses where the
credential goes. The client authenticates with HTTP Basic (section 2.3.1). The response is read
with a byte bound; its body never enters an error message.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Final

import httpx

from dpone.contracts.secret import Credential, Secret
from dpone.executor.transport._auth import TokenGrant

MAX_TOKEN_RESPONSE_BYTES: Final = 65_536


class CredentialFetchFailed(Exception):
    """No token could be obtained; the delivery request itself was never sent."""

    def __init__(self, detail: str, *, status: int | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status


def fetch_client_credentials(client: httpx.Client, *, token_path: str, credential: Credential,
                             scopes: Sequence[str], timeout: httpx.Timeout) -> TokenGrant:
    """POST ``grant_type=client_credentials`` to ``token_path`` and parse the bearer grant."""
    pair = f"{credential.secret('client_id').reveal()}:{credential.secret('client_secret').reveal()}"
    form = {"grant_type": "client_credentials"}
    if scopes:
        form["scope"] = " ".join(scopes)
    headers = {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii"),
               "Accept": "application/json", "Accept-Encoding": "identity"}
    try:
        with client.stream("POST", token_path, data=form, headers=headers,
                           timeout=timeout) as response:
            body = bytearray()
            chunks = (response.content,) if response.is_stream_consumed else response.iter_raw()
            for chunk in chunks:
                body += chunk
                if len(body) > MAX_TOKEN_RESPONSE_BYTES:
                    raise CredentialFetchFailed("token response exceeds its byte bound",
                                                status=response.status_code)
            status = response.status_code
    except httpx.TransportError as exc:
        raise CredentialFetchFailed(f"token endpoint unreachable: {type(exc).__name__}") from exc
    if status != 200:
        raise CredentialFetchFailed(f"token endpoint answered {status}", status=status)
    return _grant(bytes(body), status)


def _grant(body: bytes, status: int) -> TokenGrant:
    try:
        document = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise CredentialFetchFailed("token response is not JSON", status=status) from None
    if not isinstance(document, dict):
        raise CredentialFetchFailed("token response is not a JSON object", status=status)
    token = document.get("access_token")
    if not isinstance(token, str) or not token or not token.isascii() or not token.isprintable() \
            or token != token.strip():
        raise CredentialFetchFailed("token response has no usable access_token", status=status)
    token_type = document.get("token_type", "bearer")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise CredentialFetchFailed("token response is not a bearer token", status=status)
    expires_in = document.get("expires_in")
    if expires_in is not None and (isinstance(expires_in, bool)
                                   or not isinstance(expires_in, int) or expires_in <= 0):
        raise CredentialFetchFailed("token response has an invalid expires_in", status=status)
    return TokenGrant(access_token=Secret(token),
                      expires_in=float(expires_in) if expires_in is not None else None)
