"""Multipart envelope: exact length, parseable framing, collision-free deterministic boundary."""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
from collections.abc import Callable, Iterable
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpone.codecs import BOUNDARY_PREFIX, MultipartEnvelope, PayloadIntegrityError
from dpone.codecs import _multipart as multipart_module
from dpone.contracts.identity import identity, rendered_request_semantics_digest
from support.codec_reference import parse_multipart

SCALARS = [("range_start", "2026-08-01"), ("range_end", "2026-08-03"), ("note", "Ёлка, \"x\"\r\n")]


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def envelope(payload: bytes, scalars: list[tuple[str, str]] = SCALARS,
             source: Callable[[], Iterable[bytes]] | None = None, **overrides: Any) -> MultipartEnvelope:
    arguments: dict[str, Any] = {
        "payload_name": "file", "filename": "child-0001.csv.gz", "content_type": "application/gzip",
        "scalar_parts": scalars, "payload_size": len(payload), "payload_digest": digest(payload),
        "payload": source or (lambda: [payload]),
    }
    arguments.update(overrides)
    return MultipartEnvelope(**arguments)


def test_body_layout_and_length() -> None:
    payload = b"\x1f\x8b binary \r\n-- payload"
    env = envelope(payload)
    body = env.body(payload)
    assert env.content_length == len(body)
    assert env.content_type == f"multipart/form-data; boundary={env.boundary}"
    assert env.boundary.startswith(BOUNDARY_PREFIX) and len(env.boundary) == 38
    b = env.boundary.encode()
    assert body == (
        b"--" + b + b'\r\nContent-Disposition: form-data; name="range_start"\r\n\r\n2026-08-01\r\n'
        + b"--" + b + b'\r\nContent-Disposition: form-data; name="range_end"\r\n\r\n2026-08-03\r\n'
        + b"--" + b + b'\r\nContent-Disposition: form-data; name="note"\r\n\r\n'
        + "Ёлка, \"x\"\r\n".encode() + b"\r\n"
        + b"--" + b + b'\r\nContent-Disposition: form-data; name="file"; filename="child-0001.csv.gz"\r\n'
        + b"Content-Type: application/gzip\r\n\r\n" + payload + b"\r\n--" + b + b"--\r\n"
    )


def test_parsing_recovers_every_part_exactly() -> None:
    payload = bytes(range(256)) * 50
    env = envelope(payload)
    body = b"".join(env.iter_body([payload[:1000], b"", payload[1000:]]))
    parts = parse_multipart(body, env.boundary)
    assert [(h["Content-Disposition"], c) for h, c in parts[:-1]] == [
        (f'form-data; name="{name}"', value.encode("utf-8")) for name, value in SCALARS]
    headers, content = parts[-1]
    assert headers == {"Content-Disposition": env.content_disposition, "Content-Type": "application/gzip"}
    assert content == payload
    # The stdlib MIME parser reads the same parts.
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + env.content_type.encode() + b"\r\n\r\n" + body)
    found = list(message.iter_parts())
    assert [p.get_param("name", header="content-disposition") for p in found] == [
        "range_start", "range_end", "note", "file"]
    assert found[-1].get_filename() == "child-0001.csv.gz"
    assert found[-1].get_payload(decode=True) == payload


def test_boundary_is_deterministic_and_bound_to_the_envelope() -> None:
    payload = b"rows"
    first = envelope(payload).boundary
    assert envelope(payload).boundary == first
    assert envelope(b"other rows").boundary != first
    assert envelope(payload, [("range_start", "2026-08-02")]).boundary != first
    assert envelope(payload, filename="child-0002.csv.gz").boundary != first
    expected = identity("multipart_boundary", {
        "payload_digest": multipart_module.DigestValue(digest(payload)), "payload_part_name": "file",
        "filename": "child-0001.csv.gz", "content_type": "application/gzip",
        "scalar_parts": [list(p) for p in SCALARS], "attempt": 0})
    assert first == BOUNDARY_PREFIX + expected[7:39]


def _blind(domain: str, fields: dict[str, Any]) -> str:
    """The boundary derivation without the payload digest, scalar values and filename, so that
    a test can plant a candidate in a part (the real derivation hashes them: no fixed point)."""
    planted = ("payload_digest", "scalar_parts", "filename")
    return identity(domain, {k: v for k, v in fields.items() if k not in planted})


def _candidates(count: int) -> list[str]:
    with mock.patch.object(multipart_module, "identity", _blind):
        probe = envelope(b"probe")
        return [probe._candidate(attempt) for attempt in range(count)]


def assert_collision_free(env: MultipartEnvelope, payload: bytes) -> None:
    body = env.body(payload)
    assert body.count(env.boundary.encode()) == len(env.scalar_parts) + 2  # delimiters only
    parts = parse_multipart(body, env.boundary)
    assert [c for _, c in parts] == [v.encode() for _, v in env.scalar_parts] + [payload]


