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
the locators are the options (or their defaults).

Relative paths in the file, and the defaults (``.dpone/journal.sqlite3``, ``.dpone/artifacts``,
``.dpone``), resolve against the registry root (the directory holding ``environments/``), never
the current directory: the same delivery run from another directory opens the same journal and
the same artifact store, not a fresh empty one that would send the same data again. Only
options typed on the command line are relative to the current directory, like any path a user
types. Without a file and without ``--registry`` the defaults stay in the current directory.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

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

if TYPE_CHECKING:
    from dpone.compiler.kill_switch import KillSwitch

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
    kill_switch: KillSwitch | None = None
    """The environment file's switch of new deliveries (None without a file: not readable)."""

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


def rooted(locator: str, root: Path) -> str:
    """A locator with a relative path made absolute under ``root``; URLs are kept as written
    (``sqlite:///rel`` is a relative path, ``sqlite:////abs`` and ``file:///abs`` absolute)."""
    path = locator.removeprefix("sqlite:///") if locator.startswith("sqlite:///") else locator
    if "://" in path:
        return locator
    return path if Path(path).is_absolute() else os.path.normpath((root / path).absolute())


def registry_defaults(root: Path) -> tuple[str, str, Path]:
    """The default journal, artifact store and plan store of a registry root."""
    return (rooted(DEFAULT_JOURNAL, root), rooted(DEFAULT_ARTIFACTS, root),
            Path(rooted(str(DEFAULT_PLANS), root)))


def _file(args: ControlPlaneArgs) -> Path | None:
    if args.environment is None or not _FILE_NAME.fullmatch(args.environment):
        return None
    path = _directory(args.registry) / f"{args.environment}.yaml"
    return path if path.is_file() else None


def _comparable(locator: str) -> str:
    """A locator as compared with another: a URL as written, a path made absolute."""
    for prefix in ("sqlite:///", "file://"):
        if locator.startswith(prefix):
            return os.path.normpath(Path(locator.removeprefix(prefix)).absolute())
    if "://" in locator:
        return locator
    return os.path.normpath(Path(locator).absolute())


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
        defaults = ((DEFAULT_JOURNAL, DEFAULT_ARTIFACTS, DEFAULT_PLANS)
                    if args.registry is None else registry_defaults(args.registry))
        # A default under --registry is found again from --registry: a printed command
        # carries --registry instead of it.
        given: dict[Locator, object] = {"journal": args.journal, "artifacts": args.artifacts,
                                        "plans": args.plans}
        implied = frozenset() if args.registry is None else frozenset(
            name for name, value in given.items() if value is None)
        return ControlPlane(
            environment=args.environment or DEFAULT_ENVIRONMENT,
            environment_id=args.environment or DEFAULT_ENVIRONMENT,
            journal=args.journal or defaults[0], artifacts=args.artifacts or defaults[1],
            plans=args.plans or defaults[2], registry=args.registry, supplied=implied)
    name = str(args.environment)
    from dpone.compiler import (  # noqa: PLC0415 - only when the file exists
        load_environment,
        namespace_digest,
    )
    from dpone.compiler.kill_switch import KillSwitch  # noqa: PLC0415 - with the compiler

    environment = load_environment(file, name, str(file))
    plane = environment.control_plane
    root = file.parent.parent
    named: list[str | None] = [None if value is None else rooted(value, root) for value in (
        (plane.journal, plane.artifacts, plane.plans) if plane else (None, None, None))]
    supplied: set[Locator] = set()
    journal = _pick("journal", args.journal, named[0], file, supplied)
    artifacts = _pick("artifacts", args.artifacts, named[1], file, supplied)
    plan_store = _pick("plans", None if args.plans is None else str(args.plans), named[2], file,
                       supplied)
    default_journal, default_artifacts, default_plans = registry_defaults(root)
    return ControlPlane(
        environment=name, environment_id=environment.environment_id,
        journal=journal or default_journal, artifacts=artifacts or default_artifacts,
        plans=Path(plan_store) if plan_store is not None else default_plans, file=file,
        registry=args.registry, supplied=frozenset(supplied), leases=environment.leases,
        operation_namespace=namespace_digest(environment.identity()),
        kill_switch=KillSwitch.of(environment, file))


def run_control_plane(registry: Path, environment_ref: str, *, journal: str | None,
                      artifacts: str | None, plans: Path | None) -> ControlPlane:
    """The stores of a run that compiles or reads a plan in the registry ``registry``
    (``dpone deliver``, ``dpone seal``): each option given wins; otherwise the plan's
    environment file (``environments/<ref>.yaml``) names it in its ``control_plane``, resolved
    against the registry root; otherwise the registry's default under ``<registry>/.dpone``.
    Never the current directory, so a run from any directory finds the same journal."""
    file = registry / "environments" / f"{environment_ref}.yaml"
    default_journal, default_artifacts, default_plans = registry_defaults(registry)
    if not _FILE_NAME.fullmatch(environment_ref) or not file.is_file():
        return ControlPlane(environment=environment_ref, environment_id=environment_ref,
                            journal=journal or default_journal,
                            artifacts=artifacts or default_artifacts,
                            plans=plans or default_plans)
    from dpone.compiler import load_environment  # noqa: PLC0415 - only when the file exists
    from dpone.compiler.kill_switch import KillSwitch  # noqa: PLC0415 - with the compiler

    environment = load_environment(file, environment_ref, str(file))
    plane = environment.control_plane
    supplied: set[Locator] = set()

    def pick(name: Locator, given: str | None, named: str | None, default: str) -> str:
        if given is not None:
            return given
        if named is not None:
            supplied.add(name)
            return rooted(named, registry)
        return default

    resolved = ControlPlane(
        environment=environment_ref, environment_id=environment.environment_id,
        journal=pick("journal", journal, plane.journal if plane else None, default_journal),
        artifacts=pick("artifacts", artifacts, plane.artifacts if plane else None,
                       default_artifacts),
        plans=Path(pick("plans", None if plans is None else str(plans),
                        plane.plans if plane else None, str(default_plans))),
        file=file, registry=registry, supplied=frozenset(supplied), leases=environment.leases,
        kill_switch=KillSwitch.of(environment, file))
    if journal is None and artifacts is None and plans is None:
        return resolved
    # An option overrides the file: a printed command names every store itself (with
    # --environment NAME it would contradict the file's control_plane).
    return replace(resolved, file=None, registry=None, supplied=frozenset())


def refuse_new_deliveries_when_off(plane: ControlPlane, tier: str) -> None:
    """``runtime.feature_disabled`` when the environment file turns the kill switch off (or,
    older than the switch, does not turn it on): no new delivery is admitted. Admitted work goes
    on with `dpone delivery resume`; observation, reconcile, checkpoints, retention and
    inspection are not affected. Without the plan's environment file the switch cannot be read:
    a plan of a ``production`` ``tier`` is refused then (fail closed), a development plan runs
    as before (see :mod:`dpone.compiler.kill_switch`)."""
    if plane.kill_switch is not None:
        plane.kill_switch.refuse_new_delivery()
        return
    if tier == "production":
        raise DponeError(
            code="runtime.feature_disabled",
            message=f"the kill switch of production environment {plane.environment!r} cannot be "
            "read: no environment file is given for the run, so no new delivery is admitted",
            hint=f"Run with the file: `--environment {plane.environment}` (dpone-executor run) "
                 f"or `--registry` holding environments/{plane.environment}.yaml (dpone "
                 "deliver); admitted work goes on with `dpone delivery resume`.",
            details={"feature": "rest_bulk_delivery_v1", "environment": plane.environment})
