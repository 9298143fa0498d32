"""The public surface of dpone.executor.transport is pinned."""

from __future__ import annotations

import dpone.executor.transport as transport

EXPECTED = {
    "CLIENT_HEADERS", "CredentialHeader", "authority_url", "credential_header", "request_url",
    "wire_headers",
    "DEFAULT_RESPONSE_HEADERS", "PHASE_TABLE", "RETRY_AFTER_EXCEEDS_BUDGET", "ApiKeyHeaderAuth",
    "BearerAuth", "BudgetExceeded", "Credential", "CredentialResolver",
    "EnvironmentCredentialResolver", "ExtractionError", "ExtractionFailure", "Failure",
    "FailureKind", "HttpBasicAuth", "HttpTransport", "OAuth2ClientCredentialsAuth",
    "OutboundRequest", "ReplayableBody", "Response", "RestTransportPort", "Secret", "TokenGrant",
    "TransportOutcome", "TransportPhase", "TransportTimeouts", "build_auth", "checked_credential",
    "classify",
    "extract", "full_jitter_delay", "next_delay", "origin_of", "parse_bounded_json", "resolve_credentials",
    "retry_after_seconds", "transport_for",
}


def test_exported_names_are_pinned() -> None:
    assert set(transport.__all__) == EXPECTED
    for name in EXPECTED:
        assert getattr(transport, name) is not None


def test_phase_table_is_most_specific_first() -> None:
    rows = [row[0] for row in transport.PHASE_TABLE]
    for i, earlier in enumerate(rows):
        for later in rows[i + 1:]:
            assert not issubclass(later, earlier), f"{later.__name__} is shadowed by {earlier.__name__}"
