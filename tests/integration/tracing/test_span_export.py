"""A real `dpone` / `dpone-executor` process exports its spans over OTLP/HTTP when the standard
variables ask for it, into a local endpoint that decodes them as a collector would: in the trace
handed over by ``TRACEPARENT``, named by ``service.name`` and dpone's version, flushed on an error
exit too; a collector that never answers delays the exit by no more than the export timeout.
Without the variables (or without the SDK) the process installs no provider and says nothing."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import dpone
from dpone.cli.executor_app import XCOM_DIR_VARIABLE
from dpone.receiver import ReceiverThread
from support.cli import FULL, TOKEN, TOKEN_ENV, Dpone
from support.common import ROOT
from support.otlp_endpoint import OtlpEndpoint, ReceivedSpan

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_ID = "b7ad6b7169203331"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
ENTRY = {"dpone": "dpone.cli.main", "dpone-executor": "dpone.cli.executor_app"}

# Run as `python -c PROBE ENTRY MODE ARGS...`: the entry point's main(), then, on a stderr line
# of its own marked PROBE_MARK (written in one write, so that a line an exporter thread logs
# meanwhile cannot run into it), which tracer provider the process ended with and whether it
# loaded the SDK, and the exit with main's code (after the interpreter's exit handlers, as a
# console script). MODE no-sdk makes the SDK and its exporters unimportable, as in an install
# without the otel extra.
PROBE_MARK = "dpone-probe "
PROBE = f"MARK = {PROBE_MARK!r}\n" + """
import importlib.abc, json, sys
entry, mode, *args = sys.argv[1:]
class NoSdk(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("opentelemetry.sdk", "opentelemetry.exporter")):
            raise ModuleNotFoundError(name)
if mode == "no-sdk":
    sys.meta_path.insert(0, NoSdk())
sys.argv = [entry, *args]
from opentelemetry import trace
main = __import__(entry, fromlist=["main"]).main
code = 0
try:
    main()
except SystemExit as stop:
    code = stop.code
sys.stderr.write(MARK + json.dumps({
    "code": code, "provider": type(trace.get_tracer_provider()).__name__,
    "sdk": "opentelemetry.sdk" in sys.modules}) + "\\n")
sys.exit(code)
"""


def _environ(**extra: str) -> dict[str, str]:
    """This process's environment without any OTEL_* or trace context variable, plus ``extra``."""
    kept = {k: v for k, v in os.environ.items()
            if not k.startswith("OTEL_") and k not in ("TRACEPARENT", "TRACESTATE")}
    return {**kept, "PYTHONPATH": str(ROOT), **extra}


