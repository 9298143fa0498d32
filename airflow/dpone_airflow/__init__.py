"""apache-airflow-providers-dpone: run a published dpone plan from Airflow.

Importing the package imports neither Airflow nor the dpone runtime; the operator lives in
:mod:`dpone_airflow.operators`, the trigger in :mod:`dpone_airflow.triggers`.
"""

__version__ = "0.75.0.dev0"
