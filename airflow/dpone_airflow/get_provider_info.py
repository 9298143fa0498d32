"""The provider-info entry point Airflow's ProvidersManager reads (``apache_airflow_provider``)."""

from __future__ import annotations

from typing import Any


def get_provider_info() -> dict[str, Any]:
    """Name, version and the operator and trigger modules of this provider."""
    from dpone_airflow import __version__  # noqa: PLC0415 - the entry point stays import-light

    return {
        "package-name": "apache-airflow-providers-dpone",
        "name": "dpone",
        "description": "dpone REST bulk delivery: deferrable delivery operator and receipt trigger.",
        "versions": [__version__],
        "operators": [{"integration-name": "dpone",
                       "python-modules": ["dpone_airflow.operators",
                                          "dpone_airflow.pod_operator"]}],
        "triggers": [{"integration-name": "dpone",
                      "python-modules": ["dpone_airflow.triggers"]}],
        "extra-links": ["dpone_airflow.links.DeliveryLink"],
    }
