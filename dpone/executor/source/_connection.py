"""The credentials of a PostgreSQL source, by the plan's ``source.connection_ref``.

A plan names only the connection ref; the process that freezes the source resolves it from its
own environment, with the scheme of the HTTP credentials (:func:`conn_variable`):

``DPONE_CONN_<REF>_DSN``
    a libpq conninfo string or ``postgresql://`` URL, password included.
``DPONE_CONN_<REF>_DSN_FILE``
    the path of a file holding it (a mounted Kubernetes Secret): UTF-8, at most 64 KiB, one
    trailing newline stripped.

Exactly one of the two is set. The DSN comes back as a :class:`Secret`; every refusal is
``credential.unavailable`` (exit 3) naming the variables, never a value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from dpone.contracts import DponeError
from dpone.contracts.plan import ResolvedSource
from dpone.contracts.secret import Secret
from dpone.executor.transport._credentials import conn_variable, read_credential_file


def source_dsn(source: ResolvedSource, env: Mapping[str, str] | None = None) -> Secret | None:
    """The DSN a PostgreSQL ``source`` is read through, from ``env`` (default: the process
    environment); None for a file source, which needs no credential."""
    if source.type != "postgres":
        return None
    ref = source.connection_ref
    if ref is None:
        raise DponeError(code="input.invalid_argument",
                         message="the plan's postgres source names no connection_ref")
    env = os.environ if env is None else env
    direct, from_file = conn_variable(ref, "dsn"), conn_variable(ref, "dsn_file")
    value, path = env.get(direct), env.get(from_file)
    if value and path:
        raise _unavailable(ref, f"both {direct} and {from_file} are set: set only one",
                           direct, from_file)
    if path:
        try:
            value = read_credential_file(f"conn:{ref}", Path(path))
        except DponeError as error:
            raise _unavailable(ref, f"{from_file}: {error.message}", direct,
                               from_file) from None
    if not value:
        raise _unavailable(ref, f"the PostgreSQL source connection {ref!r} has no credentials: "
                                f"neither {direct} nor {from_file} is set", direct, from_file)
    if any(ord(character) < 0x20 or ord(character) == 0x7F for character in value):
        shown = from_file if path else direct
        raise _unavailable(ref, f"{shown} holds a control character", direct, from_file)
    return Secret(value)


def _unavailable(ref: str, message: str, direct: str, from_file: str) -> DponeError:
    return DponeError(
        code="credential.unavailable", message=message,
        details={"connection_ref": ref, "variables": [direct, from_file]},
        hint=f"Give the process the source database's DSN (a libpq conninfo or postgresql:// "
             f"URL): {direct}, or {from_file} naming a mounted secret file that holds it. "
             "Nothing was read or sent.")
