"""Helpers of the `dpone profile certify` suites: the real mock receiver over loopback (the
certified behaviour, or a variant that contradicts one claim), a copy of the example registry
bound to it, the command's runs and the certification it wrote."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from dpone.cli.main import cli
from dpone.contracts.certification import CaseName, SinkCertification, Verdict
from dpone.receiver import ReceiverConfig, ReceiverThread
from support.cli import TOKEN, Dpone, Run, bind_registry

ASYNC = "mock.dataset-jobs@1"
SYNC = "mock.batch-ndjson@1"
BINDING = "mock_measurements"
ENVIRONMENT = "local-dev"
PROCESSING_S = 0.2
"""A short synthetic job: the operation-duration case sees it end at its second poll."""


@contextlib.contextmanager
def mock_receiver(**variant: Any) -> Iterator[ReceiverThread]:
    """The mock receiver with the example binding's token and a short job; ``variant`` are
    further :class:`ReceiverConfig` fields."""
    config = ReceiverConfig(token=TOKEN, processing_seconds=PROCESSING_S, **variant)
    with ReceiverThread(config) as running:
        yield running


def registry_for(tmp_path: Path, receiver: ReceiverThread) -> Dpone:
    return Dpone(bind_registry(tmp_path, receiver.base_url), tmp_path / "state")


def edit(path: Path, pattern: str, replacement: str) -> None:
    """Replace what ``pattern`` (a multi-line regex) matches, exactly once."""
    text, count = re.subn(pattern, replacement, path.read_text("utf-8"), count=1,
                          flags=re.M | re.S)
    assert count == 1, pattern
    path.write_text(text, "utf-8")


def short_receipt_ttl(registry: Path, seconds: int) -> None:
    """The async profile copy claims receipts live ``seconds`` (what a receiver with
    ``receipt_ttl_seconds`` does), so the expiry answer is observed within a test."""
    edit(registry / "profiles" / f"{ASYNC}.yaml", r"receipt_ttl_s: 86400",
         f"receipt_ttl_s: {seconds}")


def certify_args(dpone: Dpone, profile: str, level: str = "local-live", *extra: str) -> list[str]:
    return ["profile", "certify", profile, "--binding", BINDING, "--environment", ENVIRONMENT,
            "--level", level, "--registry", str(dpone.registry), "--artifacts",
            str(dpone.state / "artifacts"), *extra]


def certify(dpone: Dpone, profile: str, level: str = "local-live", *extra: str) -> Run:
    """The command in text form (``Dpone`` checks a ``--format json`` run against the CLI
    documents; the certification is an artifact document: see :func:`certify_json`)."""
    return dpone(*certify_args(dpone, profile, level, *extra))


def certify_json(dpone: Dpone, profile: str, level: str = "local-live",
                 *extra: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(cli, [*certify_args(dpone, profile, level, *extra),
                                      "--format", "json"])
    return result.exit_code, json.loads(result.stdout), result.stderr


def written(dpone: Dpone, profile: str, level: str = "local-live") -> SinkCertification:
    path = dpone.registry / "certifications" / profile / ENVIRONMENT / f"{level}.json"
    return SinkCertification.model_validate_json(path.read_bytes())


def verdicts(certification: SinkCertification) -> dict[CaseName, Verdict]:
    return {case.case: case.verdict for case in certification.cases}


def reason(certification: SinkCertification, case: CaseName) -> str:
    return next(c.reason for c in certification.cases if c.case == case)
