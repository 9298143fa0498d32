"""REST transport: credentials, auth providers, the httpx adapter, extraction and retry timing.

The executor sends requests only through :class:`RestTransportPort`; :class:`HttpTransport` is
its httpx adapter (one isolated client per connection binding). Network outcomes come back as a
tagged :class:`Response` or :class:`Failure`, whose :class:`TransportPhase` says whether any
request byte may have reached the receiver (``PHASE_TABLE`` is the one mapping from httpx
exceptions). Secrets live only in :class:`Secret` / :class:`Credential`, which refuse to be
printed, pickled or serialized.
"""

from dpone.contracts.ports import CredentialResolver, RestTransportPort
from dpone.contracts.secret import Credential, Secret
from dpone.contracts.transport import (
    Failure,
    FailureKind,
    OutboundRequest,
    ReplayableBody,
    Response,
    TransportOutcome,
    TransportPhase,
)
from dpone.executor.transport._auth import (
    ApiKeyHeaderAuth,
    BearerAuth,
    HttpBasicAuth,
    OAuth2ClientCredentialsAuth,
    TokenGrant,
    build_auth,
)
from dpone.executor.transport._credentials import (
    EnvironmentCredentialResolver,
    checked_credential,
    resolve_credentials,
)
from dpone.executor.transport._extract import (
    ExtractionError,
    ExtractionFailure,
    extract,
    parse_bounded_json,
)
from dpone.executor.transport._factory import transport_for
from dpone.executor.transport._http import HttpTransport
from dpone.executor.transport._location import origin_of
from dpone.executor.transport._model import DEFAULT_RESPONSE_HEADERS, TransportTimeouts
from dpone.executor.transport._phases import PHASE_TABLE, classify
from dpone.executor.transport._retry import (
    RETRY_AFTER_EXCEEDS_BUDGET,
    BudgetExceeded,
    full_jitter_delay,
    next_delay,
    retry_after_seconds,
)
from dpone.executor.transport._wire import (
    CLIENT_HEADERS,
    CredentialHeader,
    authority_url,
    credential_header,
    request_url,
    wire_headers,
)

__all__ = [
    "CLIENT_HEADERS",
    "DEFAULT_RESPONSE_HEADERS",
    "PHASE_TABLE",
    "RETRY_AFTER_EXCEEDS_BUDGET",
    "ApiKeyHeaderAuth",
    "BearerAuth",
    "BudgetExceeded",
    "Credential",
    "CredentialHeader",
    "CredentialResolver",
    "EnvironmentCredentialResolver",
    "ExtractionError",
    "ExtractionFailure",
    "Failure",
    "FailureKind",
    "HttpBasicAuth",
    "HttpTransport",
    "OAuth2ClientCredentialsAuth",
    "OutboundRequest",
    "ReplayableBody",
    "Response",
    "RestTransportPort",
    "Secret",
    "TokenGrant",
    "TransportOutcome",
    "TransportPhase",
    "TransportTimeouts",
    "authority_url",
    "build_auth",
    "checked_credential",
    "classify",
    "credential_header",
    "extract",
    "full_jitter_delay",
    "next_delay",
    "origin_of",
    "parse_bounded_json",
    "request_url",
    "resolve_credentials",
    "retry_after_seconds",
    "transport_for",
    "wire_headers",
]
