"""The transport of a certification run: the binding's, as a delivery through it would have.

The same credential, TLS policy, network policy, timeouts and response bound as a plan of the
profile and binding gets (:func:`dpone.executor.transport.transport_for`), with room for the
concurrent-duplicates case's parallel submits, and keeping the response headers every
extractor of the profile reads (the query by key's too).
"""

from __future__ import annotations

from dpone.compiler.certification_subject import CertificationSubject
from dpone.contracts.profile import Extractor, KeyEcho, OperationProfile
from dpone.contracts.secret import Credential
from dpone.executor.certify._verdicts import Options
from dpone.executor.transport import HttpTransport, TransportTimeouts


def read_headers(profile: OperationProfile) -> frozenset[str]:
    """The response headers the profile's extractors read (besides the default allowlist)."""
    ack, verification = profile.acknowledgement, profile.verification
    sources: list[Extractor | KeyEcho | None] = [
        *ack.receipt.values(), verification.accepted_rows, verification.rejected_rows]
    if ack.duplicate is not None:
        sources += ack.duplicate.same_key_receipt.values()
    if ack.poll is not None:
        sources += [ack.poll.state, ack.poll.key_echo]
    if ack.query_by_key is not None:
        sources += [*ack.query_by_key.receipt.values(), ack.query_by_key.key_echo]
    return frozenset(source.header.lower() for source in sources
                     if source is not None and source.header is not None)


def certification_transport(subject: CertificationSubject, credential: Credential,
                            options: Options) -> HttpTransport:
    profile, binding = subject.profile, subject.binding
    tls = binding.authority.startswith("https://")
    return HttpTransport(
        binding, credential, timeouts=TransportTimeouts.from_profile(profile.timeouts, tls=tls),
        max_response_bytes=profile.observability.response_bounds.max_body_bytes,
        max_connections=max(options.concurrency, profile.rate.max_active_requests),
        response_headers=read_headers(profile), tls_policy=subject.tls_policy,
        network_policy=subject.network_policy)
