"""Bounded JSON parsing and typed extractors."""

from __future__ import annotations

import json

import pytest

from dpone.contracts.profile import Extractor, ResponseBounds
from dpone.executor.transport import (
    ExtractionError,
    ExtractionFailure,
    Response,
    extract,
    parse_bounded_json,
)

BOUNDS = ResponseBounds(max_body_bytes=4096, max_depth=4, max_fields=20, max_string_bytes=32)


def _response(body: bytes | str | object, **headers: str) -> Response:
    raw = body if isinstance(body, bytes) else (
        body.encode() if isinstance(body, str) else json.dumps(body).encode())
    return Response(status=200, headers={k.lower().replace("_", "-"): v for k, v in headers.items()},
                    body=raw)


def _reason(body: bytes | str, bounds: ResponseBounds = BOUNDS) -> ExtractionFailure:
    raw = body if isinstance(body, bytes) else body.encode()
    with pytest.raises(ExtractionError) as caught:
        parse_bounded_json(raw, bounds)
    error = caught.value
    assert error.code == "REST_DELIVERY_PROTOCOL_UNKNOWN"
    assert error.details["reason"] == error.reason.value
    return error.reason


def test_pointer_extractors_are_typed() -> None:
    response = _response({"job": {"id": "j-1", "n": 7, "num_id": 42, "a/b": "slash", "t~": "tilde"},
                          "rows": [10, 20]})
    extractors = {
        "id": Extractor(body_json_pointer="/job/id"),
        "n": Extractor(body_json_pointer="/job/n", type="integer"),
        "num_id": Extractor(body_json_pointer="/job/num_id"),
        "second": Extractor(body_json_pointer="/rows/1", type="integer"),
        "slash": Extractor(body_json_pointer="/job/a~1b"),
        "tilde": Extractor(body_json_pointer="/job/t~0"),
    }
    assert extract(extractors, response, BOUNDS) == {
        "id": "j-1", "n": 7, "num_id": "42", "second": 20, "slash": "slash", "tilde": "tilde"}


def test_header_extractors_are_typed() -> None:
    response = _response(b"", operation_location="/v1/jobs/9", x_count=" 12 ")
    extractors = {"where": Extractor(header="Operation-Location"),
                  "count": Extractor(header="X-Count", type="integer")}
    assert extract(extractors, response) == {"where": "/v1/jobs/9", "count": 12}
    with pytest.raises(ExtractionError) as caught:
        extract({"bad": Extractor(header="X-Count", type="integer")},
                _response(b"", x_count="12.5"))
    assert caught.value.reason is ExtractionFailure.WRONG_TYPE


def test_required_missing_optional_omitted_and_null_is_absent() -> None:
    response = _response({"id": None})
    assert extract({"id": Extractor(body_json_pointer="/id", required=False),
                    "other": Extractor(body_json_pointer="/nope", required=False),
                    "h": Extractor(header="X-None", required=False)}, response) == {}
    for pointer in ("/id", "/nope", "/id/deeper"):
        with pytest.raises(ExtractionError) as caught:
            extract({"id": Extractor(body_json_pointer=pointer)}, response)
        assert caught.value.reason is ExtractionFailure.MISSING
        assert caught.value.details["field"] == "id"


@pytest.mark.parametrize(("value", "kind"), [
    (True, "integer"), (1.5, "integer"), ("7", "integer"), ({"a": 1}, "string"),
    ([1], "string"), (False, "string"), (2.0, "string"),
])
def test_wrong_types_are_refused(value: object, kind: str) -> None:
    with pytest.raises(ExtractionError) as caught:
        extract({"v": Extractor(body_json_pointer="/v", type=kind)},  # type: ignore[arg-type]
                _response({"v": value}))
    assert caught.value.reason is ExtractionFailure.WRONG_TYPE


def test_header_only_extraction_never_parses_the_body() -> None:
    response = _response(b"\xff not json", x_id="abc")
    assert extract({"id": Extractor(header="X-Id")}, response) == {"id": "abc"}


