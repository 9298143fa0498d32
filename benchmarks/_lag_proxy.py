"""A TCP proxy that holds every forwarded chunk for a fixed delay: a journal on another host.

Run: ``python benchmarks/_lag_proxy.py --target-port PORT --delay-ms D``; it prints
``listening <port>`` once it accepts connections and forwards each connection to
``127.0.0.1:PORT`` until SIGTERM, every chunk in either direction held ``D`` ms first (one
thread per direction, so a request/response protocol pays about ``2 D`` per round trip; the
proxy's own hop adds a little: :func:`round_trip_ms` measures the result). The delivery
benchmark puts it between ``dpone`` and PostgreSQL with ``--journal-rtt-ms``.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path


def _pump(source: socket.socket, target: socket.socket, delay: float) -> None:
    try:
        while data := source.recv(1 << 16):
            time.sleep(delay)
            target.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, target):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


def serve(target_port: int, delay_ms: float) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    print(f"listening {listener.getsockname()[1]}", flush=True)
    delay = delay_ms / 1000
    while True:
        client, _ = listener.accept()
        upstream = socket.create_connection(("127.0.0.1", target_port))
        for end in (client, upstream):
            end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for source, target in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(source, target, delay), daemon=True).start()


@contextlib.contextmanager
def lagged(target_port: int, delay_ms: float) -> Iterator[int]:
    """The proxy in its own process in front of ``target_port``; yields its port."""
    process = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--target-port", str(target_port),
         "--delay-ms", str(delay_ms)], stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline() if process.stdout is not None else ""
        if not line.startswith("listening "):
            raise RuntimeError(f"the journal latency proxy did not start: {line!r}")
        yield int(line.split()[1])
    finally:
        process.terminate()
        process.wait(timeout=10)


def round_trip_ms(dsn: str, count: int = 200) -> float:
    """The median time of one ``SELECT 1`` round trip to ``dsn``, in ms."""
    import psycopg  # noqa: PLC0415

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT 1").fetchone()
        samples = []
        for _ in range(count):
            start = time.perf_counter()
            conn.execute("SELECT 1").fetchone()
            samples.append(time.perf_counter() - start)
    return sorted(samples)[count // 2] * 1000


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target-port", type=int, required=True)
    parser.add_argument("--delay-ms", type=float, required=True)
    arguments = parser.parse_args()
    serve(arguments.target_port, arguments.delay_ms)
