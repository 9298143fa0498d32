"""The executor image's Containerfile, read as data (no container runtime needed): a builder
stage installs dpone with its postgres, s3, vault and otel extras into a venv; the final stage
copies only that venv, runs as a non-root user, writes only under a declared scratch volume and
starts `dpone-executor`."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field

import pytest

from support.common import ROOT

CONTAINERFILE = ROOT / "containers" / "executor" / "Containerfile"
_FORBIDDEN = ("airflow", "pytest", "hypothesis", "moto", "mypy", "ruff", "gcc", "g++", "clang",
              "build-essential", "apt-get", "[dev]")


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def values(self, keyword: str) -> list[str]:
        return [value for key, value in self.instructions if key == keyword]


def _instructions(text: str) -> list[tuple[str, str]]:
    """``(KEYWORD, arguments)`` per instruction: comments dropped, continuations joined."""
    logical = re.sub(r"\\\n", " ", "\n".join(
        line for line in text.splitlines() if not line.lstrip().startswith("#")))
    return [(parts[0].upper(), parts[1].strip() if len(parts) > 1 else "")
            for line in logical.splitlines() if (parts := line.strip().split(None, 1))]


def _stages(text: str) -> tuple[dict[str, str], list[Stage]]:
    arguments: dict[str, str] = {}
    stages: list[Stage] = []
    for keyword, value in _instructions(text):
        if keyword == "FROM":
            words = value.split()
            stages.append(Stage(words[0], words[2] if len(words) == 3 else None))
        elif not stages and keyword == "ARG":
            name, _, default = value.partition("=")
            arguments[name] = default
        else:
            stages[-1].instructions.append((keyword, value))
    return arguments, stages


@pytest.fixture(scope="module")
def parsed() -> tuple[dict[str, str], list[Stage]]:
    return _stages(CONTAINERFILE.read_text("utf-8"))


def _final(parsed: tuple[dict[str, str], list[Stage]]) -> Stage:
    return parsed[1][-1]


def _environment(stage: Stage) -> dict[str, str]:
    pairs = " ".join(stage.values("ENV"))
    return dict(re.findall(r"(\w+)=(\S+)", pairs))


def test_the_builder_installs_the_wheel_with_the_postgres_s3_vault_and_otel_extras(
        parsed: tuple) -> None:
    arguments, stages = parsed
    assert arguments["PYTHON_IMAGE"].startswith("python:") and "slim" in arguments["PYTHON_IMAGE"]
    assert len(stages) == 2 and {s.base for s in stages} == {"${PYTHON_IMAGE}"}
    builder = stages[0]
    assert builder.name == "builder"
    extras = dict(value.partition("=")[::2] for value in builder.values("ARG"))["DPONE_EXTRAS"]
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert set(extras.split(",")) == {"postgres", "s3", "vault", "otel"}
    assert set(extras.split(",")) <= set(declared["optional-dependencies"])
    run = " ".join(builder.values("RUN"))
    assert "pip wheel --no-deps" in run and "[${DPONE_EXTRAS}]" in run
    assert "dpone-executor" in declared["scripts"]


def test_the_final_stage_copies_only_the_venv(parsed: tuple) -> None:
    final = _final(parsed)
    assert final.values("COPY") == ["--from=builder /opt/dpone /opt/dpone"]
    assert not final.values("ADD")
    text = " ".join(value for _, value in final.instructions).lower()
    assert [word for word in _FORBIDDEN if word in text] == []
    assert "pip install" not in text


def test_the_final_stage_runs_as_a_non_root_user(parsed: tuple) -> None:
    users = _final(parsed).values("USER")
    assert users, "the final stage sets no USER: it would run as root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0") and user == "10001"


def test_the_entrypoint_is_the_executor(parsed: tuple) -> None:
    entrypoints = _final(parsed).values("ENTRYPOINT")
    assert [json.loads(value) for value in entrypoints][-1:] == [["dpone-executor"]]


def test_every_write_goes_to_the_declared_scratch_volume(parsed: tuple) -> None:
    final = _final(parsed)
    volumes = [path for value in final.values("VOLUME") for path in json.loads(value)]
    assert volumes == ["/scratch"]
    environment = _environment(final)
    assert environment["HOME"] == environment["TMPDIR"] == "/scratch"
    assert environment["PYTHONDONTWRITEBYTECODE"] == "1"
    assert final.values("WORKDIR")[-1] == "/scratch"


def test_the_pod_logs_one_json_event_per_transition_and_attempt(parsed: tuple) -> None:
    assert _environment(_final(parsed))["DPONE_LOG_FORMAT"] == "json"
