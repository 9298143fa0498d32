"""Loopback servers for the transport suite: raw sockets with scripted behaviour, optional TLS."""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

Behaviour = Callable[[socket.socket, "LoopbackServer"], None]


class LoopbackServer:
    """Accepts connections on 127.0.0.1 and runs ``behaviour`` per connection in a thread.

    ``requests`` collects every request head it read (see :func:`read_request`).
    """

    def __init__(self, behaviour: Behaviour, tls: ssl.SSLContext | None = None) -> None:
        self.behaviour = behaviour
        self.tls = tls
        self.requests: list[bytes] = []
        self.raw: list[bytes] = []
        self.connections = 0
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            self.behaviour(conn, self)
        except (OSError, ssl.SSLError):
            pass
        finally:
            conn.close()


def read_request(conn: socket.socket, server: LoopbackServer, *, body: bool = True) -> bytes:
    """Read one request head (and its Content-Length body when ``body``) and record it."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            server.raw.append(data)
            return data
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    server.requests.append(head)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while body and len(rest) < length:
        chunk = conn.recv(1 << 20)
        if not chunk:
            break
        rest += chunk
    return head


def respond(status: int = 200, body: bytes = b'{"ok":true}',
            headers: dict[str, str] | None = None) -> Behaviour:
    """Answer every request on the connection with a fixed response."""
    lines = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}",
             "Content-Type: application/json"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    wire = ("\r\n".join(lines) + "\r\n\r\n").encode() + body

    def behaviour(conn: socket.socket, server: LoopbackServer) -> None:
        while read_request(conn, server).startswith((b"GET", b"POST", b"PUT", b"HEAD")):
            conn.sendall(wire)

    return behaviour


def close_after_read(conn: socket.socket, server: LoopbackServer) -> None:
    read_request(conn, server)


def never_answer(conn: socket.socket, server: LoopbackServer) -> None:
    read_request(conn, server)
    time.sleep(5)


def reset_after_read(conn: socket.socket, server: LoopbackServer) -> None:
    read_request(conn, server)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def never_read(conn: socket.socket, server: LoopbackServer) -> None:
    time.sleep(5)


def close_after_head(conn: socket.socket, server: LoopbackServer) -> None:
    read_request(conn, server, body=False)


def dribble(conn: socket.socket, server: LoopbackServer) -> None:
    read_request(conn, server)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
    for _ in range(1000):
        conn.sendall(b"x")
        time.sleep(0.05)


class FullBacklog:
    """A listening socket whose accept queue is full: new connects hang (connect timeout)."""

    def __enter__(self) -> int:
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(0)
        port: int = self._listener.getsockname()[1]
        self._fillers = []
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", port))
            self._fillers.append(filler)
        time.sleep(0.1)
        return port

    def __exit__(self, *exc_info: object) -> None:
        for filler in self._fillers:
            filler.close()
        self._listener.close()


class Pki:
    """A throwaway CA with a 127.0.0.1 server certificate and a client certificate."""

    def __init__(self, directory: Path) -> None:
        # Imported here: the suite skips (conftest) where cryptography is not installed.
        from cryptography import x509  # noqa: PLC0415
        from cryptography.hazmat.primitives import hashes, serialization  # noqa: PLC0415
        from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: PLC0415

        def name(common: str) -> x509.Name:
            return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

        now = dt.datetime.now(dt.UTC)

        def cert(subject: str, key: ec.EllipticCurvePrivateKey, issuer: str,
                 issuer_key: ec.EllipticCurvePrivateKey, *, ca: bool = False,
                 server: bool = False) -> x509.Certificate:
            builder = (x509.CertificateBuilder().subject_name(name(subject))
                       .issuer_name(name(issuer)).public_key(key.public_key())
                       .serial_number(x509.random_serial_number())
                       .not_valid_before(now - dt.timedelta(minutes=5))
                       .not_valid_after(now + dt.timedelta(days=1))
                       .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
            if server:
                builder = builder.add_extension(x509.SubjectAlternativeName(
                    [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
                builder = builder.add_extension(
                    x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            elif not ca:
                builder = builder.add_extension(
                    x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            return builder.sign(issuer_key, hashes.SHA256())

        def write(path: Path, *items: x509.Certificate | ec.EllipticCurvePrivateKey) -> Path:
            blobs = []
            for item in items:
                if isinstance(item, x509.Certificate):
                    blobs.append(item.public_bytes(serialization.Encoding.PEM))
                else:
                    blobs.append(item.private_bytes(serialization.Encoding.PEM,
                                                    serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()))
            path.write_bytes(b"".join(blobs))
            return path

        ca_key, server_key, client_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
        ca = cert("dpone test ca", ca_key, "dpone test ca", ca_key, ca=True)
        self.ca_file = write(directory / "ca.pem", ca)
        self.server_cert = write(directory / "server.pem",
                                 cert("server", server_key, "dpone test ca", ca_key, server=True))
        self.server_key = write(directory / "server.key", server_key)
        self.client_cert = write(directory / "client.pem",
                                 cert("client-1", client_key, "dpone test ca", ca_key))
        self.client_key = write(directory / "client.key", client_key)

    def server_context(self, *, require_client: bool = False) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.server_cert, self.server_key)
        if require_client:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(self.ca_file)
        return context
