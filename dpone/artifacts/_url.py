"""``open_artifact_store``: build an artifact store from the URL a composition root was given.

``file:///abs/path`` or a bare path opens the local directory store (a bare path that starts
like a URL scheme, ``name:``, is read as a URL: write ``./name:x`` for such a directory);
``s3://bucket/prefix?endpoint_url=http://host:port&region=name`` opens the S3 store. Credentials
never travel in the URL: the S3 store takes them from boto3's standard chain. Refusals never
echo the URL, which could carry a secret by mistake.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from dpone.artifacts._local import LocalArtifactStore
from dpone.artifacts._s3 import S3ArtifactStore
from dpone.contracts import DponeError
from dpone.contracts.ports import ImmutableArtifactPort, PrunableArtifactPort

_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_S3_PARAMETERS = frozenset({"endpoint_url", "region"})
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")  # two letters or more: "C:" is a path


def open_artifact_store(url: str) -> ImmutableArtifactPort:
    """The artifact store named by ``url`` (see the module docstring for the accepted forms)."""
    return _open(url)


def open_prunable_artifact_store(url: str) -> PrunableArtifactPort:
    """The same store with its one deletion (``expire``): for payload retention only."""
    return _open(url)


def _open(url: str) -> LocalArtifactStore | S3ArtifactStore:
    if not isinstance(url, str) or not url.strip():
        raise _refuse("the artifact store URL is empty")
    if not _SCHEME_RE.match(url):
        return LocalArtifactStore(Path(url))
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "file":
        return _open_file(parts.netloc, parts.path, parts.query, parts.fragment)
    if scheme == "s3":
        return _open_s3(parts.netloc, parts.path, parts.query, parts.fragment)
    raise _refuse(f"unsupported artifact store scheme {scheme!r}: use file:// or s3://")


def _open_file(netloc: str, path: str, query: str, fragment: str) -> LocalArtifactStore:
    if netloc not in ("", "localhost"):
        raise _refuse("a file:// artifact store URL names no host: use file:///absolute/path")
    if query or fragment:
        raise _refuse("a file:// artifact store URL takes no query or fragment")
    root = Path(unquote(path))
    if not path or not root.is_absolute():
        raise _refuse("a file:// artifact store URL needs an absolute path")
    return LocalArtifactStore(root)


def _open_s3(netloc: str, path: str, query: str, fragment: str) -> S3ArtifactStore:
    if "@" in netloc:
        raise _refuse("an s3:// artifact store URL must not carry credentials; boto3 reads them "
                      "from its standard environment")
    if not _BUCKET_RE.fullmatch(netloc) or ".." in netloc:
        raise _refuse("an s3:// artifact store URL starts with a bucket name "
                      "(3-63 characters of [a-z0-9.-])")
    if fragment:
        raise _refuse("an s3:// artifact store URL takes no fragment")
    try:
        parameters = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise _refuse("the s3:// artifact store URL has a malformed query") from None
    unknown = sorted(set(parameters) - _S3_PARAMETERS)
    if unknown:
        raise _refuse(f"unknown s3:// artifact store parameter(s) {unknown}: only endpoint_url "
                      "and region are accepted")
    repeated = sorted(name for name, values in parameters.items() if len(values) > 1)
    if repeated:
        raise _refuse(f"s3:// artifact store parameter(s) {repeated} given more than once")
    endpoint_url = parameters.get("endpoint_url", [None])[0]
    region = parameters.get("region", ["us-east-1"])[0]
    if endpoint_url is not None:
        _check_endpoint(endpoint_url)
    if not region:
        raise _refuse("the s3:// artifact store parameter region is empty")
    prefix = unquote(path).strip("/")
    try:
        return S3ArtifactStore(netloc, prefix, endpoint_url=endpoint_url, region=region)
    except DponeError as exc:
        if exc.code == "artifact.invalid_key":
            raise _refuse("the s3:// artifact store prefix is not a valid key path") from None
        raise


def _check_endpoint(endpoint_url: str) -> None:
    endpoint = urlsplit(endpoint_url)
    if endpoint.scheme not in ("http", "https") or not endpoint.hostname:
        raise _refuse("endpoint_url must be an http:// or https:// URL with a host")
    if "@" in endpoint.netloc or endpoint.query or endpoint.fragment:
        raise _refuse("endpoint_url takes no credentials, query or fragment")


def _refuse(message: str) -> DponeError:
    return DponeError(code="input.invalid_argument", message=message,
                      hint="Use file:///absolute/path, a bare path, or "
                           "s3://bucket/prefix?endpoint_url=...&region=...")
