"""The file registry: profiles/, bindings/, mappings/ and environments/ under one root."""

from __future__ import annotations

from pathlib import Path

from dpone.compiler._yaml import LoadedDocument, load_yaml_file
from dpone.contracts import DponeError, Location

KINDS = ("profiles", "bindings", "mappings", "environments")


class Registry:
    """Resolves references to platform-owned files; never reads the network or secrets."""

    def __init__(self, root: Path, display_root: str | None = None) -> None:
        if not root.is_dir():
            raise DponeError(code="input.not_found", message=f"registry directory not found: {root}",
                             location=Location(file=str(root)))
        self.root = root.resolve()
        self._display = display_root if display_root is not None else str(root)

    def display(self, path: Path) -> str:
        try:
            return str(Path(self._display) / path.resolve().relative_to(self.root))
        except ValueError:
            return str(path)

    def relative(self, path: Path) -> str | None:
        """``path`` relative to the registry root (POSIX), or None when it lies outside."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

    def load(self, kind: str, name: str, *, referenced_at: Location, ref_label: str) -> LoadedDocument:
        path = self.root / kind / f"{name}.yaml"
        if not path.is_file():
            raise DponeError(
                code="registry.not_found",
                message=f"{ref_label} {name!r} not found (looked for {self.display(path)})",
                location=referenced_at,
                hint=f"add {kind}/{name}.yaml to the registry or fix the reference",
            )
        return load_yaml_file(path, self.display(path))
