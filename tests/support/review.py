"""A registry that is not the examples: every id renamed, for the review-aid suites.

The plan diff and the golden plans must not depend on the example's names: the suites run on a
copy of the example registry whose environment, profiles, binding, mapping and workloads all
carry other ids (and a reviewer's edits are made to it with :func:`edit`)."""

from __future__ import annotations

import shutil
from pathlib import Path

from support.common import EXAMPLES

RENAMES = (
    ("local-dev", "acme-dev"),
    ("mock.batch-ndjson", "acme.orders-ndjson"),
    ("mock.dataset-jobs", "acme.order-jobs"),
    ("mock.measurements.v1", "acme.orders.v1"),
    ("MOCK_MEASUREMENTS", "ACME_ORDERS"),
    ("mock_measurements", "acme_orders"),
    ("measurements_sync", "orders_sync"),
    ("measurements_async", "orders_async"),
    ("measurement_readings", "order_lines"),
)
TOKEN_ENV = "DPONE_CONN_ACME_ORDERS_TOKEN"


def _renamed(text: str) -> str:
    for old, new in RENAMES:
        text = text.replace(old, new)
    return text


def independent_registry(root: Path) -> Path:
    """``root/registry``: the example registry with every id and file name renamed."""
    registry = root / "registry"
    shutil.copytree(EXAMPLES, registry)
    for path in sorted(registry.rglob("*.yaml"), reverse=True):
        text = path.read_text("utf-8")
        target = path.with_name(_renamed(path.name))
        path.unlink()
        target.write_text(_renamed(text), "utf-8")
    return registry


def edit(registry: Path, relative: str, old: str, new: str) -> None:
    """Replace the first ``old`` in ``registry/relative`` by ``new`` (which must be there)."""
    path = registry / relative
    text = path.read_text("utf-8")
    if old not in text:
        raise AssertionError(f"{old!r} not in {relative}")
    path.write_text(text.replace(old, new, 1), "utf-8")