def test_a_payload_holding_the_first_choice_makes_the_envelope_pick_the_next() -> None:
    first, second, third = _candidates(3)
    payload = b"prefix " + first.encode() + b" suffix"
    with mock.patch.object(multipart_module, "identity", _blind):
        assert envelope(payload).boundary == second
        assert envelope(payload).boundary == second  # deterministic
        # Found across chunk seams too: the payload streamed one byte at a time.
        assert envelope(payload, source=lambda: [bytes([c]) for c in payload]).boundary == second
        assert_collision_free(envelope(payload), payload)
        both = first.encode() + b"|" + second.encode()
        assert envelope(both).boundary == third
        assert_collision_free(envelope(both), both)


def test_a_scalar_value_or_filename_holding_the_first_choice_is_avoided() -> None:
    first, second, _ = _candidates(3)
    with mock.patch.object(multipart_module, "identity", _blind):
        env = envelope(b"x", [("range_start", f"2026-08-01 {first}")])
        assert env.boundary == second
        assert_collision_free(env, b"x")
        env = envelope(b"x", filename=f"{first}.csv.gz")
        assert env.boundary == second
        assert_collision_free(env, b"x")


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=400), st.lists(st.text(max_size=20), max_size=3))
def test_boundary_never_occurs_inside_a_part(payload: bytes, values: list[str]) -> None:
    env = envelope(payload, [(f"p{i}", v) for i, v in enumerate(values)])
    assert env.content_length == len(env.body(payload))
    assert_collision_free(env, payload)


def test_payload_must_match_its_sealed_size_and_digest() -> None:
    payload = b"sealed bytes"
    with pytest.raises(PayloadIntegrityError):
        envelope(payload, source=lambda: [b"other bytes!"])
    env = envelope(payload)
    body = env.iter_body([b"sealed bytez"])
    assert next(body).startswith(b"--")
    with pytest.raises(PayloadIntegrityError):
        list(body)
    longer = env.iter_body([payload, b"!"])
    with pytest.raises(PayloadIntegrityError):
        list(longer)
    emitted: list[bytes] = []
    with pytest.raises(PayloadIntegrityError):
        emitted.extend(env.iter_body([payload[:-1]]))
    assert not any(b"--" + env.boundary.encode() + b"--" in chunk for chunk in emitted)


@pytest.mark.parametrize("overrides", [
    {"filename": "child 1.csv"}, {"filename": "../x.csv"}, {"filename": 'a"b'}, {"filename": ""},
    {"filename": "файл.csv"}, {"payload_name": "bad name"}, {"content_type": "text/csv\r\nX-Evil: 1"},
    {"payload_digest": "sha256:abc"}, {"payload_size": -1},
    {"scalar_parts": [("file", "dup")]}, {"scalar_parts": [('na"me', "v")]},
])
def test_invalid_envelope_inputs_are_refused(overrides: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        envelope(b"x", **overrides)


def test_scalar_values_must_be_text() -> None:
    with pytest.raises(TypeError):
        envelope(b"x", [("n", 1)])  # type: ignore[list-item]


def test_request_semantics_feed_the_rendered_request_identity() -> None:
    payload = b"rows"
    env = envelope(payload)
    semantics = env.request_semantics()
    assert semantics["deterministic_multipart_boundary"] == env.boundary
    assert semantics["sealed_payload_digest"] == digest(payload)
    rendered = rendered_request_semantics_digest(
        method="POST", normalized_rendered_path_and_query="/mock/v1/dataset-jobs",
        all_non_secret_semantic_headers={}, **semantics)
    assert rendered == rendered_request_semantics_digest(
        method="POST", normalized_rendered_path_and_query="/mock/v1/dataset-jobs",
        all_non_secret_semantic_headers={}, **envelope(payload).request_semantics())
    assert rendered != rendered_request_semantics_digest(
        method="POST", normalized_rendered_path_and_query="/mock/v1/dataset-jobs",
        all_non_secret_semantic_headers={}, **envelope(payload, filename="b.csv.gz").request_semantics())


def _never_read() -> Iterable[bytes]:
    raise AssertionError("the payload must not be read to rebuild a sealed envelope")


def test_a_sealed_boundary_rebuilds_the_same_body_without_reading_the_payload() -> None:
    payload = bytes(range(256)) * 40
    sealed = envelope(payload)
    rebuilt = envelope(payload, source=_never_read, sealed_boundary=sealed.boundary)
    assert rebuilt.boundary == sealed.boundary
    assert rebuilt.content_length == sealed.content_length
    assert rebuilt.body(payload) == sealed.body(payload)
    with pytest.raises(PayloadIntegrityError):
        rebuilt.body(payload[:-1] + b"\x00")


@pytest.mark.parametrize("boundary", ["dpone-XYZ", "other-" + "0" * 32, "dpone-" + "0" * 31])
def test_a_sealed_boundary_must_have_dpones_form(boundary: str) -> None:
    with pytest.raises(ValueError, match="sealed multipart boundary"):
        envelope(b"x", source=_never_read, sealed_boundary=boundary)


def test_a_sealed_boundary_that_occurs_in_a_scalar_part_is_refused() -> None:
    boundary = BOUNDARY_PREFIX + "a" * 32
    with pytest.raises(ValueError, match="occurs in a rendered part"):
        envelope(b"x", scalars=[("note", f"see {boundary}")], source=_never_read,
                 sealed_boundary=boundary)
