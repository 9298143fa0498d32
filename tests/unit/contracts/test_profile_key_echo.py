"""The certified key echo of a receipt poll: a closed, typed profile block, compiled only where
the sealed request carries the key in the certified form."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from dpone.compiler import compile_workload
from dpone.contracts import DponeError
from dpone.contracts.profile import KeyEcho

ECHO_LINE = "    key_echo: {body_json_pointer: /filename, form: payload_filename}\n"


def _edit_profile(registry: Path, old: str, new: str) -> None:
    profile = registry / "profiles" / "mock.dataset-jobs@1.yaml"
    text = profile.read_text(encoding="utf-8")
    assert old in text
    profile.write_text(text.replace(old, new), encoding="utf-8")


def _compile(registry: Path) -> object:
    return compile_workload(registry / "workloads" / "measurements_async.yaml", registry)


def test_key_echo_takes_exactly_one_source_and_a_closed_form() -> None:
    assert KeyEcho(body_json_pointer="/filename").form == "payload_filename"
    assert KeyEcho(header="X-Job-Key", form="receiver_mutation_key").header == "X-Job-Key"
    for bad in ({}, {"body_json_pointer": "/f", "header": "X-Key"},
                {"body_json_pointer": "/f", "form": "delivery_key"},
                {"body_json_pointer": "/f", "required": False}):
        with pytest.raises(ValidationError):
            KeyEcho.model_validate(bad)


def test_the_example_profile_certifies_the_filename_echo(registry: Path) -> None:
    compiled = compile_workload(registry / "workloads" / "measurements_async.yaml", registry)
    poll = compiled.plan.profile.snapshot.acknowledgement.poll
    assert poll is not None and poll.key_echo == KeyEcho(body_json_pointer="/filename")


def test_a_key_echo_changes_the_operation_semantics(registry: Path) -> None:
    certified = compile_workload(registry / "workloads" / "measurements_async.yaml", registry)
    _edit_profile(registry, ECHO_LINE, "")
    counters_only = compile_workload(registry / "workloads" / "measurements_async.yaml", registry)
    poll = counters_only.plan.profile.snapshot.acknowledgement.poll
    assert poll is not None and poll.key_echo is None
    assert (certified.plan.profile.operation_semantics_digest
            != counters_only.plan.profile.operation_semantics_digest)


def test_a_raw_key_echo_needs_a_request_template_that_sends_the_key(registry: Path) -> None:
    _edit_profile(registry, "form: payload_filename}", "form: receiver_mutation_key}")
    with pytest.raises(DponeError) as caught:
        _compile(registry)
    assert caught.value.code == "schema.invalid_value"
    assert caught.value.location is not None
    assert caught.value.location.path == "acknowledgement.poll.key_echo.form"
    assert "never sends" in caught.value.message

    _edit_profile(registry, "      range_end: {value_from: scope.to, format: date}\n",
                  "      range_end: {value_from: scope.to, format: date}\n"
                  "      key: {value_from: receiver_mutation_key}\n")
    _compile(registry)  # a scalar part now carries the key itself


def test_a_filename_echo_needs_a_multipart_body(registry: Path) -> None:
    _edit_profile(registry, """    type: multipart_file
    payload_part:
      name: file
      format: csv
      compression: gzip
      content_type: application/gzip
    scalar_parts:
      range_start: {value_from: scope.from, format: date}
      range_end: {value_from: scope.to, format: date}
""", """    type: single
    payload: {format: csv, compression: gzip, content_type: application/gzip}
""")
    _edit_profile(registry, "  type: receiver_duplicate_key\n  location: payload_filename\n"
                  "  value_from: receiver_mutation_key\n", "  type: none\n")
    _edit_profile(registry, "  media_type: multipart/form-data\n", "  media_type: application/gzip\n")
    with pytest.raises(DponeError) as caught:
        _compile(registry)
    assert caught.value.code == "schema.invalid_value"
    assert caught.value.location is not None
    assert caught.value.location.path == "acknowledgement.poll.key_echo.form"
    assert caught.value.hint is not None and "receiver_mutation_key" in caught.value.hint


def test_a_key_echo_pointer_is_parsed(registry: Path) -> None:
    _edit_profile(registry, "key_echo: {body_json_pointer: /filename",
                  "key_echo: {body_json_pointer: filename")
    with pytest.raises(DponeError) as caught:
        _compile(registry)
    assert caught.value.code == "pointer.syntax"
    assert caught.value.location is not None
    assert caught.value.location.path == "acknowledgement.poll.key_echo.body_json_pointer"
