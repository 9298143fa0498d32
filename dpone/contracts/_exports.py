"""A package's public names, each imported from its module on first use (PEP 562).

The supervisor's and the sealer's modules load httpx, pyarrow and the grammar, and the
documents' modules create some hundred pydantic models; a caller that needs one piece of them
(``dpone delivery inspect`` asks the supervisor for the allowed next actions, ``dpone deliver``
writes one result document) should not pay for the others. The package lists its names under
``TYPE_CHECKING`` (what the type checker sees), in ``__all__`` and in the table given here;
tests/unit/supervisor/test_lazy_package_exports.py keeps the three equal.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], object]:
    """The module ``__getattr__`` of ``package``: ``exports`` maps each public name to the
    submodule (``_name``) that defines it; a name is imported once, then is a plain attribute."""

    def resolve(name: str) -> object:
        submodule = exports.get(name)
        if submodule is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{submodule}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return resolve
