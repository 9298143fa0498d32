"""The binding's remote identity attestation: a reference to evidence, consistent with its mode.

``remote_identity`` says who attested that the binding's credential acts as
``remote_principal_id`` at the receiver. ``evidence_ref`` names that attestation; it is a
reference, never the evidence or anything fetched at run time: ``evidence://<issuer>/<path>``
(a URL of another scheme, a secret-looking value or free text is
``binding.invalid_evidence_ref``). In a production environment the evidence must be immutable,
so the reference ends in its content address ``sha256:<64 hex>`` (spec "Connection-binding
snapshot": platform attestation requires immutable evidence).

``mode: receiver_attested`` means the receiver's identity endpoint or claim named the
principal the binding authenticated as; an unauthenticated binding (``auth_provider: none``)
has no principal for a receiver to attest (``binding.identity_unattested``).
"""

from __future__ import annotations

import re
from typing import Final

from dpone.compiler._located import located_error
from dpone.compiler._yaml import LoadedDocument
from dpone.contracts.binding import ConnectionBinding, Environment

EVIDENCE_REF: Final = re.compile(r"^evidence://[a-z0-9][a-z0-9.-]{0,62}(?:/[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}){1,16}$")
CONTENT_ADDRESS: Final = re.compile(r"/sha256:[0-9a-f]{64}$")


def check_remote_identity(binding: ConnectionBinding, environment: Environment,
                          doc: LoadedDocument) -> None:
    """Refuse an evidence reference that is not one, and a mode the binding cannot back."""
    identity = binding.remote_identity
    ref = identity.evidence_ref
    if not EVIDENCE_REF.match(ref):
        raise located_error(
            "binding.invalid_evidence_ref", f"remote_identity.evidence_ref {ref[:80]!r} is not an "
            "evidence reference (evidence://<issuer>/<path>)", doc,
            ("remote_identity", "evidence_ref"),
            hint="name the attestation, e.g. evidence://platform/whoami/sha256:<64 hex>; never "
                 "a URL dpone would fetch or the evidence itself")
    if environment.tier == "production" and not CONTENT_ADDRESS.search(ref):
        raise located_error(
            "binding.invalid_evidence_ref", f"remote_identity.evidence_ref {ref!r} is not "
            f"content-addressed: production environment {environment.id!r} accepts only "
            "immutable attestation evidence", doc, ("remote_identity", "evidence_ref"),
            hint="end the reference with the evidence's digest: .../sha256:<64 hex>")
    if identity.mode == "receiver_attested" and binding.auth_provider == "none":
        raise located_error(
            "binding.identity_unattested", "remote_identity.mode receiver_attested needs an "
            "authenticated binding: with auth_provider none the receiver has no principal to "
            "attest", doc, ("remote_identity", "mode"),
            hint="authenticate the binding, or use platform_attested with approved evidence")
