"""An environment control-plane file (``environments/NAME.yaml``) read on its own.

Recovery commands resolve ``--environment NAME`` to this file: its ``environment_id`` scopes the
journal and its ``control_plane`` block names the journal, the artifact store and (optionally) a
plan store. A run reads its ``leases`` (lease length and heartbeat) from it when it starts.
It is loaded like every authoring file (bounded YAML, closed schema, errors with
file and line) and it never holds a secret: a URL with a password is refused, here and when a
plan is compiled against the same file.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from dpone.compiler._secrets import refuse_secret_values
from dpone.compiler._validate import validate_document
from dpone.compiler._yaml import LoadedDocument, load_yaml_file
from dpone.contracts import DponeError
from dpone.contracts.binding import EnvironmentDocument, LeasePolicy

_PASSWORD_QUERY = re.compile(r"(^|&)(ssl)?password=[^&]", re.IGNORECASE)
_LOCATORS = ("journal", "artifacts", "plans")


def has_password(url: str) -> bool:
    """True when ``url`` carries a password: in its userinfo or a ``password=`` parameter."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return False
    return bool(parts.scheme) and (bool(password) or bool(_PASSWORD_QUERY.search(parts.query)))


def check_control_plane(environment: EnvironmentDocument, doc: LoadedDocument) -> None:
    """Refuse a control-plane locator that holds a password (``environment.secret_in_url``)."""
    plane = environment.control_plane
    if plane is None:
        return
    for name in _LOCATORS:
        value = getattr(plane, name)
        if value is not None and has_password(value):
            raise DponeError(
                code="environment.secret_in_url",
                message=f"control_plane.{name} of environment {environment.id!r} holds a "
                        "password; a control-plane file never holds a secret",
                location=doc.locate(("control_plane", name)),
                hint="Write the URL without the password; libpq reads it from PGPASSWORD or "
                     "~/.pgpass on the machine that runs the command.")


def load_environment(path: Path, name: str, display: str | None = None) -> EnvironmentDocument:
    """The environment ``name`` from ``path`` (``environments/<name>.yaml``), checked."""
    doc = load_yaml_file(path, display)
    refuse_secret_values(doc)
    environment = validate_document(EnvironmentDocument, doc)
    if environment.id != name:
        raise DponeError(code="registry.id_mismatch",
                         message=f"file declares {environment.id!r} but is referenced as "
                                 f"{name!r}",
                         location=doc.locate(("id",)),
                         hint="make the file name match its id")
    check_control_plane(environment, doc)
    return environment


def lease_policy(registry_root: Path, ref: str) -> LeasePolicy:
    """The lease policy of environment ``ref`` in the registry; the default when the registry
    has no file for it (a pinned plan run from another registry)."""
    path = registry_root / "environments" / f"{ref}.yaml"
    if not path.is_file():
        return LeasePolicy()
    return load_environment(path, ref).leases
