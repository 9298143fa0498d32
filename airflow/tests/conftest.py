"""A published example plan, its environment file and the in-process mock receiver, for DAGs
run with ``dag.test()`` on a real Airflow (``scripts/airflow_venv``)."""

from __future__ import annotations

import datetime as dt
import importlib.util
import inspect
import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from dpone.artifacts import open_artifact_store
from dpone.compiler import compile_workload
from dpone.plans import publish_plan
from dpone.receiver import ReceiverConfig, ReceiverThread

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOKEN = "tok-airflow-sentinel-9Kq4-never-printed"
TOKEN_ENV = "DPONE_CONN_MOCK_MEASUREMENTS_TOKEN"
ENVIRONMENT = "local-dev"



def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "smoke: the compatibility subset run on every supported Airflow minor "
        "(submit, defer, trigger, complete; a blocked task failing with its code; the trigger "
        "imported by its classpath)")


@dataclass(frozen=True)
class Published:
    """A registry bound to the receiver, its environment file and the plans published there."""

    registry: Path
    state: Path
    receiver: ReceiverThread
    digests: dict[str, str]

    @property
    def environments_dir(self) -> str:
        return str(self.registry / "environments")

    @property
    def journal(self) -> Path:
        return self.state / "journal.sqlite3"

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.receiver.base_url,
                            headers={"Authorization": f"Bearer {TOKEN}"})

    def ledger(self) -> dict[str, Any]:
        return dict(self.receiver.state.ledger.snapshot())

    def posts(self) -> int:
        """How many POST requests the receiver counted (every submit, applied or not)."""
        return sum(n for line, n in self.ledger()["requests"].items() if line.startswith("POST "))

    def fault(self, fault: str, path_prefix: str, method: str, **params: Any) -> None:
        with self.client() as client:
            response = client.post("/mock/_faults", json=[{
                "match": {"method": method, "path_prefix": path_prefix}, "fault": fault,
                **params}])
        assert response.status_code == 200, response.text


def _bind(root: Path, authority: str, state: Path, credential_ref: str | None = None) -> Path:
    registry = root / "registry"
    shutil.copytree(EXAMPLES, registry)
    binding = registry / "bindings" / "mock_measurements.yaml"
    text = re.sub(r"^authority: .*$", f"authority: {authority}",
                  binding.read_text(encoding="utf-8"), flags=re.M)
    if credential_ref is not None:
        text = re.sub(r"^credential_ref: .*$", f"credential_ref: {credential_ref}", text,
                      flags=re.M)
    binding.write_text(text, encoding="utf-8")
    environment = registry / "environments" / f"{ENVIRONMENT}.yaml"
    text = environment.read_text(encoding="utf-8")
    text = re.sub(r"^  journal: .*$", f"  journal: {state / 'journal.sqlite3'}", text, flags=re.M)
    text = re.sub(r"^  artifacts: .*$", f"  artifacts: {state / 'artifacts'}", text, flags=re.M)
    text = re.sub(r"^leases: .*$", "leases: {ttl_s: 10, heartbeat_s: 3}", text, flags=re.M)
    environment.write_text(text, encoding="utf-8")
    return registry


@pytest.fixture
def published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Published]:
    """Both example plans compiled and published by digest into the environment's artifact
    store (what `dpone plan --publish` does in CI); the receiver requires the token and takes
    1 s per async job."""
    yield from publish(tmp_path, monkeypatch, ReceiverConfig(token=TOKEN, processing_seconds=1.0))


def publish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: ReceiverConfig,
            credential_ref: str | None = None,
            edit: Callable[[Path], None] | None = None) -> Iterator[Published]:
    """The body of ``published`` for a receiver configured otherwise (its token is ``TOKEN``,
    in ``TOKEN_ENV`` unless the binding names another ``credential_ref``); ``edit`` changes the
    copied registry before the plans are compiled."""
    if credential_ref is None:
        monkeypatch.setenv(TOKEN_ENV, TOKEN)
    else:
        monkeypatch.delenv(TOKEN_ENV, raising=False)
    state = tmp_path / "state"
    with ReceiverThread(config) as receiver:
        registry = _bind(tmp_path, receiver.base_url, state, credential_ref)
        if edit is not None:
            edit(registry)
        store = open_artifact_store(str(state / "artifacts"))
        digests = {}
        for name in ("measurements_sync", "measurements_async"):
            compiled = compile_workload(registry / "workloads" / f"{name}.yaml", registry)
            publish_plan(store, compiled.digest, compiled.canonical)
            digests[name] = compiled.digest
        yield Published(registry, state, receiver, digests)


