"""Artifacts in S3 or an S3-compatible store, written with real conditional writes.

Create-if-absent is the server's job: ``PutObject`` and ``CompleteMultipartUpload`` carry
``If-None-Match: *``, so of several writers of one key exactly one creates it, provided the
server evaluates that condition atomically with the write (AWS S3 does; an S3-compatible server
that ignores the header cannot give this guarantee and must not back this store). A refused
write (412 ``PreconditionFailed``, or 409 ``ConditionalRequestConflict`` while another write is
in flight) reads the existing object's digest and either returns the same ref (same bytes) or
raises ``artifact.conflict`` (other bytes); a refused multipart upload is aborted. A stream that
crosses the multipart threshold first looks for an existing object, so re-offering a published
artifact hashes the stream without uploading it.

Single-request objects carry their SHA-256 in the user metadata ``x-amz-meta-dpone-sha256``.
A multipart object's digest is known only after its last part, when its metadata can no longer
be set, so its digest is computed by streaming the object when it is needed. Bodies are sent
with ``x-amz-checksum-sha256`` so the server can check what it received.

boto3 is imported when a store is built, so the package imports without the ``s3`` extra.
Credentials come from boto3's standard chain (environment, shared files, instance role).
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from dpone.artifacts._common import (
    MAX_KEY_LENGTH,
    ChunkReader,
    check_chunk_size,
    hash_chunks,
    not_found,
    render_digest,
    settle,
    unavailable,
    validate_key,
)
from dpone.contracts import DponeError
from dpone.contracts.ports import ArtifactRef

MIB = 1 << 20
_MIN_PART = 5 * MIB  # S3: every part but the last is at least 5 MiB
_MAX_PART = 5 * 1024 * MIB
_MAX_PARTS = 10_000
_DIGEST_METADATA = "dpone-sha256"
_DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}")
_CONTENT_TYPE = "application/octet-stream"
_REFUSED = frozenset({"PreconditionFailed", "ConditionalRequestConflict"})
_MISSING = frozenset({"NoSuchKey", "NotFound", "404"})
_CONTENDED_ATTEMPTS = 6  # 409 retries before the store is reported unavailable


class S3ArtifactStore:
    """Create-if-absent, digest-verified artifacts under ``s3://bucket/prefix``."""

    def __init__(self, bucket: str, prefix: str = "", client: Any = None, *,
                 endpoint_url: str | None = None, region: str = "us-east-1",
                 multipart_threshold: int = 8 * MIB, part_size: int = 8 * MIB) -> None:
        if not bucket:
            raise ValueError("bucket must be a non-empty bucket name")
        if not _MIN_PART <= part_size <= _MAX_PART:
            raise ValueError(f"part_size must be between {_MIN_PART} and {_MAX_PART} bytes")
        if multipart_threshold < 0:
            raise ValueError("multipart_threshold must not be negative")
        prefix = prefix.strip("/")
        if prefix:
            validate_key(prefix)
        boto3, botocore = _import_boto3()
        self._client_error: type[Exception] = botocore.exceptions.ClientError
        self._edge_errors: tuple[type[Exception], ...] = (
            botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError)
        self._bucket = bucket
        self._prefix = prefix
        self._endpoint_url = endpoint_url
        self._region = region
        self._threshold = multipart_threshold
        self._part_size = part_size
        if client is None:
            config = botocore.config.Config(
                region_name=region, connect_timeout=10, read_timeout=60,
                retries={"mode": "standard", "max_attempts": 4},
                s3={"addressing_style": "path"} if endpoint_url else None)
            client = boto3.session.Session().client("s3", endpoint_url=endpoint_url, config=config)
        self._client = client

    @property
    def bucket(self) -> str:
        return self._bucket

    @property
    def prefix(self) -> str:
        return self._prefix

    @property
    def endpoint_url(self) -> str | None:
        return self._endpoint_url

    @property
    def region(self) -> str:
        return self._region

    def __repr__(self) -> str:
        return f"S3ArtifactStore('s3://{self._bucket}/{self._prefix}')"

    # -- writes ---------------------------------------------------------------------------------

    def put_bytes(self, key: str, data: bytes) -> ArtifactRef:
        name = self._object_name(key)
        raw = hashlib.sha256(data).digest()
        ref = ArtifactRef(key=key, digest=render_digest(raw.hex()), size=len(data))
        return self._put_single(name, ref, data, raw)

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ArtifactRef:
        name = self._object_name(key)
        hasher = hashlib.sha256()
        buffer = bytearray()
        stream = iter(chunks)
        for chunk in stream:
            hasher.update(chunk)
            buffer += chunk
            if len(buffer) > self._threshold:
                return self._put_multipart(key, name, hasher, buffer, stream)
        raw = hasher.digest()
        ref = ArtifactRef(key=key, digest=render_digest(raw.hex()), size=len(buffer))
        return self._put_single(name, ref, bytes(buffer), raw)

    def _put_single(self, name: str, ref: ArtifactRef, data: bytes, raw: bytes) -> ArtifactRef:
        def write() -> None:
            self._client.put_object(
                Bucket=self._bucket, Key=name, Body=data, IfNoneMatch="*",
                ContentType=_CONTENT_TYPE, Metadata={_DIGEST_METADATA: ref.digest},
                ChecksumAlgorithm="SHA256", ChecksumSHA256=base64.b64encode(raw).decode("ascii"))

        return self._create_if_absent("PutObject", name, ref, write)[0]

    def _put_multipart(self, key: str, name: str, hasher: Any, buffer: bytearray,
                       stream: Iterator[bytes]) -> ArtifactRef:
        size = len(buffer)
        if self._read_existing(name, key) is not None:
            # Already published: hash the rest of the offered bytes without uploading them.
            digest, rest = hash_chunks(stream, hasher)
            return self._settle_existing(name, ArtifactRef(key=key, digest=digest, size=size + rest))
        with self._edge("CreateMultipartUpload", key):
            upload_id: str = self._client.create_multipart_upload(
                Bucket=self._bucket, Key=name, ContentType=_CONTENT_TYPE,
                ChecksumAlgorithm="SHA256")["UploadId"]
        created = False
        try:
            parts: list[dict[str, Any]] = []
            self._upload_parts(key, name, upload_id, buffer, parts, final=False)
            for chunk in stream:
                hasher.update(chunk)
                buffer += chunk
                size += len(chunk)
                self._upload_parts(key, name, upload_id, buffer, parts, final=False)
            self._upload_parts(key, name, upload_id, buffer, parts, final=True)
            ref = ArtifactRef(key=key, digest=render_digest(hasher.hexdigest()), size=size)

            def complete() -> None:
                self._client.complete_multipart_upload(
                    Bucket=self._bucket, Key=name, UploadId=upload_id,
                    MultipartUpload={"Parts": parts}, IfNoneMatch="*")

            ref, created = self._create_if_absent("CompleteMultipartUpload", name, ref, complete)
            return ref
        finally:
            if not created:
                self._abort(name, upload_id)

    def _upload_parts(self, key: str, name: str, upload_id: str, buffer: bytearray,
                      parts: list[dict[str, Any]], *, final: bool) -> None:
        while buffer:
            part_size = self._part_size_for(len(parts) + 1)
            if len(buffer) < part_size and not final:
                return
            with memoryview(buffer) as view, view[:part_size] as part:
                body = bytes(part)  # one copy; the buffer keeps only the remainder
            del buffer[:part_size]
            checksum = base64.b64encode(hashlib.sha256(body).digest()).decode("ascii")
            number = len(parts) + 1
            with self._edge("UploadPart", key):
                etag = self._client.upload_part(
                    Bucket=self._bucket, Key=name, UploadId=upload_id, PartNumber=number,
                    Body=body, ChecksumAlgorithm="SHA256", ChecksumSHA256=checksum)["ETag"]
            parts.append({"PartNumber": number, "ETag": etag, "ChecksumSHA256": checksum})

    def _part_size_for(self, number: int) -> int:
        """Parts double in size every 1000 parts, so 10 000 parts cover any stream S3 takes."""
        if number > _MAX_PARTS:
            raise unavailable(f"a stream needs more than {_MAX_PARTS} parts; S3 cannot hold it")
        return min(self._part_size << ((number - 1) // 1000), _MAX_PART)

    def _create_if_absent(self, operation: str, name: str, ref: ArtifactRef,
                          write: Callable[[], None]) -> tuple[ArtifactRef, bool]:
        """Run a conditional write; on refusal settle against the object that holds the key.

        Returns the ref and whether this call created the object.
        """
        for attempt in range(_CONTENDED_ATTEMPTS):
            try:
                write()
            except self._client_error as exc:
                if _error_code(exc) not in _REFUSED and _status(exc) != 412:
                    raise _translate(exc, operation, ref.key) from exc
            except self._edge_errors as exc:
                raise _translate(exc, operation, ref.key) from exc
            else:
                return ref, True
            existing = self._read_existing(name, ref.key)
            if existing is not None:
                return settle(ref, *existing), False
            # 409: a concurrent write had not landed yet; try the conditional write again.
            time.sleep(0.05 * (2 ** attempt))
        raise unavailable(f"the conditional write of {ref.key!r} kept meeting concurrent writes",
                          ref.key)

    def _settle_existing(self, name: str, ref: ArtifactRef) -> ArtifactRef:
        existing = self._read_existing(name, ref.key)
        if existing is None:
            raise unavailable(f"artifact {ref.key!r} vanished while being compared", ref.key)
        return settle(ref, *existing)

    def _abort(self, name: str, upload_id: str) -> None:
        # Best effort: a failed abort leaves parts for the bucket's
        # AbortIncompleteMultipartUpload lifecycle rule, never a visible object.
        try:
            self._client.abort_multipart_upload(Bucket=self._bucket, Key=name, UploadId=upload_id)
        except self._edge_errors:
            return

    # -- retention ------------------------------------------------------------------------------

    def expire(self, key: str) -> bool:
        """Delete the object ``key`` (payload retention only: ``ArtifactExpiryPort``); True when
        it existed. ``DeleteObject`` succeeds on an absent key, so existence is read first."""
        name = self._object_name(key)
        try:
            self._client.head_object(Bucket=self._bucket, Key=name)
        except self._edge_errors as exc:
            if _error_code(exc) in _MISSING:
                return False
            raise _translate(exc, "HeadObject", key) from exc
        with self._edge("DeleteObject", key):
            self._client.delete_object(Bucket=self._bucket, Key=name)
        return True

    # -- reads ----------------------------------------------------------------------------------

    def get_bytes(self, key: str) -> bytes:
        body = self._get_body(self._object_name(key), key)
        try:
            data: bytes = body.read()
        except self._edge_errors as exc:
            raise _translate(exc, "GetObject", key) from exc
        finally:
            body.close()
        return data

    def open_stream(self, key: str, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        check_chunk_size(chunk_size)
        body = self._get_body(self._object_name(key), key)
        return ChunkReader(body.read, body.close, chunk_size, key=key,
                           read_errors=self._edge_errors)

    def stat(self, key: str) -> ArtifactRef | None:
        existing = self._read_existing(self._object_name(key), key)
        if existing is None:
            return None
        return ArtifactRef(key=key, digest=existing[0], size=existing[1])

    def local_file(self, key: str) -> Path | None:
        """None: objects live in the bucket; read them with :meth:`open_stream`."""
        validate_key(key)
        return None

    def _read_existing(self, name: str, key: str) -> tuple[str, int] | None:
        """Digest and size of the object now at ``name``, or None when there is none."""
        try:
            head = self._client.head_object(Bucket=self._bucket, Key=name)
        except self._edge_errors as exc:
            if _error_code(exc) in _MISSING:
                return None
            raise _translate(exc, "HeadObject", key) from exc
        recorded = head.get("Metadata", {}).get(_DIGEST_METADATA, "")
        if _DIGEST_RE.fullmatch(recorded):
            return recorded, int(head["ContentLength"])
        try:  # no recorded digest (a multipart object): stream and hash the object itself
            body = self._get_body(name, key)
        except DponeError as exc:
            if exc.code == "artifact.not_found":
                return None
            raise
        with ChunkReader(body.read, body.close, 1 << 20, key=key,
                         read_errors=self._edge_errors) as reader:
            return hash_chunks(reader)

    def _get_body(self, name: str, key: str) -> Any:
        with self._edge("GetObject", key):
            return self._client.get_object(Bucket=self._bucket, Key=name)["Body"]

    # -- edges ----------------------------------------------------------------------------------

    def _object_name(self, key: str) -> str:
        validate_key(key)
        name = f"{self._prefix}/{key}" if self._prefix else key
        if len(name.encode("utf-8")) > MAX_KEY_LENGTH:
            raise DponeError(code="artifact.invalid_key",
                             message=f"artifact key {key!r} is too long under the prefix "
                                     f"{self._prefix!r}: S3 object names have at most "
                                     f"{MAX_KEY_LENGTH} bytes", details={"key": key})
        return name

    def _edge(self, operation: str, key: str) -> _Edge:
        return _Edge(self._edge_errors, operation, key)


class _Edge:
    """Translates botocore errors raised inside the block into catalog errors."""

    def __init__(self, errors: tuple[type[Exception], ...], operation: str, key: str) -> None:
        self._errors = errors
        self._operation = operation
        self._key = key

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        if isinstance(exc, self._errors):
            raise _translate(exc, self._operation, self._key) from exc


def _error_code(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return ""
    return str(response.get("Error", {}).get("Code", ""))


def _status(exc: BaseException) -> int:
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return 0
    return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))


def _translate(exc: BaseException, operation: str, key: str) -> DponeError:
    """One table from botocore failures to catalog errors (never a credential in the text)."""
    code = _error_code(exc)
    if code in _MISSING:
        return not_found(key, "the S3 artifact store")
    if code == "KeyTooLongError":
        return DponeError(code="artifact.invalid_key", message=f"S3 refused the key {key!r} as "
                          "too long", details={"key": key})
    what = f"{code} (HTTP {_status(exc)})" if code else type(exc).__name__
    return unavailable(f"S3 {operation} for artifact {key!r} failed: {what}", key)


def _import_boto3() -> tuple[Any, Any]:
    """boto3 is the optional ``s3`` extra: import it only when an S3 store is built."""
    try:
        import boto3  # noqa: PLC0415 - optional dependency
        import botocore.config  # noqa: PLC0415
        import botocore.exceptions  # noqa: PLC0415
    except ImportError as exc:
        raise unavailable("the S3 artifact store needs boto3: install dpone[s3]") from exc
    return boto3, botocore
