"""The locator carries the environment's operation namespace to the trigger, and the journal the
provider opens from it is scoped to that namespace (the journal then refuses another tenant's
operations: tests/integration/journal/test_journal_tenancy.py)."""

from __future__ import annotations

from conftest import ENVIRONMENT, Published
from dpone_airflow import _runtime
from dpone_airflow._locator import JournalLocator, resolve

from dpone.artifacts import open_artifact_store
from dpone.contracts.plan import RestDeliveryPlan
from dpone.plans import read_published_plan


def _plan(published: Published) -> RestDeliveryPlan:
    store = open_artifact_store(str(published.state / "artifacts"))
    return RestDeliveryPlan.model_validate(
        read_published_plan(store, published.digests["measurements_sync"]), strict=False)


def test_the_locator_carries_the_plans_namespace_and_scopes_the_journal(
        published: Published) -> None:
    locator = resolve(ENVIRONMENT, published.environments_dir)
    assert locator.operation_namespace == _plan(published).environment.operation_namespace
    assert JournalLocator.from_kwargs(locator.as_kwargs()) == locator
    journal = _runtime.open_journal(locator, migrate=True)
    try:
        assert journal.operation_namespace == locator.operation_namespace  # type: ignore[attr-defined]
    finally:
        journal.close()  # type: ignore[attr-defined]


def test_kwargs_serialized_without_a_namespace_still_load() -> None:
    kwargs: dict[str, str | int | None] = {
        "environment": ENVIRONMENT, "environment_id": "env", "tier": "development",
        "journal": "sqlite:///unused.db", "artifacts": "file:///unused", "lease_ttl_s": 30,
        "lease_heartbeat_s": None}
    assert JournalLocator.from_kwargs(kwargs).operation_namespace is None

