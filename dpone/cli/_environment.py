"""``--environment NAME``: where a recovery command finds the journal, artifacts and plans.

``NAME`` names an environment control-plane file, ``environments/NAME.yaml``, looked up in the
directory ``--registry DIR`` names (its ``environments/``), else in ``$DPONE_ENVIRONMENTS``,
else in ``./environments``. When the file exists, its ``environment_id`` scopes the journal,
its operation namespace (platform instance, tenant, environment id, namespace revision) scopes
every operation the command reads or moves (another namespace's is refused with
``journal.foreign_namespace``), and its ``control_plane`` block supplies the journal, the
artifact store and the plan store, so recovery on another machine needs only
``--environment NAME`` and an operation id. An explicit ``--journal``/``--artifacts``/``--plans``
that names another place than the file is refused (``environment.locator_conflict``). When there
is no such file, ``NAME`` is the environment id the journal is scoped to (no namespace scope) and
the locators are the options (or their defaults), as before environment files existed.
Relative paths in the file resolve against the current directory, like the options' defaults.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from dpone.cli._hints import Locator, Locators, redact
from dpone.cli._inputs import (
    DEFAULT_ARTIFACTS,
    DEFAULT_ENVIRONMENT,
    DEFAULT_JOURNAL,
    DEFAULT_PLANS,
    ControlPlaneArgs,
)
from dpone.contracts import DponeError, Location
from dpone.contracts.binding import LeasePolicy

ENVIRONMENTS_VARIABLE: Final = "DPONE_ENVIRONMENTS"
_FILE_NAME = re.compile(r"^[a-z][a-z0-9_]*(?:[.-][a-z0-9_]+)*$")
"""An environment ``id`` (the contracts' ``Name``): only such a name can be a file's stem."""


@dataclass(frozen=True)
class ControlPlane:
    """Where a command reads and writes: resolved from the options and the environment file."""

    environment: str
    """``--environment`` as given (the file's name), or the default environment id."""
    environment_id: str
    journal: str
    artifacts: str
    plans: Path
    file: Path | None = None
    registry: Path | None = None
    """The explicit ``--registry`` the file was found through (a printed command repeats it)."""
    supplied: frozenset[Locator] = frozenset()
    leases: LeasePolicy = field(default_factory=LeasePolicy)
    """The environment file's lease policy (the default without a file)."""
    operation_namespace: str | None = None
    """The environment file's operation namespace: the journal refuses another namespace's
    operations (None without a file: the journal is scoped by environment id alone)."""

    @property
    def locators(self) -> Locators:
        """Where this command read, for the commands it prints."""
        return Locators(self.environment, self.journal, self.artifacts, str(self.plans),
                        registry=str(self.registry) if self.registry is not None else None,
                        supplied=self.supplied, environment_file=self.file is not None)


def _directory(registry: Path | None) -> Path:
    """The directory that holds ``NAME.yaml`` files; an explicitly named root that does not
    exist is refused (a typo would otherwise fall back to the default journal)."""
    if registry is not None:
        root, named = registry, f"--registry {registry}"
    elif os.environ.get(ENVIRONMENTS_VARIABLE):
        root = Path(os.environ[ENVIRONMENTS_VARIABLE])
        named = f"${ENVIRONMENTS_VARIABLE}={root}"
    else:
        return Path("environments")
    if not root.is_dir():
        raise DponeError(code="input.not_found", message=f"no directory {root} ({named})",
                         location=Location(file=str(root)),
                         hint="Point --registry at the registry root holding environments/, or "
                              f"${ENVIRONMENTS_VARIABLE} at a directory of NAME.yaml files.")
    return root / "environments" if registry is not None else root


def _file(args: ControlPlaneArgs) -> Path | None:
    if args.environment is None or not _FILE_NAME.fullmatch(args.environment):
        return None
    path = _directory(args.registry) / f"{args.environment}.yaml"
    return path if path.is_file() else None


def _comparable(locator: str) -> str:
    """A locator as compared with another: a URL as written, a path made absolute."""
    for prefix in ("sqlite:///", "file://"):
        if locator.startswith(prefix):
            return str(Path(locator.removeprefix(prefix)).absolute())
    if "://" in locator:
        return locator
    return str(Path(locator).absolute())


def _pick(name: Locator, given: str | None, named: str | None, file: Path,
          supplied: set[Locator]) -> str | None:
    """The file's locator unless none; an explicit option that names another place refuses."""
    if named is None:
        return given
    if given is not None and _comparable(given) != _comparable(named):
        raise DponeError(
            code="environment.locator_conflict",
            message=f"--{name} {redact(given)} contradicts the environment file {file}, whose "
                    f"control_plane.{name} is {redact(named)}",
            location=Location(file=str(file), path=f"control_plane.{name}"),
            details={"option": f"--{name}", "environment_file": str(file)})
    supplied.add(name)
    return named


def resolve_control_plane(args: ControlPlaneArgs) -> ControlPlane:
    """The locators of one command: from ``environments/NAME.yaml`` when it exists, else from
    the options and their defaults."""
    file = _file(args)
    if file is None:
        return ControlPlane(
            environment=args.environment or DEFAULT_ENVIRONMENT,
            environment_id=args.environment or DEFAULT_ENVIRONMENT,
            journal=args.journal or DEFAULT_JOURNAL,
            artifacts=args.artifacts or DEFAULT_ARTIFACTS,
            plans=args.plans or DEFAULT_PLANS)
    name = str(args.environment)
    from dpone.compiler import (  # noqa: PLC0415 - only when the file exists
        load_environment,
        namespace_digest,
    )

    environment = load_environment(file, name, str(file))
    plane = environment.control_plane
    supplied: set[Locator] = set()
    journal = _pick("journal", args.journal, plane.journal if plane else None, file, supplied)
    artifacts = _pick("artifacts", args.artifacts, plane.artifacts if plane else None, file,
                      supplied)
    plans = _pick("plans", None if args.plans is None else str(args.plans),
                  plane.plans if plane else None, file, supplied)
    return ControlPlane(
        environment=name, environment_id=environment.environment_id,
        journal=journal or DEFAULT_JOURNAL, artifacts=artifacts or DEFAULT_ARTIFACTS,
        plans=Path(plans) if plans is not None else DEFAULT_PLANS, file=file,
        registry=args.registry, supplied=frozenset(supplied), leases=environment.leases,
        operation_namespace=namespace_digest(environment.identity()))
