"""A transport that answers every batch at once, as the line receiver would, with no socket.

The delivery benchmark's ``no-wire`` path runs ``deliver()`` through it: what is left of the
drive is dpone's own work per child (its journal transactions, the MAY_ATTEMPT marker and the
response evidence written to the store, the payload read and checked before its send, the
decisions and telemetry), measured with nothing to wait for on the wire. Every body is still
read to its last byte, as a socket would take it. Synchronous NDJSON batches only
(``POST /mock/v1/batches/{resource}``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

from _line_receiver import count_lines

from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.transport import Response
from dpone.executor.transport import OutboundRequest

BATCHES = "/mock/v1/batches/"


class AnsweringTransport:
    """``send`` reads the body, counts its lines as the line receiver does and answers ``200``
    with every row accepted."""

    def __init__(self) -> None:
        self.batches = 0

    def send(self, request: OutboundRequest) -> Response:
        if request.method != "POST" or not request.path.startswith(BATCHES):
            raise ValueError(f"the answering transport takes NDJSON batches only, not "
                             f"{request.method} {request.path}")
        body = b"".join(request.body)
        if len(body) != request.content_length:
            raise ValueError(f"the body gave {len(body)} bytes, content_length is "
                             f"{request.content_length}")
        self.batches += 1
        answer = {"batch_id": f"batch-{self.batches}", "accepted_rows": count_lines(body),
                  "rejected_rows": 0}
        return Response(status=200, headers={"content-type": "application/json"},
                        body=json.dumps(answer).encode())


@contextlib.contextmanager
def answering_transport(_plan: RestDeliveryPlan) -> Iterator[Any]:
    """:func:`dpone.executor.transport.transport_for`'s shape, for ``paths.in_process``."""
    yield AnsweringTransport()
