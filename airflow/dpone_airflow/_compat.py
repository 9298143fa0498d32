"""The few Airflow names the provider uses, from where each supported Airflow keeps them
(the Task SDK on Airflow 3, the core modules on 2.10/2.11). The operator base and the exceptions
are looked up separately: Airflow 3.0 has the Task SDK's ``BaseOperator`` but keeps its
exceptions in ``airflow.exceptions`` (``airflow.sdk.exceptions`` holds them from 3.1 on)."""

from __future__ import annotations

try:  # Airflow 3
    from airflow.sdk import BaseOperator  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # Airflow 2.10, 2.11
    from airflow.models import BaseOperator  # type: ignore[no-redef,assignment,unused-ignore]

try:  # Airflow 3.1+ (the ignore: type checking against 3.0 or 2.x, where they are absent)
    from airflow.sdk.exceptions import (  # type: ignore[attr-defined,import-not-found,unused-ignore]
        AirflowException,
        AirflowFailException,
    )
except ImportError:  # Airflow 2.10, 2.11, 3.0
    from airflow.exceptions import (  # type: ignore[no-redef,attr-defined,unused-ignore]
        AirflowException,
        AirflowFailException,
    )

__all__ = ["AirflowException", "AirflowFailException", "BaseOperator"]
