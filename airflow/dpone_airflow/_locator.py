"""Where a delivery's state lives, as the operator hands it to its trigger: never a secret.

:func:`resolve` reads ``environments/NAME.yaml`` (``environments_dir``, else
``$DPONE_ENVIRONMENTS``, else ``./environments``) with the dpone environment loader, which
refuses a secret value in the file; its relative paths resolve against the worker's current
directory and are made absolute, so the triggerer (another process, another directory) finds
the same journal and artifact store. The :class:`JournalLocator` is what travels in trigger
kwargs: the environment id, the journal URL and the artifact store URL (neither may carry a
password: libpq reads it from ``PGPASSWORD`` or ``~/.pgpass``), the lease policy and the
environment's operation namespace (the journal it opens refuses another namespace's operations).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

ENVIRONMENTS_VARIABLE = "DPONE_ENVIRONMENTS"


@dataclass(frozen=True)
class JournalLocator:
    """The non-secret locator of one environment's journal and artifact store."""

    environment: str
    environment_id: str
    tier: str
    journal: str
    artifacts: str
    lease_ttl_s: int
    lease_heartbeat_s: int | None
    operation_namespace: str | None = None
    """The namespace the environment file derives; None in kwargs serialized before it
    travelled (such a trigger's journal is scoped by environment id only)."""

    def as_kwargs(self) -> dict[str, str | int | None]:
        """JSON-safe trigger kwargs."""
        return asdict(self)

    @classmethod
    def from_kwargs(cls, kwargs: dict[str, str | int | None]) -> JournalLocator:
        return cls(environment=str(kwargs["environment"]),
                   environment_id=str(kwargs["environment_id"]), tier=str(kwargs["tier"]),
                   journal=str(kwargs["journal"]), artifacts=str(kwargs["artifacts"]),
                   lease_ttl_s=int(str(kwargs["lease_ttl_s"])),
                   lease_heartbeat_s=None if kwargs["lease_heartbeat_s"] is None
                   else int(str(kwargs["lease_heartbeat_s"])),
                   operation_namespace=None if kwargs.get("operation_namespace") is None
                   else str(kwargs["operation_namespace"]))


def environments_directory(environments_dir: str | None) -> Path:
    """The directory of ``NAME.yaml`` environment files."""
    if environments_dir:
        return Path(environments_dir)
    return Path(os.environ.get(ENVIRONMENTS_VARIABLE) or "environments")


def _absolute(locator: str) -> str:
    """A local path (or ``sqlite:///path``, ``file://path``) made absolute; a URL as it is."""
    for prefix in ("sqlite:///", "file://"):
        if locator.startswith(prefix):
            return prefix + str(Path(locator.removeprefix(prefix)).absolute())
    if "://" in locator:
        return locator
    return str(Path(locator).absolute())


def _without_password(name: str, url: str) -> str:
    from dpone.contracts import DponeError  # noqa: PLC0415 - lazy: the trigger imports this module

    if "://" in url and urlsplit(url).password is not None:
        raise DponeError(code="input.invalid_argument",
                         message=f"the {name} URL of the environment carries a password: it would "
                                 "travel in trigger kwargs",
                         hint="Remove the password from the URL; libpq reads it from PGPASSWORD "
                              "or ~/.pgpass.")
    return url


def resolve(environment: str, environments_dir: str | None = None) -> JournalLocator:
    """The locator of ``environment`` from its control-plane file (``input.not_found`` when
    there is none: the operator never falls back to a default journal)."""
    from dpone.compiler import (  # noqa: PLC0415 - parse-time imports stay light
        load_environment,
        namespace_digest,
    )
    from dpone.contracts import DponeError, Location  # noqa: PLC0415

    directory = environments_directory(environments_dir)
    path = directory / f"{environment}.yaml"
    if not path.is_file():
        raise DponeError(code="input.not_found",
                         message=f"no environment file {path} for environment {environment!r}",
                         location=Location(file=str(path)),
                         hint=f"Pass environments_dir= or set ${ENVIRONMENTS_VARIABLE} to the "
                              "directory holding NAME.yaml control-plane files.")
    document = load_environment(path, environment, str(path))
    plane = document.control_plane
    if plane is None or plane.journal is None or plane.artifacts is None:
        raise DponeError(code="input.invalid_argument",
                         message=f"environment file {path} names no control_plane.journal and "
                                 "control_plane.artifacts",
                         location=Location(file=str(path), path="control_plane"),
                         hint="Name the journal and the artifact store the plan was published "
                              "to (`dpone plan --publish`).")
    return JournalLocator(
        environment=environment, environment_id=document.environment_id, tier=document.tier,
        journal=_without_password("journal", _absolute(plane.journal)),
        artifacts=_without_password("artifacts", _absolute(plane.artifacts)),
        lease_ttl_s=document.leases.ttl_s, lease_heartbeat_s=document.leases.heartbeat_s,
        operation_namespace=namespace_digest(document.identity()))


def refuse_new_deliveries(environment: str, environments_dir: str | None = None) -> None:
    """``runtime.feature_disabled`` when the environment file's kill switch
    (``runtime.features.rest_bulk_delivery_v1``) is off: the operator's submit admits no new
    delivery. A deferred task's continuation and its trigger never read it: admitted work goes
    on."""
    from dpone.compiler import load_environment  # noqa: PLC0415 - parse-time imports stay light
    from dpone.compiler.kill_switch import KillSwitch  # noqa: PLC0415

    path = environments_directory(environments_dir) / f"{environment}.yaml"
    KillSwitch.of(load_environment(path, environment, str(path)), path).refuse_new_delivery()