def _run(command: str, *args: str, cwd: Path, mode: str = "sdk",
         **extra: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    ran = subprocess.run([sys.executable, "-c", PROBE, ENTRY[command], mode, *args],
                         capture_output=True, text=True, timeout=120, check=False, cwd=cwd,
                         env=_environ(**extra))
    lines = ran.stderr.strip().splitlines()
    marked = [n for n, line in enumerate(lines) if line.startswith(PROBE_MARK)]
    assert marked, ran.stdout + ran.stderr
    probe: dict[str, Any] = json.loads(lines[marked[-1]].removeprefix(PROBE_MARK))
    probe["stderr"] = "\n".join(lines[:marked[-1]] + lines[marked[-1] + 1:])
    return ran, probe


@pytest.fixture
def endpoint() -> Iterator[OtlpEndpoint]:
    with OtlpEndpoint() as running:
        yield running


def _plan_args(registry: Path) -> tuple[str, ...]:
    return ("plan", str(registry / "workloads" / "measurements_sync.yaml"), "--registry",
            str(registry), "--format", "json")


def _one(spans: list[ReceivedSpan], name: str) -> ReceivedSpan:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


def test_plan_exports_its_compile_span_in_the_trace_of_traceparent(
        endpoint: OtlpEndpoint, registry: Path, tmp_path: Path) -> None:
    ran, probe = _run("dpone", *_plan_args(registry), cwd=tmp_path,
                      OTEL_EXPORTER_OTLP_ENDPOINT=endpoint.url, TRACEPARENT=TRACEPARENT,
                      TRACESTATE="airflow=run-1")

    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert probe["provider"] == "TracerProvider" and probe["stderr"] == ""
    command = _one(endpoint.received.spans, "dpone.command")
    assert (command.trace_id, command.parent_span_id) == (TRACE_ID, PARENT_ID)
    assert command.attributes == {"dpone.command": "plan compile"}
    compiled = _one(endpoint.received.spans, "dpone.compile")
    assert (compiled.trace_id, compiled.parent_span_id) == (TRACE_ID, command.span_id)
    assert compiled.resource["service.name"] == "dpone"
    assert compiled.resource["service.version"] == dpone.__version__
    assert compiled.scope == "dpone" and compiled.status == "UNSET"
    assert compiled.attributes == {
        "dpone.workload": "measurements_sync",
        "dpone.plan_digest": json.loads(ran.stdout)["plan_digest"],
        "dpone.profile": "mock.batch-ndjson", "dpone.environment": "local-dev"}
    assert endpoint.received.encodings == ["identity"]


def test_seal_exports_freeze_seal_and_each_child_gzipped_under_its_service_name(
        endpoint: OtlpEndpoint, registry: Path, tmp_path: Path) -> None:
    ran, _ = _run("dpone", "seal", str(registry / "workloads" / "measurements_async.yaml"),
                  "--registry", str(registry), "--interval-start", FULL[0], "--interval-end",
                  FULL[1], "--format", "json", cwd=tmp_path,
                  OTEL_TRACES_EXPORTER="otlp", OTEL_EXPORTER_OTLP_COMPRESSION="gzip",
                  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=f"{endpoint.url}/v1/traces",
                  OTEL_SERVICE_NAME="dpone-ci", TRACEPARENT=TRACEPARENT)

    assert ran.returncode == 0, ran.stdout + ran.stderr
    sealed = json.loads(ran.stdout)
    spans = endpoint.received.spans
    assert set(endpoint.received.encodings) == {"gzip"}
    assert {s.trace_id for s in spans} == {TRACE_ID}
    assert {s.resource["service.name"] for s in spans} == {"dpone-ci"}
    freeze, seal = _one(spans, "dpone.freeze"), _one(spans, "dpone.seal")
    command = _one(spans, "dpone.command")
    assert command.parent_span_id == PARENT_ID
    assert _one(spans, "dpone.compile").parent_span_id == command.span_id
    assert freeze.parent_span_id == seal.parent_span_id == command.span_id
    assert freeze.attributes["dpone.parent_digest"] == sealed["parent_digest"]
    assert seal.attributes["dpone.parent_plan_digest"] == sealed["parent_plan_digest"]
    assert seal.attributes["dpone.child_count"] == sealed["child_count"] > 1
    children = [s for s in spans if s.name == "dpone.seal.child"]
    assert {c.parent_span_id for c in children} == {seal.span_id}
    assert sorted(c.attributes["dpone.child_ordinal"] for c in children) == [
        c["ordinal"] for c in sealed["children"]]


def test_a_failed_command_still_flushes_its_span_with_the_error_code(
        endpoint: OtlpEndpoint, registry: Path, tmp_path: Path) -> None:
    (registry / "bindings" / "mock_measurements.yaml").unlink()

    ran, _ = _run("dpone", *_plan_args(registry), cwd=tmp_path,
                  OTEL_EXPORTER_OTLP_ENDPOINT=endpoint.url, TRACEPARENT=TRACEPARENT)

    assert ran.returncode == 2, ran.stdout + ran.stderr
    code = json.loads(ran.stdout)["code"]
    compiled = _one(endpoint.received.spans, "dpone.compile")
    assert (compiled.trace_id, compiled.status, compiled.status_message) == (TRACE_ID, "ERROR",
                                                                             code)
    assert compiled.attributes == {"error.type": code} and compiled.events == ()


def test_a_bad_otel_value_never_stops_the_command(
        endpoint: OtlpEndpoint, registry: Path, tmp_path: Path) -> None:
    ran, _ = _run("dpone", *_plan_args(registry), cwd=tmp_path,
                  OTEL_EXPORTER_OTLP_ENDPOINT=endpoint.url,
                  OTEL_EXPORTER_OTLP_COMPRESSION="brotli", OTEL_TRACES_SAMPLER="bogus")

    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr
    command = _one(endpoint.received.spans, "dpone.command")
    assert command.parent_span_id == ""  # no TRACEPARENT: the command's span is the root
    assert _one(endpoint.received.spans, "dpone.compile").parent_span_id == command.span_id


def test_the_executor_continues_the_airflow_task_s_trace(
        endpoint: OtlpEndpoint, registry: Path, tmp_path: Path, receiver: ReceiverThread) -> None:
    artifacts = tmp_path / "artifacts"
    planned = Dpone(registry, tmp_path / "ci")(
        "plan", str(registry / "workloads" / "measurements_sync.yaml"), "--registry",
        str(registry), "--out", str(tmp_path / "ci"), "--publish", "--artifacts", str(artifacts),
        "--format", "json")
    assert planned.code == 0, planned.out + planned.err
    digest = planned.json()["plan_digest"]
    source = tmp_path / "volume"
    shutil.copytree(registry / "data", source / "data")
    pod = tmp_path / "pod"
    (pod / "xcom").mkdir(parents=True)

    ran, _ = _run("dpone-executor", "run", "--plan-digest", digest, "--interval-start", FULL[0],
                  "--interval-end", FULL[1], "--journal", str(tmp_path / "journal.sqlite3"),
                  "--artifacts", str(artifacts), "--source-root", str(source),
                  "--format", "json", cwd=pod, OTEL_EXPORTER_OTLP_ENDPOINT=endpoint.url,
                  OTEL_SERVICE_NAME="dpone-executor", TRACEPARENT=TRACEPARENT,
                  **{TOKEN_ENV: TOKEN, XCOM_DIR_VARIABLE: str(pod / "xcom")})

    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert json.loads(ran.stdout)["status"] == "completed"
    spans = endpoint.received.spans
    names = {s.name for s in spans}
    assert {"dpone.freeze", "dpone.seal", "dpone.seal.child"} <= names
    assert "dpone.compile" not in names  # the executor never compiles
    assert {s.trace_id for s in spans} == {TRACE_ID}
    assert {s.resource["service.name"] for s in spans} == {"dpone-executor"}
    by_id = {s.span_id: s for s in spans}
    roots = {s.name for s in spans if s.parent_span_id not in by_id}
    assert {s.parent_span_id for s in spans if s.parent_span_id not in by_id} == {PARENT_ID}
    assert roots == {"dpone.command"}
    command = _one(spans, "dpone.command")
    assert command.attributes == {"dpone.command": "run"}
    assert {by_id[s.parent_span_id].name for s in spans
            if s.name in ("dpone.freeze", "dpone.seal", "dpone.deliver")} == {"dpone.command"}


def test_a_collector_that_never_answers_costs_the_exit_at_most_the_export_timeout(
        registry: Path, tmp_path: Path) -> None:
    silent = socket.socket()  # accepts connections (the kernel's backlog), never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        started = time.monotonic()
        plain, _ = _run("dpone", *_plan_args(registry), cwd=tmp_path)
        baseline = time.monotonic() - started
        started = time.monotonic()
        stuck, probe = _run("dpone", *_plan_args(registry), cwd=tmp_path,
                            OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{silent.getsockname()[1]}",
                            OTEL_BSP_EXPORT_TIMEOUT="1000", TRACEPARENT=TRACEPARENT)
        elapsed = time.monotonic() - started
    finally:
        silent.close()

    assert stuck.returncode == plain.returncode == 0, stuck.stdout + stuck.stderr
    assert json.loads(stuck.stdout)["plan_digest"] == json.loads(plain.stdout)["plan_digest"]
    assert probe["provider"] == "TracerProvider" and "Traceback" not in stuck.stderr
    # The 1 s bound and a loaded machine's noise; OpenTelemetry's own defaults would hold the
    # exit 10 s per request (30 s per export).
    assert elapsed - baseline < 1.0 + 5.0


@pytest.mark.parametrize(("mode", "extra"), [
    ("sdk", {}),
    ("sdk", {"TRACEPARENT": TRACEPARENT, "OTEL_SERVICE_NAME": "dpone"}),
    ("sdk", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_SDK_DISABLED": "true"}),
    ("sdk", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_TRACES_EXPORTER": "none"}),
    ("no-sdk", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "TRACEPARENT": TRACEPARENT}),
], ids=["no-variables", "no-exporter-asked", "sdk-disabled", "exporter-none", "sdk-missing"])
@pytest.mark.parametrize("command", ["dpone", "dpone-executor"])
def test_without_a_request_or_the_sdk_no_provider_is_installed_and_nothing_said(
        command: str, mode: str, extra: dict[str, str], registry: Path, tmp_path: Path) -> None:
    args = _plan_args(registry) if command == "dpone" else ("--help",)

    ran, probe = _run(command, *args, cwd=tmp_path, mode=mode, **extra)

    assert ran.returncode == 0 == probe["code"], ran.stdout + ran.stderr
    assert probe["provider"] == "ProxyTracerProvider"
    assert probe["sdk"] is False
    assert probe["stderr"] == ""
