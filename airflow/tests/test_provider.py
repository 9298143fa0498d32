"""The distribution as Airflow sees it: discovered through its provider-info entry point, and
an example DAG that parses with no journal, Variable or network access."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from airflow.providers_manager import ProvidersManager

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "example_dpone_delivery.py"


def test_airflow_discovers_the_provider() -> None:
    providers = ProvidersManager().providers
    assert "apache-airflow-providers-dpone" in providers
    info = providers["apache-airflow-providers-dpone"]
    assert info.version == "0.75.0.dev0"


def test_the_example_dag_parses_without_side_effects() -> None:
    spec = importlib.util.spec_from_file_location("example_dpone_delivery", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    task = module.dag.get_task("deliver_measurements")
    assert task.plan_digest == "{{ var.value.dpone_plan_measurements_async }}"
    assert task.environment == "local-dev"


@pytest.mark.smoke
def test_the_operator_derives_from_the_task_sdk_base_where_airflow_has_one() -> None:
    """Airflow 3.0 has the Task SDK's ``BaseOperator`` but not ``airflow.sdk.exceptions``: the
    exceptions' fallback must not also swap the operator's base for the deprecated core one."""
    from dpone_airflow._compat import BaseOperator  # noqa: PLC0415
    from dpone_airflow.operators import DponeDeliveryOperator  # noqa: PLC0415

    try:
        from airflow.sdk import BaseOperator as expected  # noqa: PLC0415
    except ImportError:  # Airflow 2
        from airflow.models import BaseOperator as expected  # noqa: PLC0415
    assert BaseOperator is expected
    assert issubclass(DponeDeliveryOperator, expected)
