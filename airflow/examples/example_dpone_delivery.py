"""Deliver each day of `measurements` to its receiver with a plan CI published by digest.

CI compiles the workload and publishes the plan (`dpone plan --publish`); the deployment pins
the digest, here in the Airflow Variable ``dpone_plan_measurements_async`` (rendered when the
task runs: parsing this file reads no Variable, journal or network). The environment file
``environments/local-dev.yaml`` under ``$DPONE_ENVIRONMENTS`` names the journal and the
artifact store; the receiver's token comes from the worker's and triggerer's environment
(``DPONE_CONN_MOCK_MEASUREMENTS_TOKEN``), never from the DAG. An asynchronous job defers the task
on its durable receipt: no worker slot is held while the receiver works.
"""

from __future__ import annotations

import datetime as dt

from airflow import DAG

try:
    from airflow.sdk import CronDataIntervalTimetable
except ImportError:  # Airflow 2
    from airflow.timetables.interval import CronDataIntervalTimetable

from dpone_airflow.operators import DponeDeliveryOperator

with DAG(
    "dpone_measurements_daily",
    schedule=CronDataIntervalTimetable("@daily", timezone="UTC"),
    start_date=dt.datetime(2026, 8, 1, tzinfo=dt.UTC),
    catchup=False,
    tags=["dpone"],
) as dag:
    DponeDeliveryOperator(
        task_id="deliver_measurements",
        plan_digest="{{ var.value.dpone_plan_measurements_async }}",
        environment="local-dev",
        retries=2,  # only exit class 3 (unavailable) is retried; nothing is ever resent
    )
