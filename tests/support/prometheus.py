"""Real Prometheus components for the observability suites: a Prometheus server and a
Pushgateway, each a child process on a free loopback port with its own temporary directory.

The binaries come from ``scripts/prometheus_tools`` (``scripts/test`` runs it first): on PATH or
in ``/usr/bin``. A test that needs one and cannot find it fails, naming that script; it is never
skipped.

:class:`Prometheus` scrapes the given targets and evaluates the given rule files every
``interval`` seconds (default 1); :meth:`Prometheus.query`, :meth:`Prometheus.alerts` and
:meth:`Prometheus.rules` read its HTTP API and :func:`wait_for` polls one of them up to a
deadline. :class:`Pushgateway` is a gateway with its admin API on (:meth:`Pushgateway.wipe`).

The fixtures ``pushgateway`` (its base URL) and ``prometheus_server`` (a factory) start their own
per test. A test module (or a conftest) registers one by importing its function::

    from support.prometheus import pushgateway_fixture  # noqa: F401  (the pushgateway fixture)

    def test_push(pushgateway: str) -> None: ...
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self, TypeVar

import httpx
import pytest

from support.common import free_port

TOOLS_SCRIPT: Final = "scripts/prometheus_tools"
START_TIMEOUT: Final = 30.0
T = TypeVar("T")


def find_tool(name: str) -> Path:
    """The path of ``name`` (``prometheus``, ``promtool``, ``prometheus-pushgateway``); fails the
    test, naming :data:`TOOLS_SCRIPT`, when it is neither on PATH nor in /usr/bin."""
    found = shutil.which(name)
    if found:
        return Path(found)
    if (Path("/usr/bin") / name).is_file():
        return Path("/usr/bin") / name
    pytest.fail(f"{name} not found on PATH or in /usr/bin: run {TOOLS_SCRIPT} (it installs the "
                "Debian packages prometheus and prometheus-pushgateway)", pytrace=False)


def promtool(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``promtool ARGS`` (its exit code is the caller's to check)."""
    return subprocess.run([str(find_tool("promtool")), *args], capture_output=True, text=True,
                          timeout=120, check=False, cwd=cwd)


@dataclass(frozen=True)
class ScrapeTarget:
    """One static scrape job of one ``host:port`` target."""

    job: str
    address: str
    labels: Mapping[str, str] = field(default_factory=dict)
    honor_labels: bool = False
    """True for a Pushgateway: the pushed job and grouping labels win over the target's."""
    metrics_path: str = "/metrics"

    def config(self, interval: float) -> dict[str, Any]:
        return {"job_name": self.job, "honor_labels": self.honor_labels,
                "metrics_path": self.metrics_path, "scrape_interval": _duration(interval),
                "scrape_timeout": _duration(interval),
                "static_configs": [{"targets": [self.address], "labels": dict(self.labels)}]}


def _duration(seconds: float) -> str:
    return f"{round(seconds * 1000)}ms"


class _Daemon:
    """A child process serving HTTP on a free loopback port, ready when ``/-/ready`` says 200."""

    name = "daemon"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.log = root / f"{self.name}.log"
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> Self:
        self.root.mkdir(parents=True, exist_ok=True)
        for _attempt in range(3):  # another process may take the free port first
            self.port = free_port()
            with self.log.open("ab") as log:
                self.process = subprocess.Popen(self.command(), stdout=log,
                                                stderr=subprocess.STDOUT, cwd=self.root)
            if self._wait_ready():
                return self
            self.stop()
        raise RuntimeError(f"{self.name} did not become ready:\n{self.tail()}")

    def _wait_ready(self) -> bool:
        assert self.process is not None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                if httpx.get(f"{self.url}/-/ready", timeout=2).status_code == 200:
                    return True
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)

    def tail(self, lines: int = 40) -> str:
        if not self.log.exists():
            return "(no log)"
        return "\n".join(self.log.read_text(encoding="utf-8", errors="replace")
                         .splitlines()[-lines:])

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()


class Pushgateway(_Daemon):
    """A real Pushgateway (admin API on, no persistence)."""

    name = "pushgateway"

    def command(self) -> list[str]:
        return [str(find_tool("prometheus-pushgateway")),
                f"--web.listen-address=127.0.0.1:{self.port}", "--web.enable-admin-api",
                # Debian's binary defaults to a shared /var/lib/prometheus/pushgateway.data:
                # every gateway would load what earlier ones pushed.
                "--persistence.file=", "--log.level=warn"]

    @property
    def address(self) -> str:
        """``host:port``, as a scrape target."""
        return f"127.0.0.1:{self.port}"

    def metrics(self) -> str:
        """The gateway's exposition (every pushed group, plus its own metrics)."""
        response = httpx.get(f"{self.url}/metrics", timeout=10)
        response.raise_for_status()
        return response.text

    def groups(self) -> list[dict[str, Any]]:
        """The pushed groups (``/api/v1/metrics``): labels and metric families of each."""
        response = httpx.get(f"{self.url}/api/v1/metrics", timeout=10)
        response.raise_for_status()
        data: list[dict[str, Any]] = response.json()["data"]
        return data

    def wipe(self) -> None:
        """Delete every pushed group."""
        httpx.put(f"{self.url}/api/v1/admin/wipe", timeout=10).raise_for_status()


