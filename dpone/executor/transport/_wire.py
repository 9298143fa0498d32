"""What a request looks like on the wire, without sending it: one definition for the transport
and for `dpone preview`.

:func:`request_url` checks a rendered path and joins it to the binding's authority;
:func:`wire_headers` adds the body's ``Content-Type``/``Content-Length`` to the request's own
headers and refuses a header the transport owns; :data:`CLIENT_HEADERS` are the headers the
client sends on every request; :func:`credential_header` names the header the binding's
credential travels in and shows it as its reference (never a value).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

import httpx

from dpone import __version__
from dpone.contracts import DponeError
from dpone.contracts.binding import ConnectionBinding
from dpone.contracts.transport import OutboundRequest

CLIENT_HEADERS: Final = {"User-Agent": f"dpone/{__version__}", "Accept-Encoding": "identity"}
"""Sent with every request (``identity``: the byte bound applies to what is actually read)."""
BODYLESS: Final = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})


def request_url(base: httpx.URL, path: str) -> httpx.URL:
    """``path`` under the authority ``base``: an ASCII path starting with one ``/``, without
    query, fragment, control characters, backslashes or dot segments, that stays on ``base``."""
    bad = (not path.startswith("/") or path.startswith("//") or not path.isascii()
           or any(ch in path for ch in "\\?#") or any(ord(ch) <= 0x20 or ord(ch) == 0x7F
                                                     for ch in path))
    if bad:
        raise DponeError(code="template.absolute_url",
                         message="the request path must be an ASCII path starting with a "
                         "single '/', without query, fragment, spaces or backslashes")
    segments = path.split("/")
    if any(seg.lower() in {".", "..", "%2e", "%2e%2e", ".%2e", "%2e."} for seg in segments):
        raise DponeError(code="template.traversal", message="the request path has a '.' or "
                         "'..' segment")
    url = base.copy_with(raw_path=path.encode("ascii"))
    if (url.scheme, url.host, url.port) != (base.scheme, base.host, base.port):
        raise DponeError(code="template.absolute_url",
                         message="the request path leaves the binding authority")
    return url


def wire_headers(request: OutboundRequest, owned: Collection[str]) -> dict[str, str]:
    """The request's headers plus its body's type and length; ``owned`` (lower-case names)
    belong to the transport and are refused."""
    headers: dict[str, str] = {}
    for name, value in request.headers:
        if name.lower() in owned:
            raise DponeError(code="profile.forbidden_header",
                             message=f"header {name!r} belongs to the transport")
        if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name + value):
            raise DponeError(code="template.control_character",
                             message=f"header {name!r} contains a control character")
        headers[name] = value
    if request.content_type is not None:
        headers["Content-Type"] = request.content_type
    if request.content_length > 0 or request.method not in BODYLESS:
        headers["Content-Length"] = str(request.content_length)
    return headers


_SHOWN: Final = {"bearer": "bearer", "basic": "basic credentials",
                 "oauth2_client_credentials": "oauth2 bearer, client credentials",
                 "api_key_header": "api key"}


def credential_header(binding: ConnectionBinding) -> tuple[str, str] | None:
    """``(header name, "<bearer from env NAME>")``: where the credential travels, shown as its
    reference; None when it travels in no header (mTLS, none)."""
    provider = binding.auth_provider
    if provider not in _SHOWN:
        return None
    reference = (binding.credential_ref or "no credential_ref").replace(":", " ", 1)
    name = binding.auth_options.header_name if provider == "api_key_header" else "Authorization"
    return name or "Authorization", f"<{_SHOWN[provider]} from {reference}>"
