"""Secret values held in memory only: never printed, pickled, copied into JSON or logged."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NoReturn, final

_MASK = "Secret(***)"


def _refuse(kind: str) -> NoReturn:
    raise TypeError(f"{kind} is not serializable: secrets stay in process memory")


@final
class Secret:
    """A secret string. ``repr``/``str``/format show ``Secret(***)``; ``reveal()`` returns it.

    Pickling, copying into another process and JSON serialization raise ``TypeError``; equality
    is constant-time; instances are unhashable so they cannot become dictionary keys in logs.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError("a Secret wraps a str")
        object.__setattr__(self, "_value", value)

    def reveal(self) -> str:
        """The secret value; use it only to build the header or TLS setting that needs it."""
        value: str = object.__getattribute__(self, "_value")
        return value

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("Secret is immutable")

    def __repr__(self) -> str:
        return _MASK

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return _MASK

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self.reveal().encode(), other.reveal().encode())

    __hash__ = None  # type: ignore[assignment]

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        _refuse("Secret")

    def __reduce__(self) -> NoReturn:
        _refuse("Secret")

    def __getstate__(self) -> NoReturn:
        _refuse("Secret")

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: Mapping[int, Any]) -> Secret:
        return self


@final
class Credential:
    """The resolved credential of one binding: its auth provider and named secret fields.

    Field names are the lower-case ``DPONE_CONN_<REF>_<FIELD>`` suffixes: ``token``,
    ``username``, ``password``, ``client_id``, ``client_secret``, ``cert_file``, ``key_file``.
    Like :class:`Secret` it refuses pickling and shows no value.
    """

    __slots__ = ("_fields", "_provider")

    def __init__(self, provider: str, fields: Mapping[str, Secret]) -> None:
        object.__setattr__(self, "_provider", provider)
        object.__setattr__(self, "_fields", MappingProxyType(dict(fields)))

    @property
    def provider(self) -> str:
        value: str = object.__getattribute__(self, "_provider")
        return value

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(sorted(self._field_map()))

    def secret(self, name: str) -> Secret:
        """The named field; ``KeyError`` (naming the field only) when it was not resolved."""
        return self._field_map()[name]

    def secrets(self) -> tuple[Secret, ...]:
        return tuple(self._field_map().values())

    def _field_map(self) -> Mapping[str, Secret]:
        fields: Mapping[str, Secret] = object.__getattribute__(self, "_fields")
        return fields

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("Credential is immutable")

    def __repr__(self) -> str:
        return f"Credential(provider={self.provider!r}, fields={list(self.field_names)!r})"

    __str__ = __repr__

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        _refuse("Credential")

    def __reduce__(self) -> NoReturn:
        _refuse("Credential")

    def __getstate__(self) -> NoReturn:
        _refuse("Credential")

    def __copy__(self) -> Credential:
        return self

    def __deepcopy__(self, memo: Mapping[int, Any]) -> Credential:
        return self
