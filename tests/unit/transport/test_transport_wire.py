"""The wire composition the transport and `dpone preview` share: the credential's header named
from the binding alone (a reference, never a value), and the headers the transport owns."""

from __future__ import annotations

import httpx
import pytest

from dpone.contracts import DponeError
from dpone.executor.transport import (
    CLIENT_HEADERS,
    CredentialHeader,
    HttpTransport,
    OutboundRequest,
    authority_url,
    credential_header,
    request_url,
    wire_headers,
)
from support.transport import SENTINEL, binding, credential, post


@pytest.mark.parametrize(("provider", "ref", "options", "expected"), [
    ("bearer", "env:RECEIVER_TOKEN", {},
     CredentialHeader("bearer", "Authorization", "Bearer ", "<bearer from env RECEIVER_TOKEN>",
                      ("RECEIVER_TOKEN",))),
    ("bearer", "conn:warehouse_eu", {},
     CredentialHeader("bearer", "Authorization", "Bearer ",
                      "<bearer from env DPONE_CONN_WAREHOUSE_EU_TOKEN>",
                      ("DPONE_CONN_WAREHOUSE_EU_TOKEN",))),
    ("bearer", "file:/run/secrets/token", {},
     CredentialHeader("bearer", "Authorization", "Bearer ",
                      "<bearer from file /run/secrets/token>", (), "/run/secrets/token")),
    ("bearer", "vault://kv/receiver#token", {},
     CredentialHeader("bearer", "Authorization", "Bearer ",
                      "<bearer from vault://kv/receiver#token>")),
    ("api_key_header", "env:RECEIVER_KEY", {"header_name": "X-Api-Key"},
     CredentialHeader("api_key_header", "X-Api-Key", "", "<api key from env RECEIVER_KEY>",
                      ("RECEIVER_KEY",))),
    ("basic", "conn:rx", {},
     CredentialHeader("basic", "Authorization", "Basic ",
                      "<basic credentials from env DPONE_CONN_RX_USERNAME, "
                      "DPONE_CONN_RX_PASSWORD>",
                      ("DPONE_CONN_RX_USERNAME", "DPONE_CONN_RX_PASSWORD"))),
    ("oauth2_client_credentials", "env:RX_CLIENT", {"token_path": "/oauth/token"},
     CredentialHeader("oauth2_client_credentials", "Authorization", "Bearer ",
                      "<oauth2 bearer from POST /oauth/token with client credentials from env "
                      "RX_CLIENT>", ("RX_CLIENT",))),
], ids=["env", "conn", "file", "vault", "api-key", "basic-conn", "oauth2"])
def test_the_credential_is_named_by_its_reference(
        monkeypatch: pytest.MonkeyPatch, provider: str, ref: str, options: dict[str, str],
        expected: CredentialHeader) -> None:
    for name in ("RECEIVER_TOKEN", "DPONE_CONN_WAREHOUSE_EU_TOKEN", "RECEIVER_KEY", "RX_CLIENT"):
        monkeypatch.setenv(name, SENTINEL)  # set, and never read
    shown = credential_header(binding(provider=provider, credential_ref=ref, **options))
    assert shown == expected
    assert SENTINEL not in repr(shown)


@pytest.mark.parametrize("provider", ["mtls", "none"])
def test_a_credential_outside_the_headers_has_no_header(provider: str) -> None:
    ref = "file:/etc/client.pem" if provider == "mtls" else None
    assert credential_header(binding(provider=provider, credential_ref=ref)) is None


def test_the_api_key_header_belongs_to_the_transport() -> None:
    keyed = binding(provider="api_key_header", credential_ref="env:K", header_name="X-Api-Key")
    with pytest.raises(DponeError) as raised:
        wire_headers(post(headers=(("x-api-key", "forged"),)), keyed)
    assert raised.value.code == "profile.forbidden_header"
    assert wire_headers(post(headers=(("x-api-key", "ok"),)), binding())["x-api-key"] == "ok"


@pytest.mark.parametrize("authority", ["ftp://h", "https://u:p@h", "https://h/base", "https://"])
def test_an_authority_is_scheme_host_and_port_only(authority: str) -> None:
    with pytest.raises(DponeError) as raised:
        authority_url(authority)
    assert raised.value.code == "binding.invalid_authority"


def test_the_transport_sends_what_the_shared_composition_builds() -> None:
    """Built offline as the preview builds it, the request equals the one the transport sends
    (method, URL, every header but the credential, which only the transport adds)."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        request.read()
        seen.append(request)
        return httpx.Response(200, json={})

    bound = binding()
    request = OutboundRequest(method="POST", path="/v1/jobs/a%2Fb", content_type="text/csv",
                              body=[b"a,b\n", b"1,2\n"], content_length=8,
                              query=(("mode", "append"), ("q", "ä b")),
                              headers=(("Idempotency-Key", "sha256:abc"),))
    with HttpTransport(bound, credential(), transport=httpx.MockTransport(handler)) as transport:
        transport.send(request)
    base = authority_url(bound.authority)
    with httpx.Client(base_url=base, headers=CLIENT_HEADERS, trust_env=False) as client:
        built = client.build_request(request.method, request_url(base, request.path),
                                     params=list(request.query),
                                     headers=wire_headers(request, bound))
    [sent] = seen
    assert (sent.method, str(sent.url)) == (built.method, str(built.url))
    assert [h for h in sent.headers.raw if h[0].lower() != b"authorization"] == built.headers.raw
    assert sent.headers["authorization"] == f"Bearer {SENTINEL}"
