"""Receipt locations: accepted only as a path under the profile's prefix, on the binding's origin.

The transport stamps every :class:`Response` with the origin it sent to (``origin_of``: lower-case
scheme and host, default port made explicit). :func:`location_receipt` reduces an absolute
``Location`` / ``Operation-Location`` to its path only when its scheme, host and port equal that
origin and it has no userinfo; it then accepts a bare relative path (no query, fragment or
backslash) whose one segment after ``path_prefix`` is unreserved characters and not a dot
segment, and returns that segment. Anything else is refused (None): data never chooses where a
poll goes; the poll path renders the segment back under the binding's authority.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_SEGMENT: Final = re.compile(r"[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,255}")


def origin_of(scheme: str, host: str, port: int | None) -> str:
    """``scheme://host:port`` in canonical form (an IPv6 host in brackets)."""
    scheme, host = scheme.lower(), host.lower()
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port or _DEFAULT_PORTS.get(scheme, 0)}"


def _relative(value: str, origin: str | None) -> str | None:
    """``value`` as a relative reference: unchanged when relative, its path (with any query and
    fragment, refused later) when absolute on ``origin``, None for any other origin."""
    if value.startswith("/") and not value.startswith("//"):
        return value
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    if (origin is None or not parts.scheme or not parts.hostname
            or parts.username is not None or parts.password is not None
            or origin_of(parts.scheme, parts.hostname, port) != origin):
        return None
    relative = parts.path or "/"
    if parts.query:
        relative += "?" + parts.query
    if parts.fragment:
        relative += "#" + parts.fragment
    return relative


def location_receipt(value: str, path_prefix: str, origin: str | None) -> str | None:
    """The receipt segment of location ``value`` (see the module docstring), or None."""
    relative = _relative(value.strip(), origin)
    if relative is None or not relative.startswith(path_prefix) \
            or any(ch in relative for ch in "?#\\"):
        return None
    segment = relative[len(path_prefix):]
    return segment if _SEGMENT.fullmatch(segment) else None
