"""The contract suite's view behind the port: what a store holds and what it left behind."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpone.artifacts import LocalArtifactStore, S3ArtifactStore
from dpone.contracts.ports import PrunableArtifactPort


@dataclass(frozen=True)
class S3Bucket:
    endpoint_url: str
    name: str
    client: Any  # a raw boto3 client, for assertions the port does not offer

    def pending_uploads(self) -> list[dict[str, Any]]:
        uploads: list[dict[str, Any]] = self.client.list_multipart_uploads(
            Bucket=self.name).get("Uploads", [])
        return uploads

    def object_names(self) -> list[str]:
        listed = self.client.list_objects_v2(Bucket=self.name).get("Contents", [])
        return sorted(item["Key"] for item in listed)



@dataclass
class StoreHarness:
    """One store under test, plus what the contract suite needs to look behind the port."""

    kind: str
    root: Path | None = None
    bucket: S3Bucket | None = None

    def make(self, *, multipart_threshold: int = 8 << 20,
             part_size: int = 8 << 20) -> PrunableArtifactPort:
        """A store over the same place; the sizes tune only the S3 store's multipart switch."""
        if self.bucket is not None:
            return S3ArtifactStore(self.bucket.name, "contract",
                                   endpoint_url=self.bucket.endpoint_url,
                                   multipart_threshold=multipart_threshold, part_size=part_size)
        assert self.root is not None
        return LocalArtifactStore(self.root)

    def leftovers(self) -> list[str]:
        """Partial writes left behind: open multipart uploads, or temporary files."""
        if self.bucket is not None:
            return [upload["Key"] for upload in self.bucket.pending_uploads()]
        assert self.root is not None
        return sorted(str(path) for path in self.root.rglob("*~*"))

    def stored_names(self) -> list[str]:
        """Every object the store holds, by its key below the store's root or prefix."""
        if self.bucket is not None:
            return [name.removeprefix("contract/") for name in self.bucket.object_names()]
        assert self.root is not None
        return sorted(path.relative_to(self.root).as_posix()
                      for path in self.root.rglob("*") if path.is_file())
