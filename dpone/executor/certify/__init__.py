"""`dpone profile certify`: test what a profile claims against a live receiver.

:func:`certify` runs the certification cases (``static_profile``; the fence cases
``key_retention``, ``key_payload_binding``, ``concurrent_duplicates``; ``receipt_ttl``,
``query_consistency``, ``operation_duration`` and ``clock_skew``) with synthetic requests
rendered as the sealer renders a child's (:mod:`._synthetic`), inside the sandbox resource the
binding allows, and returns the ``dpone.rest_sink_certification.v1`` document: each case PASS,
FAIL or UNVERIFIED with the redacted exchanges it used as evidence. The caller publishes it
(the executor sees no artifact store): :func:`canonical_document` and :func:`artifact_key`
give its content address, :func:`registry_file` where the registry keeps it.
"""

from dpone.executor.certify._runner import (
    VALIDITY,
    artifact_key,
    canonical_document,
    certify,
    registry_directory,
    registry_file,
)
from dpone.executor.certify._transport import certification_transport
from dpone.executor.certify._verdicts import NOT_APPLICABLE, Options, applies, run_result

__all__ = [
    "NOT_APPLICABLE",
    "VALIDITY",
    "Options",
    "applies",
    "artifact_key",
    "canonical_document",
    "certification_transport",
    "certify",
    "registry_directory",
    "registry_file",
    "run_result",
]
