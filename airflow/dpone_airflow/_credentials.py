"""The receiver credential from Airflow's connections, where the binding names one.

A binding's ``credential_ref: conn:REF`` is resolved first as the Airflow connection whose
``conn_id`` is ``REF``, through Airflow itself: so any secrets backend the deployment configures
(``AIRFLOW_CONN_<REF>`` variables, a Vault or cloud secrets backend, the metadata database)
serves it, in the worker and in the triggerer alike. The connection's fields map to the
binding's auth provider: ``bearer`` / ``api_key_header`` -> ``password`` (the token);
``basic`` -> ``login`` and ``password``; ``oauth2_client_credentials`` -> ``login`` (client id)
and ``password`` (client secret); ``mtls`` -> ``extra`` ``cert_file`` (and ``key_file``).
Without such a connection, and for every other reference (``env:``, ``file:``, ``vault://``),
dpone's own resolution applies unchanged (``DPONE_CONN_<REF>_<FIELD>`` variables stay
supported). A connection that lacks a field the provider needs is ``credential.unavailable``,
naming the connection and the field, never a value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dpone.contracts.binding import ConnectionBinding
    from dpone.contracts.secret import Credential

CONN_PREFIX = "conn:"
_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "bearer": (("token", "password"),),
    "api_key_header": (("token", "password"),),
    "basic": (("username", "login"), ("password", "password")),
    "oauth2_client_credentials": (("client_id", "login"), ("client_secret", "password")),
    "mtls": (("cert_file", "extra:cert_file"),),
}
_OPTIONAL: dict[str, tuple[tuple[str, str], ...]] = {"mtls": (("key_file", "extra:key_file"),)}


def airflow_connection(conn_id: str) -> Any | None:
    """The Airflow connection ``conn_id`` through the running Airflow's secrets backends, or
    None when no backend holds it."""
    # Imported when a credential is resolved (in a worker thread of the triggerer, too), never
    # when the provider is.
    try:  # Airflow 3.1+ (the Task SDK)
        from airflow.sdk import (  # type: ignore[attr-defined,import-not-found,unused-ignore]  # noqa: PLC0415
            BaseHook,
        )
    except ImportError:  # Airflow 2.10, 2.11, 3.0
        from airflow.hooks.base import (  # type: ignore[no-redef,attr-defined,import-not-found,unused-ignore]  # noqa: PLC0415
            BaseHook,
        )
    try:
        return BaseHook.get_connection(conn_id)
    except Exception as error:  # not found (its class differs between Airflow versions)
        if type(error).__name__ == "AirflowNotFoundException":
            return None
        raise


def _value(connection: Any, source: str) -> str | None:
    if source.startswith("extra:"):
        extra = connection.extra_dejson if hasattr(connection, "extra_dejson") else {}
        value = extra.get(source.removeprefix("extra:")) if isinstance(extra, dict) else None
    else:
        value = getattr(connection, source, None)
    return value if isinstance(value, str) and value else None


class AirflowCredentials:
    """dpone's :class:`~dpone.contracts.ports.CredentialResolver`, Airflow connections first."""

    def resolve(self, binding: ConnectionBinding) -> Credential:
        from dpone.contracts import DponeError  # noqa: PLC0415
        from dpone.executor.transport import (  # noqa: PLC0415
            EnvironmentCredentialResolver,
            checked_credential,
        )

        ref, provider = binding.credential_ref, binding.auth_provider
        if ref is None or not ref.startswith(CONN_PREFIX) or provider not in _FIELDS:
            return EnvironmentCredentialResolver().resolve(binding)
        conn_id = ref.removeprefix(CONN_PREFIX)
        connection = airflow_connection(conn_id)
        if connection is None:
            return EnvironmentCredentialResolver().resolve(binding)
        fields: dict[str, str] = {}
        for name, source in (*_FIELDS[provider], *_OPTIONAL.get(provider, ())):
            value = _value(connection, source)
            if value is not None:
                fields[name] = value
            elif (name, source) in _FIELDS[provider]:
                raise DponeError(
                    code="credential.unavailable",
                    message=f"Airflow connection {conn_id!r} (credential_ref {ref}) has no "
                            f"{source.replace('extra:', 'extra ')} for the binding's {provider} "
                            f"{name}",
                    hint=f"Set the connection's {source.replace('extra:', 'extra field ')} in "
                         "its secrets backend (or remove the connection to use "
                         "DPONE_CONN_<REF>_<FIELD> variables).",
                    details={"credential_ref": ref, "field": name})
        return checked_credential(ref, provider, fields)
