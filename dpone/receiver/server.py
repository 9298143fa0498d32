"""Run the mock receiver with uvicorn on loopback: in the foreground or in a test thread."""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import sys
import threading
import time
from types import TracebackType

import uvicorn
from starlette.applications import Starlette

from dpone.receiver._access_log import LOGGER
from dpone.receiver._app import asgi_app, create_app, receiver_state
from dpone.receiver._config import ReceiverConfig
from dpone.receiver._state import ReceiverState

_START_TIMEOUT_S = 10.0
_STOP_TIMEOUT_S = 10.0


class ReceiverSetupError(ValueError):
    """The receiver cannot be set up as asked: a non-loopback host, or a missing token variable."""


def _check_loopback(host: str) -> None:
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ReceiverSetupError(f"the mock receiver listens on loopback only (127.0.0.1, ::1 or "
                                f"localhost), not {host!r}")


def _uvicorn_config(app: Starlette, host: str, port: int, log_level: str) -> uvicorn.Config:
    # uvicorn colours its log lines on a terminal; NO_COLOR (https://no-color.org) turns it off.
    plain = bool(os.environ.get("NO_COLOR"))
    return uvicorn.Config(asgi_app(app), host=host, port=port, http="h11", ws="none",
                          lifespan="off", log_level=log_level, access_log=False,
                          timeout_graceful_shutdown=1, use_colors=False if plain else None)


def run(host: str = "127.0.0.1", port: int = 8765, token: str | None = None,
        processing_seconds: float = 1.0, *, forget_keys_after: float | None = None,
        rebind_keys: bool = False, receipt_ttl: float | None = None) -> None:
    """Serve in the foreground until interrupted (the keyword variants: see
    :class:`ReceiverConfig`)."""
    _check_loopback(host)
    console = logging.StreamHandler(sys.stderr)
    console.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    LOGGER.addHandler(console)
    LOGGER.setLevel(logging.INFO)
    LOGGER.propagate = False
    app = create_app(ReceiverConfig(token=token, processing_seconds=processing_seconds,
                                    forget_keys_after_seconds=forget_keys_after,
                                    rebind_keys=rebind_keys, receipt_ttl_seconds=receipt_ttl))
    uvicorn.Server(_uvicorn_config(app, host, port, "info")).run()


def serve(port: int, host: str, token_env: str | None, processing_seconds: float, *,
          forget_keys_after: float | None = None, rebind_keys: bool = False,
          receipt_ttl: float | None = None) -> None:
    """The ``dpone receiver serve`` entry: the token, if any, is read from ``token_env``."""
    token = None
    if token_env is not None:
        token = os.environ.get(token_env)
        if not token:
            raise ReceiverSetupError(f"environment variable {token_env} is unset or empty")
    for name, value in (("--forget-keys-after", forget_keys_after),
                        ("--receipt-ttl", receipt_ttl)):
        if value is not None and not value > 0:
            raise ReceiverSetupError(f"{name} must be a positive number of seconds")
    run(host=host, port=port, token=token, processing_seconds=processing_seconds,
        forget_keys_after=forget_keys_after, rebind_keys=rebind_keys, receipt_ttl=receipt_ttl)


class ReceiverThread:
    """A receiver on a free loopback port in a background thread; a context manager.

    ``base_url`` is ``http://127.0.0.1:<port>``; ``state`` gives direct read access to the
    ledger, jobs and fault rules of this instance.
    """

    def __init__(self, config: ReceiverConfig | None = None, *, host: str = "127.0.0.1",
                 port: int = 0) -> None:
        _check_loopback(host)
        self.config = config or ReceiverConfig()
        self.app = create_app(self.config)
        self._host, self._port = host, port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._failure: BaseException | None = None

    @property
    def state(self) -> ReceiverState:
        return receiver_state(self.app)

    @property
    def port(self) -> int:
        if self._socket is None:
            raise RuntimeError("the receiver is not started")
        return int(self._socket.getsockname()[1])

    @property
    def base_url(self) -> str:
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"http://{host}:{self.port}"

    def start(self) -> ReceiverThread:
        if self._thread is not None:
            raise RuntimeError("the receiver is already started")
        family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # asyncio sets TCP_NODELAY
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._host, self._port))
        self._socket = sock
        self._server = uvicorn.Server(_uvicorn_config(self.app, self._host, self.port, "warning"))
        self._thread = threading.Thread(target=self._run, name="dpone-mock-receiver", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the mock receiver did not start") from self._failure
            time.sleep(0.005)
        return self

    def _run(self) -> None:
        server, sock = self._server, self._socket
        if server is None or sock is None:
            return
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # reported by start()/stop(), never swallowed silently
            self._failure = exc

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(_STOP_TIMEOUT_S)
            if self._thread.is_alive():
                raise RuntimeError("the mock receiver did not stop")
        if self._socket is not None:
            self._socket.close()
        self._thread = None
        self._server = None

    def __enter__(self) -> ReceiverThread:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
