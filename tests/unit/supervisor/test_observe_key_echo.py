"""A certified key echo binds a poll answer to the child: only the exact expected value matches;
a missing, unreadable or different echo never does."""

from __future__ import annotations

import json

import pytest

from dpone.contracts.profile import KeyEcho, ResponseBounds
from dpone.executor.supervisor import echo_matches
from dpone.executor.transport import Response

OURS = "3f" * 32 + ".csv.gz"
THEIRS = "7b" * 32 + ".csv.gz"
BY_BODY = KeyEcho(body_json_pointer="/filename")
BY_HEADER = KeyEcho(header="X-Job-Key", form="receiver_mutation_key")
BOUNDS = ResponseBounds()


def _answer(body: object, **headers: str) -> Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return Response(status=200, headers={k.lower().replace("_", "-"): v
                                         for k, v in headers.items()}, body=raw)


def _job(filename: object) -> dict[str, object]:
    return {"job_id": "job-000001", "filename": filename, "phase": "complete",
            "rows_accepted": 300, "rows_rejected": 0}


def test_the_exact_echo_matches() -> None:
    assert echo_matches(BY_BODY, OURS, _answer(_job(OURS)), BOUNDS)
    key = "sha256:" + "3f" * 32
    assert echo_matches(BY_HEADER, key, _answer(b"", x_job_key=key), BOUNDS)


@pytest.mark.parametrize("answer", [
    _answer(_job(THEIRS)),                                 # a reused id naming another job
    _answer(_job(OURS.upper())),                           # not byte-equal
    _answer(_job(OURS + " ")),
    _answer({k: v for k, v in _job(OURS).items() if k != "filename"}),  # no echo
    _answer(_job(None)),
    _answer(_job([OURS])),                                 # not a string
    _answer(b"{not json"),
    _answer(b"\xff\xfe"),
], ids=["other", "case", "space", "missing", "null", "list", "not-json", "not-utf8"])
def test_anything_but_the_exact_echo_is_a_mismatch(answer: Response) -> None:
    assert not echo_matches(BY_BODY, OURS, answer, BOUNDS)


def test_a_header_echo_is_read_from_the_header_only() -> None:
    key = "sha256:" + "3f" * 32
    assert not echo_matches(BY_HEADER, key, _answer({"x-job-key": key}), BOUNDS)
    assert not echo_matches(BY_HEADER, key, _answer(b"", x_job_key="sha256:" + "00" * 32), BOUNDS)


def test_no_expected_value_never_matches() -> None:
    """A sealed request without the certified form (an unreachable plan) fails closed."""
    assert not echo_matches(BY_BODY, None, _answer(_job(OURS)), BOUNDS)
