"""The transport of one compiled plan: its binding, credential, timeouts and bounds."""

from __future__ import annotations

from dpone.contracts.binding import NetworkPolicy
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import CredentialResolver
from dpone.contracts.profile import Extractor, KeyEcho, OperationProfile
from dpone.contracts.secret import Credential
from dpone.executor.cuts import CutHook
from dpone.executor.transport._credentials import EnvironmentCredentialResolver
from dpone.executor.transport._http import HttpTransport
from dpone.executor.transport._model import TransportTimeouts
from dpone.executor.transport._network import Resolver, system_resolver

LEGACY_NETWORK_POLICY = NetworkPolicy(allow=("0.0.0.0/0", "::/0"))
"""The network policy of a plan compiled before bindings named resolved policies: any
routable address, each name's answers still pinned for the run (a rebinding is refused)."""


def extracted_headers(profile: OperationProfile) -> frozenset[str]:
    """The response headers the profile's certified extractors read (receipt, duplicate proof,
    poll state, key echo, counters): kept besides the default allowlist, all others dropped."""
    ack, verification = profile.acknowledgement, profile.verification
    sources: list[Extractor | KeyEcho | None] = [
        *ack.receipt.values(), verification.accepted_rows, verification.rejected_rows]
    if ack.duplicate is not None:
        sources += ack.duplicate.same_key_receipt.values()
    if ack.poll is not None:
        sources += [ack.poll.state, ack.poll.key_echo]
    return frozenset(source.header.lower() for source in sources
                     if source is not None and source.header is not None)


def transport_for(plan: RestDeliveryPlan, credential: Credential | None = None, *,
                  credentials: CredentialResolver | None = None,
                  cut: CutHook | None = None,
                  dns: Resolver = system_resolver) -> HttpTransport:
    """An :class:`HttpTransport` for ``plan``'s binding under its profile's timeouts and bounds.

    Unless ``credential`` is given, the binding's ``credential_ref`` is resolved through the
    ``credentials`` port (by default this process's environment and files). ``cut`` is the
    process-cut hook of a fault test (:mod:`dpone.executor.cuts`), None otherwise. The TLS and
    network policies are the ones the plan carries for the binding (never the environment's
    proxy variables); ``dns`` replaces the system resolver (tests).
    """
    binding = plan.binding.snapshot
    profile = plan.profile.snapshot
    tls = binding.authority.startswith("https://")
    resolver = credentials or EnvironmentCredentialResolver()
    return HttpTransport(binding, credential or resolver.resolve(binding),
                         timeouts=TransportTimeouts.from_profile(profile.timeouts, tls=tls),
                         max_response_bytes=profile.observability.response_bounds.max_body_bytes,
                         max_connections=profile.rate.max_active_requests,
                         response_headers=extracted_headers(profile), cut=cut,
                         tls_policy=plan.binding.tls_policy,
                         network_policy=plan.binding.network_policy or LEGACY_NETWORK_POLICY,
                         resolver=dns)