_DAG_FILE = """\
import datetime
import datetime as dt

from airflow import DAG

try:
    from airflow.sdk import DeltaDataIntervalTimetable
except ImportError:  # Airflow 2
    from airflow.timetables.interval import DeltaDataIntervalTimetable

from dpone_airflow.operators import DponeDeliveryOperator

with DAG({dag_id!r}, schedule=DeltaDataIntervalTimetable(dt.timedelta(days={days})),
         start_date=dt.datetime(2026, 8, 1, tzinfo=dt.timezone.utc), catchup=False) as dag:
    DponeDeliveryOperator(task_id="deliver", plan_digest={plan_digest!r},
                          environment={environment!r}, environments_dir={environments_dir!r},
                          **{extra!r})
"""


def dag_file(dag_id: str, days: int, plan_digest: str, environments_dir: str,
             **extra: Any) -> Any:
    """A DAG file in the dags folder (Airflow 3 runs only a DAG its bundle holds), imported: one
    task ``deliver`` whose runs cover ``days`` days, [logical date, + days)."""
    folder = Path(os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{dag_id}.py"
    path.write_text(_DAG_FILE.format(dag_id=dag_id, days=days, plan_digest=plan_digest,
                                     environment=ENVIRONMENT, environments_dir=environments_dir,
                                     extra=extra), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"dags_{dag_id}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.dag


FIRST_DAY = dt.datetime(2026, 8, 1, tzinfo=dt.UTC)


@pytest.fixture
def run_dag() -> Callable[[Any, int], Any]:
    """``dag.test()`` of the run whose data interval is [2026-08-01, + days): a manual run's
    interval ends at its logical date. Triggers run inline, imported by their classpath. Returns
    the DagRun (``dag.test()`` does not raise: assert its state)."""

    from airflow import DAG  # noqa: PLC0415

    # Airflow 2 names the run's date ``execution_date``; Airflow 3 ``logical_date``.
    name = "logical_date" if "logical_date" in inspect.signature(DAG.test).parameters \
        else "execution_date"

    def run(dag: Any, days: int) -> Any:
        return dag.test(**{name: FIRST_DAY + dt.timedelta(days=days)})

    return run


@pytest.fixture
def observations(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every observation step a receipt trigger took (it imports observe_once lazily)."""
    from dpone_airflow import _runtime  # noqa: PLC0415 - the provider is under test

    seen: list[Any] = []
    real = _runtime.observe_once

    def spy(locator: Any, operation_id: str, quiet: Any = None) -> Any:
        seen.append(real(locator, operation_id, quiet))
        return seen[-1]

    monkeypatch.setattr(_runtime, "observe_once", spy)
    return seen


@pytest.fixture
def continuations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The delivery id of every ``execute_complete`` (a resumed task)."""
    from dpone_airflow import _runtime  # noqa: PLC0415 - the provider is under test

    seen: list[str] = []
    real = _runtime.continue_delivery

    def spy(locator: Any, parent_id: str) -> Any:
        seen.append(parent_id)
        return real(locator, parent_id)

    monkeypatch.setattr(_runtime, "continue_delivery", spy)
    return seen


@pytest.fixture(scope="session")
def span_exporter() -> Any:
    """The OpenTelemetry SDK installed as the process's tracer provider (once: OpenTelemetry
    allows one), every span recorded in memory."""
    from opentelemetry import trace  # noqa: PLC0415
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: PLC0415
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: PLC0415
        InMemorySpanExporter,
    )

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    assert trace.get_tracer_provider() is provider, "another tracer provider was installed first"
    return exporter


@pytest.fixture
def spans(span_exporter: Any) -> Iterator[Callable[[str], list[Any]]]:
    """The finished spans of this test named ``name`` (the provider's and dpone's alike)."""
    span_exporter.clear()

    def named(name: str) -> list[Any]:
        return [s for s in span_exporter.get_finished_spans() if s.name == name]

    yield named
    span_exporter.clear()


def span_text(span_exporter: Any) -> str:
    """Every finished span's name and attributes, as one text to search for a secret."""
    import json  # noqa: PLC0415

    return json.dumps([[s.name, dict(s.attributes or {})]
                       for s in span_exporter.get_finished_spans()])


def traceparent_of(span: Any) -> str:
    """The W3C ``traceparent`` naming ``span`` as a parent."""
    context = span.get_span_context()
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"
