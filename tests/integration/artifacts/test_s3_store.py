"""What only the S3 store can show: the server's conditional writes, metadata, prefixes, edges."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from dpone.artifacts import S3ArtifactStore
from dpone.contracts import DponeError, content_digest
from dpone.contracts.ports import ArtifactRef
from support.artifacts import S3Bucket
from support.common import free_port

MIB = 1 << 20


def _store(bucket: S3Bucket, prefix: str = "", **tuning: Any) -> S3ArtifactStore:
    return S3ArtifactStore(bucket.name, prefix, endpoint_url=bucket.endpoint_url, **tuning)


def _error(code: str, call: Any) -> DponeError:
    with pytest.raises(DponeError) as caught:
        call()
    assert caught.value.code == code, caught.value
    return caught.value


# -- the server's conditional writes are real -------------------------------------------------


def test_the_server_refuses_put_object_if_none_match_on_an_existing_key(
        s3_bucket: S3Bucket) -> None:
    client = s3_bucket.client
    client.put_object(Bucket=s3_bucket.name, Key="k", Body=b"first", IfNoneMatch="*")
    with pytest.raises(ClientError) as caught:
        client.put_object(Bucket=s3_bucket.name, Key="k", Body=b"second", IfNoneMatch="*")
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert caught.value.response["Error"]["Code"] == "PreconditionFailed"
    assert client.get_object(Bucket=s3_bucket.name, Key="k")["Body"].read() == b"first"


def test_the_server_refuses_complete_multipart_upload_if_none_match_on_an_existing_key(
        s3_bucket: S3Bucket) -> None:
    client, bucket = s3_bucket.client, s3_bucket.name
    client.put_object(Bucket=bucket, Key="k", Body=b"first")
    upload = client.create_multipart_upload(Bucket=bucket, Key="k")["UploadId"]
    etag = client.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=1,
                              Body=b"p" * (5 * MIB))["ETag"]
    with pytest.raises(ClientError) as caught:
        client.complete_multipart_upload(
            Bucket=bucket, Key="k", UploadId=upload, IfNoneMatch="*",
            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert caught.value.response["Error"]["Code"] == "PreconditionFailed"
    assert client.get_object(Bucket=bucket, Key="k")["Body"].read() == b"first"
    assert [item["UploadId"] for item in s3_bucket.pending_uploads()] == [upload]
    client.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=upload)


# -- digests ----------------------------------------------------------------------------------


def test_single_request_objects_record_their_digest(s3_bucket: S3Bucket) -> None:
    ref = _store(s3_bucket).put_bytes("k", b"payload")
    head = s3_bucket.client.head_object(Bucket=s3_bucket.name, Key="k")
    assert head["Metadata"] == {"dpone-sha256": ref.digest}


@pytest.mark.parametrize("metadata", [{}, {"dpone-sha256": "not-a-digest"}])
def test_an_object_without_a_usable_recorded_digest_is_hashed(
        s3_bucket: S3Bucket, metadata: dict[str, str]) -> None:
    s3_bucket.client.put_object(Bucket=s3_bucket.name, Key="k", Body=b"written elsewhere",
                                Metadata=metadata)
    store = _store(s3_bucket)
    ref = ArtifactRef(key="k", digest=content_digest(b"written elsewhere"), size=17)
    assert store.stat("k") == ref
    assert store.put_bytes("k", b"written elsewhere") == ref
    _error("artifact.conflict", lambda: store.put_bytes("k", b"other bytes"))


def test_a_multipart_object_is_hashed_when_compared(s3_bucket: S3Bucket) -> None:
    store = _store(s3_bucket, multipart_threshold=MIB, part_size=5 * MIB)
    ref = store.put_stream("k", iter([b"a" * MIB, b"b" * MIB]))  # over the 1 MiB threshold
    head = s3_bucket.client.head_object(Bucket=s3_bucket.name, Key="k")
    assert head["Metadata"] == {}
    assert store.stat("k") == ref
    assert store.put_bytes("k", b"a" * MIB + b"b" * MIB) == ref
    _error("artifact.conflict", lambda: store.put_bytes("k", b"a" * MIB))


# -- layout and refusals ----------------------------------------------------------------------


def test_keys_live_under_the_prefix(s3_bucket: S3Bucket) -> None:
    tenant = _store(s3_bucket, "/tenant-a/artifacts/")
    assert tenant.prefix == "tenant-a/artifacts"
    ref = tenant.put_bytes("plans/p.json", b"{}")
    assert ref.key == "plans/p.json"
    assert s3_bucket.object_names() == ["tenant-a/artifacts/plans/p.json"]
    assert _store(s3_bucket, "tenant-b").stat("plans/p.json") is None
    assert _store(s3_bucket).stat("tenant-a/artifacts/plans/p.json") == ref.model_copy(
        update={"key": "tenant-a/artifacts/plans/p.json"})


def test_a_key_too_long_under_the_prefix_is_invalid(s3_bucket: S3Bucket) -> None:
    store = _store(s3_bucket, "prefix")
    too_long = "/".join(["k" * 203] * 5)  # a valid key of 1019 characters; 1026 with "prefix/"
    _error("artifact.invalid_key", lambda: store.put_bytes(too_long, b"x"))
    fits = "/".join(["k" * 202] * 5) + "kkk"  # 7 + 1017 = 1024 bytes: still a valid S3 name
    assert store.put_bytes(fits, b"x").key == fits


def test_a_failed_stream_aborts_its_upload(s3_bucket: S3Bucket) -> None:
    store = _store(s3_bucket, multipart_threshold=MIB, part_size=5 * MIB)

    def failing() -> Iterator[bytes]:
        for _ in range(7):
            yield b"x" * MIB
        raise RuntimeError("the source failed")

    with pytest.raises(RuntimeError):
        store.put_stream("k", failing())
    assert s3_bucket.pending_uploads() == []
    assert store.stat("k") is None


# -- botocore errors become catalog errors at the edge ----------------------------------------


def test_an_unreachable_endpoint_is_unavailable(s3_bucket: S3Bucket) -> None:
    client = boto3.session.Session().client(
        "s3", endpoint_url=f"http://127.0.0.1:{free_port()}", region_name="us-east-1",
        config=Config(retries={"max_attempts": 1}, connect_timeout=2))
    store = S3ArtifactStore("bucket", client=client)
    for call in (lambda: store.put_bytes("k", b"x"), lambda: store.get_bytes("k"),
                 lambda: store.stat("k"), lambda: store.open_stream("k"),
                 lambda: store.put_stream("k", iter([b"x"]))):
        error = _error("artifacts.unavailable", call)
        assert isinstance(error.__cause__, BotoCoreError)
        assert "dpone-test" not in str(error)  # never a credential in the text


def test_a_missing_bucket_is_unavailable(s3_bucket: S3Bucket) -> None:
    store = S3ArtifactStore("dpone-no-such-bucket", endpoint_url=s3_bucket.endpoint_url)
    error = _error("artifacts.unavailable", lambda: store.put_bytes("k", b"x"))
    assert "NoSuchBucket" in str(error)
    assert isinstance(error.__cause__, ClientError)
    _error("artifacts.unavailable", lambda: store.get_bytes("k"))
