"""The binding's TLS policy against real TLS servers on loopback, under a throwaway test CA.

Accepted: the server's CA is the policy's bundle. Refused before any request byte: a CA outside
the bundle (the public roots), an expired certificate, a server that speaks only TLS 1.1, a
server capped below the policy's minimum version, a plain-http authority under a policy that
requires https; mTLS: the client certificate is presented, and a server that requires one
refuses a client without it.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import ssl
import warnings
from pathlib import Path

import pytest

from dpone.contracts import DponeError
from dpone.contracts.binding import NetworkPolicy, TlsPolicy
from dpone.executor.transport import (
    Failure,
    FailureKind,
    HttpTransport,
    Response,
    TransportPhase,
    TransportTimeouts,
    resolve_credentials,
)
from support.transport import binding, credential, post
from support.transport_servers import LoopbackServer, Pki, respond

LOOPBACK = NetworkPolicy(allow=("127.0.0.0/8",))
FAST = TransportTimeouts(connect=1, read=2, write=2, pool=1, total=5)


def _policy(pki: Pki | None = None, **fields: object) -> TlsPolicy:
    bundle = {"ca_bundle_ref": f"file:{pki.ca_file}"} if pki is not None else {}
    return TlsPolicy.model_validate({**bundle, **fields})


def _send(url: str, policy: TlsPolicy, provider: str = "bearer",
          env: dict[str, str] | None = None) -> Response | Failure:
    bound = binding(authority=url, provider=provider,
                    credential_ref="conn:rx" if env else "env:RECEIVER_TOKEN")
    cred = resolve_credentials(bound, env=env) if env else credential()
    with HttpTransport(bound, cred, timeouts=FAST, tls_policy=policy,
                       network_policy=LOOPBACK) as transport:
        return transport.send(post())


def _refused_before_sending(outcome: Response | Failure, server: LoopbackServer) -> None:
    assert isinstance(outcome, Failure), outcome
    assert (outcome.phase, outcome.kind) == (TransportPhase.NOT_STARTED, FailureKind.TLS)
    assert server.requests == []


def test_a_certificate_of_the_policy_bundle_is_accepted(pki: Pki) -> None:
    with LoopbackServer(respond(201), tls=pki.server_context()) as server:
        outcome = _send(server.url, _policy(pki))
    assert isinstance(outcome, Response) and outcome.status == 201


def test_a_ca_outside_the_policy_bundle_is_refused(pki: Pki) -> None:
    with LoopbackServer(respond(201), tls=pki.server_context()) as server:
        outcome = _send(server.url, _policy())  # the public roots only
    _refused_before_sending(outcome, server)


def _expired_server(directory: Path) -> tuple[Path, ssl.SSLContext]:
    """A CA (returned as a bundle) and a server context whose certificate expired yesterday."""
    from cryptography import x509  # noqa: PLC0415 - the suite skips without cryptography
    from cryptography.hazmat.primitives import hashes, serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415
    from cryptography.x509.oid import NameOID  # noqa: PLC0415

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    now = dt.datetime.now(dt.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("expiry ca")).issuer_name(name("expiry ca"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - dt.timedelta(days=30)).not_valid_after(now + dt.timedelta(days=30))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(name("server")).issuer_name(name("expiry ca"))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=10)).not_valid_after(now - dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    bundle = directory / "expiry-ca.pem"
    bundle.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    chain = directory / "expired.pem"
    chain.write_bytes(leaf.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(chain)
    return bundle, context


def test_an_expired_certificate_is_refused(tmp_path: Path) -> None:
    bundle, context = _expired_server(tmp_path)
    with LoopbackServer(respond(201), tls=context) as server:
        outcome = _send(server.url, TlsPolicy(ca_bundle_ref=f"file:{bundle}"))
    _refused_before_sending(outcome, server)
    assert "expired" in outcome.detail  # type: ignore[union-attr]


def _capped(pki: Pki, version: ssl.TLSVersion) -> ssl.SSLContext:
    context = pki.server_context()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TLS 1.1 is deprecated: the point
        context.minimum_version = min(version, ssl.TLSVersion.TLSv1_2)
        context.maximum_version = version
    if version < ssl.TLSVersion.TLSv1_2:
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
    return context


def test_a_tls_1_1_server_is_refused(pki: Pki) -> None:
    with LoopbackServer(respond(201), tls=_capped(pki, ssl.TLSVersion.TLSv1_1)) as server:
        # Control: the server does complete a TLS 1.1 handshake with a client that allows it.
        legacy = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        legacy.load_verify_locations(pki.ca_file)
        legacy.set_ciphers("DEFAULT:@SECLEVEL=0")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            legacy.minimum_version = ssl.TLSVersion.TLSv1_1
        with socket.create_connection(("127.0.0.1", server.port), timeout=2) as raw, \
                legacy.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            assert tls.version() == "TLSv1.1"
        outcome = _send(server.url, _policy(pki))
    _refused_before_sending(outcome, server)


def test_a_server_below_the_policy_minimum_is_refused(pki: Pki) -> None:
    with LoopbackServer(respond(201), tls=_capped(pki, ssl.TLSVersion.TLSv1_2)) as server:
        accepted = _send(server.url, _policy(pki, min_version="1.2"))
        refused = _send(server.url, _policy(pki, min_version="1.3"))
    assert isinstance(accepted, Response) and accepted.status == 201
    assert isinstance(refused, Failure)
    assert (refused.phase, refused.kind) == (TransportPhase.NOT_STARTED, FailureKind.TLS)
    assert len(server.requests) == 1


def test_plain_http_under_a_policy_that_requires_https_is_refused() -> None:
    with pytest.raises(DponeError) as refused:
        HttpTransport(binding(authority="http://127.0.0.1:9"), credential(),
                      tls_policy=TlsPolicy(), network_policy=LOOPBACK)
    assert refused.value.code == "binding.insecure_authority"


def test_an_unreadable_policy_bundle_is_unavailable_not_a_fallback(tmp_path: Path) -> None:
    with pytest.raises(DponeError) as refused:
        HttpTransport(binding(authority="https://127.0.0.1:9"), credential(),
                      tls_policy=TlsPolicy(ca_bundle_ref=f"file:{tmp_path}/missing.pem"),
                      network_policy=LOOPBACK)
    assert refused.value.code == "tls.policy_unavailable"
    assert refused.value.spec.exit_code == 3


def test_mtls_with_the_client_certificate_is_accepted_without_it_refused(pki: Pki) -> None:
    env = {"DPONE_CONN_RX_CERT_FILE": str(pki.client_cert),
           "DPONE_CONN_RX_KEY_FILE": str(pki.client_key)}
    with LoopbackServer(respond(200), tls=pki.server_context(require_client=True)) as server:
        accepted = _send(server.url, _policy(pki), provider="mtls", env=env)
        refused = _send(server.url, _policy(pki))  # a bearer binding: no client certificate
    assert isinstance(accepted, Response) and accepted.status == 200
    assert isinstance(refused, Failure)
    # Under TLS 1.3 the client learns of the refusal only when it reads: the server never
    # completed the handshake, so no request reached it, whatever phase the client reports.
    assert len(server.requests) == 1
