"""The few Airflow names the provider uses, from where each supported Airflow keeps them
(the Task SDK on Airflow 3, the core modules on 2.10/2.11)."""

from __future__ import annotations

try:  # Airflow 3
    from airflow.sdk import BaseOperator
    from airflow.sdk.exceptions import AirflowException, AirflowFailException
except ImportError:  # Airflow 2.10, 2.11
    from airflow.exceptions import (  # type: ignore[no-redef,attr-defined,unused-ignore]
        AirflowException,
        AirflowFailException,
    )
    from airflow.models import BaseOperator  # type: ignore[no-redef,assignment,unused-ignore]

__all__ = ["AirflowException", "AirflowFailException", "BaseOperator"]
