"""What a request looks like on the wire, without sending it: one definition for the transport
and for `dpone preview`.

:func:`authority_url` checks a binding's authority; :func:`request_url` checks a rendered path
and joins it to that authority; :func:`wire_headers` adds the body's ``Content-Type`` and
``Content-Length`` to the request's own headers and refuses a header the transport owns;
:data:`CLIENT_HEADERS` are the headers the client sends on every request, and
:class:`NoCookies` keeps the client from adding any other (a receiver's ``Set-Cookie`` is never
stored, so no ``Cookie`` header is ever sent). The preview composes
them exactly as :class:`~dpone.executor.transport.HttpTransport` does, so what it shows cannot
drift from what is sent. :func:`credential_header` names the header the binding's credential
travels in and shows it as its reference: it reads the binding only, never the credential.
"""

from __future__ import annotations

from dataclasses import dataclass
from http.cookiejar import Cookie, CookieJar
from typing import Any, Final

import httpx

from dpone import __version__
from dpone.contracts import DponeError
from dpone.contracts.binding import ConnectionBinding
from dpone.contracts.transport import OutboundRequest
from dpone.executor.transport._auth import RESERVED_HEADERS
from dpone.executor.transport._credentials import PROVIDER_FIELDS, conn_variable

CLIENT_HEADERS: Final = {"User-Agent": f"dpone/{__version__}", "Accept-Encoding": "identity"}
"""Sent with every request (``identity``: the byte bound applies to what is actually read)."""
BODYLESS: Final = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})


class NoCookies(CookieJar):
    """The client's cookie jar: it keeps nothing (a response's cookies are not even parsed), so
    it never has a ``Cookie`` header to add. A request goes out exactly as sealed (or as a poll
    template renders it): a receiver's ``Set-Cookie`` changes no later submit, replay or
    receipt poll."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def set_cookie(self, cookie: Cookie) -> None:
        return None


def authority_url(authority: str) -> httpx.URL:
    """The binding's ``http(s)://host[:port]`` as the base of every request URL;
    ``binding.invalid_authority`` for anything else (a path, credentials, a fragment)."""
    try:
        url = httpx.URL(authority)
    except httpx.InvalidURL:
        url = None
    if url is None or url.scheme not in {"http", "https"} or not url.host or url.userinfo \
            or url.raw_path not in {b"", b"/"} or url.fragment:
        raise DponeError(code="binding.invalid_authority",
                         message="the binding authority must be http(s)://host[:port]")
    return url.copy_with(raw_path=b"/")


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


def _owned(binding: ConnectionBinding) -> frozenset[str]:
    """The lower-case header names only the transport sets: the reserved ones, the credential's."""
    owned = set(RESERVED_HEADERS) | {"authorization"}
    if binding.auth_provider == "api_key_header" and binding.auth_options.header_name:
        owned.add(binding.auth_options.header_name.lower())
    return frozenset(owned)


def wire_headers(request: OutboundRequest, binding: ConnectionBinding) -> dict[str, str]:
    """The request's headers plus its body's type and length; a header the transport owns
    (reserved, or the one ``binding``'s credential travels in) is ``profile.forbidden_header``."""
    owned = _owned(binding)
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


@dataclass(frozen=True, slots=True)
class CredentialHeader:
    """Where a binding's credential travels and where it is read from; never a value.

    ``variables`` are the environment variables that hold it (``env:NAME``: one holding the
    whole value, ``user:password`` for basic; ``conn:REF``: one per field), ``file`` the file
    of a ``file:`` reference; both empty for Vault. For OAuth2 they hold the client credentials:
    the bearer itself comes from the token endpoint at run time.
    """

    provider: str
    name: str
    scheme: str
    """What precedes the value in the header: ``Bearer ``, ``Basic `` or nothing (API key)."""
    reference: str
    """What the preview shows instead of the value: ``<bearer from env NAME>``."""
    variables: tuple[str, ...] = ()
    file: str | None = None


_SHOWN: Final = {"bearer": "bearer", "basic": "basic credentials", "api_key_header": "api key",
                 "oauth2_client_credentials": "oauth2 bearer"}
_SCHEME: Final = {"bearer": "Bearer ", "basic": "Basic ", "api_key_header": "",
                  "oauth2_client_credentials": "Bearer "}


def credential_header(binding: ConnectionBinding) -> CredentialHeader | None:
    """The header ``binding``'s credential travels in, shown as its reference
    (``<bearer from env NAME>``); None when it travels in no header (mTLS, none). Reads the
    binding only: nothing is resolved."""
    provider = binding.auth_provider
    if provider not in _SHOWN:
        return None
    ref = binding.credential_ref
    variables: tuple[str, ...] = ()
    file = None
    if ref is None:
        source = "no credential_ref"
    elif ref.startswith("env:"):
        variables = (ref.removeprefix("env:"),)
        source = f"env {variables[0]}"
    elif ref.startswith("conn:"):
        variables = tuple(conn_variable(ref, field) for field in PROVIDER_FIELDS[provider])
        source = "env " + ", ".join(variables)
    elif ref.startswith("file:"):
        file = ref.removeprefix("file:")
        source = f"file {file}"
    else:
        source = ref
    shown = _SHOWN[provider]
    if provider == "oauth2_client_credentials":
        token_path = binding.auth_options.token_path or "(no token_path)"
        shown, source = f"{shown} from POST {token_path}", f"with client credentials from {source}"
    else:
        source = f"from {source}"
    name = binding.auth_options.header_name if provider == "api_key_header" else None
    return CredentialHeader(provider=provider, name=name or "Authorization",
                            scheme=_SCHEME[provider], reference=f"<{shown} {source}>",
                            variables=variables, file=file)
