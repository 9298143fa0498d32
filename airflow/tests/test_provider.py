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


DOCS = Path(__file__).resolve().parents[2] / "docs" / "airflow.md"


@pytest.mark.smoke
def test_the_install_bounds_the_docs_state_hold_in_the_tested_airflow() -> None:
    """A plain install of Airflow 3 resolves a fastapi and an svcs with which every task fails:
    the install section (docs/airflow.md) states the bounds, and the Airflow this suite runs
    satisfies the ones stated for its minor (Airflow 2 needs none)."""
    import re  # noqa: PLC0415
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    from packaging.requirements import Requirement  # noqa: PLC0415

    airflow = version("apache-airflow")
    lines = [line for line in DOCS.read_text(encoding="utf-8").splitlines()
             if line.startswith("$ pip install \"apache-airflow==")]
    stated = {re.search(r'"apache-airflow==(\d+\.\d+)', line).group(1):  # type: ignore[union-attr]
              [Requirement(r) for r in re.findall(r'"([a-z-]+<[0-9.]+)"', line)] for line in lines}
    assert set(stated) == {"3.2", "3.0"}, stated
    minor = ".".join(airflow.split(".")[:2])
    if minor.startswith("2."):
        return
    bounds = stated["3.0" if minor == "3.0" else "3.2"]
    assert bounds, f"no bound stated for Airflow {minor}"
    for bound in bounds:
        try:
            installed = version(bound.name)
        except PackageNotFoundError:
            continue
        assert bound.specifier.contains(installed), (bound, installed)
