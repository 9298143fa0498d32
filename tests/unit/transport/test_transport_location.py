"""Receipt locations: accepted only as one segment under the profile's prefix, on the binding's
own origin; every other location is refused (the receipt is absent, nothing can be polled)."""

from __future__ import annotations

import pytest

from dpone.contracts.profile import Extractor, OperationProfile
from dpone.executor.transport import ExtractionError, Response, extract
from dpone.executor.transport._location import origin_of

ORIGIN = origin_of("https", "Receiver.Example.TEST", None)
RECEIPT = {"id": Extractor.model_validate(
    {"header": "Operation-Location", "location": {"path_prefix": "/v1/jobs/"}})}


def _answer(location: str, origin: str | None = ORIGIN) -> Response:
    return Response(status=202, headers={"operation-location": location}, body=b"",
                    origin=origin)


@pytest.mark.parametrize("location", [
    "/v1/jobs/j-42",
    "https://receiver.example.test/v1/jobs/j-42",
    "HTTPS://RECEIVER.EXAMPLE.TEST:443/v1/jobs/j-42",
    "  https://receiver.example.test/v1/jobs/j-42  ",
])
def test_a_location_of_the_binding_origin_under_the_prefix_is_the_receipt(location: str) -> None:
    assert ORIGIN == "https://receiver.example.test:443"
    assert extract(RECEIPT, _answer(location)) == {"id": "j-42"}


@pytest.mark.parametrize("location", [
    "https://attacker.example/v1/jobs/j-42",             # another host
    "https://receiver.example.test:8443/v1/jobs/j-42",   # another port
    "http://receiver.example.test/v1/jobs/j-42",         # another scheme
    "https://user@receiver.example.test/v1/jobs/j-42",   # userinfo
    "//attacker.example/v1/jobs/j-42",                   # scheme-relative
    "/v1/jobs/j-42?next=https://attacker.example",       # query
    "/v1/jobs/j-42#frag",                                # fragment
    "/v1/jobs/../admin",                                 # path escape
    "/v1/jobs/%2e%2e",                                   # encoded dot segment
    "/v1/jobs/a/b",                                      # more than one segment
    "/v1/jobs/",                                         # no segment
    "/v2/jobs/j-42",                                     # outside the allowlisted prefix
    "/v1/jobs/j\\42",                                    # backslash
    "https://receiver.example.test.attacker.example/v1/jobs/j-42",
])
def test_any_other_location_is_refused(location: str) -> None:
    with pytest.raises(ExtractionError) as refused:
        extract(RECEIPT, _answer(location))
    assert refused.value.code == "REST_DELIVERY_PROTOCOL_UNKNOWN"
    assert refused.value.reason.value == "location_refused"
    assert "attacker" not in str(refused.value)  # messages never echo response content


def test_without_a_known_origin_only_a_relative_location_is_accepted() -> None:
    assert extract(RECEIPT, _answer("/v1/jobs/j-1", origin=None)) == {"id": "j-1"}
    with pytest.raises(ExtractionError):
        extract(RECEIPT, _answer("https://receiver.example.test/v1/jobs/j-1", origin=None))


def test_a_plain_header_extractor_keeps_the_raw_value() -> None:
    raw = {"id": Extractor(header="Operation-Location")}
    location = "https://attacker.example/v1/jobs/j-42"
    assert extract(raw, _answer(location)) == {"id": location}


@pytest.mark.parametrize("rule", [
    {"header": "Location", "location": {"path_prefix": "/v1/jobs"}},        # no trailing slash
    {"header": "Location", "location": {"path_prefix": "/v1/../jobs/"}},    # dot segment
    {"header": "Location", "type": "integer", "location": {"path_prefix": "/v1/jobs/"}},
    {"body_json_pointer": "/id", "location": {"path_prefix": "/v1/jobs/"}},
])
def test_a_location_rule_is_a_string_header_under_a_clean_prefix(rule: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Extractor.model_validate(rule)


def test_profiles_without_a_location_rule_keep_their_serialized_form() -> None:
    plain = Extractor(body_json_pointer="/job_id")
    assert "location" not in plain.model_dump(mode="json")
    assert OperationProfile.model_json_schema()["$defs"]["Extractor"]["properties"]["location"]
