"""open_artifact_store: which URL opens which store, and which URLs are refused (no I/O)."""

from __future__ import annotations

from pathlib import Path

import pytest

import dpone.artifacts
from dpone.artifacts import LocalArtifactStore, S3ArtifactStore, open_artifact_store
from dpone.contracts import DponeError


@pytest.fixture(autouse=True)
def _no_aws_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Building an S3 store reads no developer configuration and needs no credentials."""
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def test_the_public_surface_is_pinned() -> None:
    assert sorted(dpone.artifacts.__all__) == [
        "LocalArtifactStore", "ReadThroughStore", "S3ArtifactStore", "open_artifact_store",
        "open_prunable_artifact_store"]


def test_a_file_url_opens_the_local_store(tmp_path: Path) -> None:
    store = open_artifact_store(f"file://{tmp_path}/store")
    assert isinstance(store, LocalArtifactStore)
    assert store.root == tmp_path / "store"
    assert isinstance(open_artifact_store(f"file://localhost{tmp_path}"), LocalArtifactStore)


def test_a_file_url_is_percent_decoded() -> None:
    store = open_artifact_store("file:///srv/dpone%20artifacts")
    assert isinstance(store, LocalArtifactStore)
    assert store.root == Path("/srv/dpone artifacts")


def test_a_bare_path_opens_the_local_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    absolute = open_artifact_store(str(tmp_path / "store"))
    assert isinstance(absolute, LocalArtifactStore)
    assert absolute.root == tmp_path / "store"
    monkeypatch.chdir(tmp_path)
    relative = open_artifact_store(".dpone/artifacts")
    assert isinstance(relative, LocalArtifactStore)
    assert relative.root == tmp_path / ".dpone" / "artifacts"  # fixed when the store is opened


def test_an_s3_url_opens_the_s3_store() -> None:
    store = open_artifact_store(
        "s3://dpone-artifacts/tenant-a/prod/?endpoint_url=http://127.0.0.1:9000&region=eu-west-1")
    assert isinstance(store, S3ArtifactStore)
    assert (store.bucket, store.prefix, store.endpoint_url, store.region) == (
        "dpone-artifacts", "tenant-a/prod", "http://127.0.0.1:9000", "eu-west-1")


def test_an_s3_url_without_options_uses_the_defaults() -> None:
    store = open_artifact_store("s3://dpone-artifacts")
    assert isinstance(store, S3ArtifactStore)
    assert (store.bucket, store.prefix, store.endpoint_url, store.region) == (
        "dpone-artifacts", "", None, "us-east-1")


@pytest.mark.parametrize("url", [
    "",
    "   ",
    "ftp://host/path",
    "http://127.0.0.1:9000/bucket",
    "file://remote-host/path",
    "file:relative/path",
    "file:///path?x=1",
    "s3://",
    "s3://UPPER-case",
    "s3://ab",
    "s3://bucket:9000/prefix",
    "s3://bucket/prefix#fragment",
    "s3://bucket/../escape",
    "s3://bucket/a//b",
    "s3://bucket?endpoint_url=ftp://host",
    "s3://bucket?endpoint_url=http://",
    "s3://bucket?region=",
    "s3://bucket?region=a&region=b",
    "s3://bucket?unknown=1",
    "s3://bucket?endpoint_url",
])
def test_malformed_urls_are_refused(url: str) -> None:
    with pytest.raises(DponeError) as caught:
        open_artifact_store(url)
    assert caught.value.code == "input.invalid_argument"


@pytest.mark.parametrize("url", [
    "s3://AKIAEXAMPLE:hunter2-secret@bucket/prefix",
    "s3://bucket/prefix?aws_secret_access_key=hunter2-secret",
    "s3://bucket/prefix?endpoint_url=http://AKIAEXAMPLE:hunter2-secret@127.0.0.1:9000",
])
def test_credentials_never_travel_in_the_url_and_are_never_echoed(url: str) -> None:
    with pytest.raises(DponeError) as caught:
        open_artifact_store(url)
    assert caught.value.code == "input.invalid_argument"
    rendered = str(caught.value.to_document())
    assert "hunter2" not in rendered and "AKIAEXAMPLE" not in rendered