def test_depth_bound() -> None:
    assert parse_bounded_json(b"[[[[1]]]]", BOUNDS) == [[[[1]]]]
    assert _reason("[[[[[1]]]]]") is ExtractionFailure.TOO_DEEP
    assert _reason('{"a":{"b":{"c":{"d":{"e":1}}}}}') is ExtractionFailure.TOO_DEEP
    # brackets inside strings are not nesting
    assert parse_bounded_json(b'{"a":"[[[[[[[[{{{{"}', BOUNDS) == {"a": "[[[[[[[[{{{{"}


def test_pathological_depth_is_refused_before_parsing() -> None:
    big = ResponseBounds(max_body_bytes=16_777_216, max_depth=64)
    assert _reason("[" * 500_000 + "]" * 500_000, big) is ExtractionFailure.TOO_DEEP


def test_field_bound_counts_members_and_elements() -> None:
    assert parse_bounded_json(json.dumps(list(range(20))).encode(), BOUNDS) == list(range(20))
    assert _reason(json.dumps(list(range(21)))) is ExtractionFailure.TOO_MANY_FIELDS
    assert _reason(json.dumps({f"k{i}": i for i in range(21)})) is ExtractionFailure.TOO_MANY_FIELDS
    assert _reason(json.dumps({"a": list(range(10)), "b": list(range(9))})) \
        is ExtractionFailure.TOO_MANY_FIELDS


def test_string_bound_applies_to_values_and_keys_in_utf8_bytes() -> None:
    assert parse_bounded_json(json.dumps({"a": "x" * 32}).encode(), BOUNDS)
    assert _reason(json.dumps({"a": "x" * 33})) is ExtractionFailure.STRING_TOO_LONG
    assert _reason(json.dumps({"k" * 33: 1})) is ExtractionFailure.STRING_TOO_LONG
    assert _reason(json.dumps({"a": "я" * 17}, ensure_ascii=False)) is ExtractionFailure.STRING_TOO_LONG
    assert _reason(json.dumps({"a": "я" * 17})) is ExtractionFailure.STRING_TOO_LONG


def test_body_bound() -> None:
    assert _reason(b" " * 4097) is ExtractionFailure.BODY_TOO_LARGE
    with pytest.raises(ExtractionError) as caught:
        extract({"id": Extractor(body_json_pointer="/id")}, _response(b" " * 5000), BOUNDS)
    assert caught.value.reason is ExtractionFailure.BODY_TOO_LARGE


@pytest.mark.parametrize("body", [b"", b"{", b'{"a":1,}', b"\xff\xfe", b"NaN", b'{"a":Infinity}',
                                  b"[1] [2]", b'"unterminated', b"1" * 5000])
def test_invalid_json(body: bytes) -> None:
    bounds = ResponseBounds(max_body_bytes=8192)
    assert _reason(body, bounds) is ExtractionFailure.INVALID_JSON


def test_duplicate_keys_are_refused() -> None:
    assert _reason(b'{"id":"a","id":"b"}') is ExtractionFailure.DUPLICATE_KEY


def test_encoded_bodies_are_not_decoded() -> None:
    with pytest.raises(ExtractionError) as caught:
        extract({"id": Extractor(body_json_pointer="/id")},
                _response(b'{"id":"a"}', content_encoding="gzip"))
    assert caught.value.reason is ExtractionFailure.UNSUPPORTED_ENCODING
    assert extract({"id": Extractor(body_json_pointer="/id")},
                   _response(b'{"id":"a"}', content_encoding="identity")) == {"id": "a"}


def test_error_messages_never_echo_response_content() -> None:
    secret_body = json.dumps({"id": 5, "token": "response-content-xyz"}).encode()
    with pytest.raises(ExtractionError) as caught:
        extract({"token": Extractor(body_json_pointer="/token", type="integer")},
                _response(secret_body))
    assert "response-content-xyz" not in str(caught.value)
    assert "response-content-xyz" not in repr(caught.value.to_document())
