"""The S3 store without a server: impossible multipart settings are refused, and contended
conditional writes are retried or settled (botocore's Stubber answers, nothing is sent)."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from dpone.artifacts import S3ArtifactStore
from dpone.contracts import DponeError, content_digest
from dpone.contracts.ports import ArtifactRef

MIB = 1 << 20


def _error(code: str, call: Any) -> DponeError:
    with pytest.raises(DponeError) as caught:
        call()
    assert caught.value.code == code, caught.value
    return caught.value


def _stubbed() -> tuple[S3ArtifactStore, Stubber]:
    client = boto3.session.Session().client("s3", region_name="us-east-1",
                                            aws_access_key_id="stub", aws_secret_access_key="stub")
    return S3ArtifactStore("bucket", client=client), Stubber(client)


@pytest.mark.parametrize("tuning", [{"part_size": 5 * MIB - 1}, {"multipart_threshold": -1}])
def test_impossible_multipart_settings_are_refused(tuning: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        S3ArtifactStore("bucket", client=object(), **tuning)


def test_a_contended_conditional_write_is_retried() -> None:
    store, stub = _stubbed()
    stub.add_client_error("put_object", service_error_code="ConditionalRequestConflict",
                          http_status_code=409)
    stub.add_client_error("head_object", service_error_code="404", http_status_code=404)
    stub.add_response("put_object", {"ETag": '"e"'})
    with stub:
        assert store.put_bytes("k", b"x") == ArtifactRef(key="k", digest=content_digest(b"x"),
                                                         size=1)
    stub.assert_no_pending_responses()


def test_a_contended_write_that_landed_elsewhere_is_settled() -> None:
    store, stub = _stubbed()
    stub.add_client_error("put_object", service_error_code="ConditionalRequestConflict",
                          http_status_code=409)
    stub.add_response("head_object", {"ContentLength": 1,
                                      "Metadata": {"dpone-sha256": content_digest(b"y")}})
    with stub:
        error = _error("artifact.conflict", lambda: store.put_bytes("k", b"x"))
    assert error.details["existing_digest"] == content_digest(b"y")
    stub.assert_no_pending_responses()
