"""The TLS context of one binding: its platform TLS policy and, for mTLS, its client certificate.

Certificates and host names are always verified (``ssl.create_default_context``: CERT_REQUIRED,
check_hostname); the trusted roots are the policy's ``ca_bundle_ref`` or, without one, certifi's
public roots; no version below the policy's ``min_version`` (never below TLS 1.2) is offered.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Final

import certifi

from dpone.contracts import DponeError
from dpone.contracts.binding import TlsPolicy
from dpone.contracts.secret import Credential

_VERSIONS: Final = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}


def ca_bundle_path(policy: TlsPolicy) -> Path | None:
    """The local path of the policy's ``ca_bundle_ref`` (``file:/path``), None for certifi."""
    ref = policy.ca_bundle_ref
    return None if ref is None else Path(ref.removeprefix("file:"))


def ssl_context(policy: TlsPolicy, credential: Credential,
                ca_bundle: str | Path | None = None) -> ssl.SSLContext:
    """The client context for ``policy``; ``ca_bundle`` (a path) overrides its bundle.

    An unreadable bundle is ``tls.policy_unavailable``; an unreadable mTLS certificate or key
    ``credential.unavailable`` (exit 3 both: nothing was sent).
    """
    bundle = ca_bundle if ca_bundle is not None else ca_bundle_path(policy)
    try:
        context = ssl.create_default_context(cafile=str(bundle) if bundle else certifi.where())
    except (OSError, ssl.SSLError):
        raise DponeError(code="tls.policy_unavailable",
                         message="the TLS policy's CA bundle cannot be loaded",
                         details={"ca_bundle": str(bundle)}) from None
    context.minimum_version = _VERSIONS[policy.min_version]
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    if credential.provider == "mtls":
        key = credential.secret("key_file").reveal() if "key_file" in credential.field_names \
            else None
        try:
            context.load_cert_chain(credential.secret("cert_file").reveal(), key)
        except (OSError, ssl.SSLError):
            raise DponeError(code="credential.unavailable",
                             message="the mTLS client certificate or key cannot be loaded") from None
    return context