class Prometheus(_Daemon):
    """A real Prometheus scraping ``targets`` and evaluating ``rule_files`` every ``interval``
    seconds, its configuration and TSDB under ``root``."""

    name = "prometheus"

    def __init__(self, root: Path, *, targets: Sequence[ScrapeTarget] = (),
                 rule_files: Sequence[Path] = (), interval: float = 1.0) -> None:
        super().__init__(root)
        self.targets = tuple(targets)
        self.rule_files = tuple(path.resolve() for path in rule_files)
        self.interval = interval
        self.config = root / "prometheus.yml"

    def command(self) -> list[str]:
        every = _duration(self.interval)
        config = {"global": {"scrape_interval": every, "scrape_timeout": every,
                             "evaluation_interval": every},
                  "rule_files": [str(path) for path in self.rule_files],
                  "scrape_configs": [target.config(self.interval) for target in self.targets]}
        self.config.write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")  # JSON is YAML
        return [str(find_tool("prometheus")), f"--config.file={self.config}",
                f"--storage.tsdb.path={self.root / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"]

    def api(self, path: str, **params: str) -> Any:
        """The ``data`` of a successful ``/api/v1/<path>`` answer."""
        response = httpx.get(f"{self.url}/api/v1/{path}", params=params, timeout=10)
        document = response.json()
        if response.status_code != 200 or document.get("status") != "success":
            raise AssertionError(f"/api/v1/{path} {params}: {response.status_code} {document}")
        return document["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """The instant vector of ``expr`` now: ``[{"metric": {labels}, "value": [t, "v"]}]``."""
        data = self.api("query", query=expr)
        if data["resultType"] != "vector":
            raise AssertionError(f"{expr!r} is a {data['resultType']}, not an instant vector")
        result: list[dict[str, Any]] = data["result"]
        return result

    def alerts(self, name: str | None = None) -> list[dict[str, Any]]:
        """The active (pending or firing) alerts, optionally of one alert name."""
        alerts: list[dict[str, Any]] = self.api("alerts")["alerts"]
        return [a for a in alerts if name is None or a["labels"].get("alertname") == name]

    def rules(self) -> list[dict[str, Any]]:
        """The loaded rule groups with their rules' health and last evaluation."""
        groups: list[dict[str, Any]] = self.api("rules")["groups"]
        return groups

    def targets_health(self) -> dict[str, str]:
        """Each active target's scrape URL and health (``up``, ``down``, ``unknown``)."""
        active = self.api("targets")["activeTargets"]
        return {t["scrapeUrl"]: f"{t['health']} {t.get('lastError') or ''}".strip()
                for t in active}


def wait_for(probe: Callable[[], T | None], *, what: str, timeout: float = 60.0,
             every: float = 0.25, context: Callable[[], str] | None = None) -> T:
    """Call ``probe`` until it returns something truthy (returned) or ``timeout`` seconds pass
    (the test fails with ``what``, the last value and ``context()``, e.g. a daemon's log)."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while True:
        last = probe()
        if last:
            return last
        if time.monotonic() >= deadline:
            detail = context() if context is not None else ""
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}; last: {last!r}\n"
                        f"{detail}", pytrace=False)
        time.sleep(every)


# --- fixtures (import them into a test module to use them) --------------------------------------

@pytest.fixture(name="pushgateway")
def pushgateway_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh real Pushgateway for this test: its base URL (``http://127.0.0.1:PORT``)."""
    with Pushgateway(tmp_path_factory.mktemp("pushgateway")) as gateway:
        yield gateway.url


PrometheusFactory = Callable[..., Prometheus]
"""``prometheus_server(targets=(...), rule_files=(...), interval=1.0)``: a started server."""


@pytest.fixture(name="prometheus_server")
def prometheus_server_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusFactory]:
    """Start real Prometheus servers for this test (each stopped after it)."""
    started: list[Prometheus] = []

    def start(*, targets: Sequence[ScrapeTarget] = (), rule_files: Sequence[Path] = (),
              interval: float = 1.0) -> Prometheus:
        server = Prometheus(tmp_path_factory.mktemp("prometheus"), targets=targets,
                            rule_files=rule_files, interval=interval)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()
