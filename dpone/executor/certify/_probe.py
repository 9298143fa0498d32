"""Send one certification request and keep its redacted evidence.

:class:`Probe` sends through the binding's transport (its credential, TLS and network policies)
and turns each exchange into an :class:`~dpone.contracts.certification.Exchange`: method,
path, the request body's digest (never the body), the status, at most
:data:`~dpone.contracts.certification.EXCERPT_CHARS` characters of the answer with every
credential value and the run's row marker blanked, the ``Date`` header and the time taken. It
also remembers every answer of the run with its wall-clock send and receive instants, for the
clock-skew case. Thread-safe: the concurrent-duplicates case sends from several threads.
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass

from dpone.contracts.certification import EXCERPT_CHARS, Exchange
from dpone.contracts.ports import Clock, RestTransportPort
from dpone.contracts.transport import Failure, OutboundRequest, Response
from dpone.executor.certify._synthetic import shown_path

REDACTED = "<redacted>"


@dataclass(frozen=True, slots=True)
class Answer:
    """One exchange: what came back (a response or a failure) and when."""

    exchange: Exchange
    response: Response | None
    failure: Failure | None
    started: float
    """Monotonic seconds when the request was handed to the transport."""
    finished: float
    sent_at: dt.datetime
    received_at: dt.datetime

    @property
    def status(self) -> int | None:
        return self.response.status if self.response is not None else None

    def shown(self) -> str:
        """``HTTP 409`` or ``no answer (read_timeout)``."""
        if self.response is not None:
            return f"HTTP {self.response.status}"
        kind = self.failure.kind.value if self.failure is not None else "unknown"
        return f"no answer ({kind})"


class Probe:
    """Sends requests of one certification run and records their evidence."""

    def __init__(self, transport: RestTransportPort, clock: Clock, *,
                 redact: tuple[str, ...] = ()) -> None:
        self._transport = transport
        self._clock = clock
        self._redact = tuple(value for value in redact if value)
        self._lock = threading.Lock()
        self._answers: list[Answer] = []

    def send(self, request: OutboundRequest, body_digest: str | None = None) -> Answer:
        sent_at, started = self._clock.now(), self._clock.monotonic()
        outcome = self._transport.send(request)
        finished, received_at = self._clock.monotonic(), self._clock.now()
        response = outcome if isinstance(outcome, Response) else None
        failure = outcome if isinstance(outcome, Failure) else None
        exchange = Exchange(
            method=request.method, path=shown_path(request), request_body_digest=body_digest,
            status=response.status if response is not None else None,
            answer_excerpt=self._excerpt(response) if response is not None else "",
            date_header=response.headers.get("date") if response is not None else None,
            elapsed_ms=max(0, round((finished - started) * 1000)))
        answer = Answer(exchange=exchange, response=response, failure=failure, started=started,
                        finished=finished, sent_at=sent_at, received_at=received_at)
        with self._lock:
            self._answers.append(answer)
        return answer

    def answers(self) -> tuple[Answer, ...]:
        """Every answer of the run so far, in the order they came back."""
        with self._lock:
            return tuple(self._answers)

    def _excerpt(self, response: Response) -> str:
        text = response.body.decode("utf-8", errors="replace")
        for value in self._redact:
            text = text.replace(value, REDACTED)
        return text[:EXCERPT_CHARS]
