"""`dpone profile certify`: certify a live receiver against what an operation profile claims."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

from dpone.cli._hints import command
from dpone.cli._output import FORMAT_OPTION, emit_json, run_guarded
from dpone.cli._table import text_table
from dpone.contracts import DponeError
from dpone.contracts.certification import CASES, LEVEL_ORDER, Level, SinkCertification

if TYPE_CHECKING:
    from dpone.compiler.certification_subject import CertificationSubject
    from dpone.executor.certify import Options


RETENTION_DELAY_S = 2.0
CONCURRENCY = 4
MAX_WAIT_S = 60.0


@click.group(name="profile")
def profile() -> None:
    """Operation profiles: certify a receiver against what a profile claims."""


def _positive(ctx: click.Context, param: click.Parameter, value: float) -> float:
    del ctx
    if value < 0:
        raise click.BadParameter("must be zero or more seconds", param=param)
    return value


@profile.command(name="certify")
@click.argument("profile_ref", metavar="PROFILE")
@click.option("--binding", "binding_id", required=True,
              help="Connection binding (bindings/<id>.yaml) whose receiver is certified; it must "
                   "name a certification_scope.")
@click.option("--environment", "environment", required=True,
              help="The binding's environment (environments/<id>.yaml).")
@click.option("--level", "level", required=True, type=click.Choice(LEVEL_ORDER),
              help="static: the profile alone, no request; local-live: a local receiver; "
                   "vendor-live: the vendor's sandbox.")
@click.option("--registry", "registry", required=True,
              type=click.Path(path_type=Path, file_okay=False),
              help="Registry root holding profiles/, bindings/ and environments/.")
@click.option("--artifacts", "artifacts_url", default=None,
              show_default="the environment file's control_plane, else <registry>/.dpone/artifacts",
              help="Artifact store URL the certification is published into.")
@click.option("--out", "out", type=click.Path(path_type=Path, file_okay=False), default=None,
              show_default="<registry>/certifications",
              help="Directory the certification file is written under "
                   "(<profile>/<environment>/<level>.json).")
@click.option("--retention-delay", "retention_delay", type=float, default=RETENTION_DELAY_S,
              show_default=True, callback=_positive,
              help="Seconds between a submit and its same-key resubmit (key_retention).")
@click.option("--concurrency", "concurrency", type=click.IntRange(2, 64), default=CONCURRENCY,
              show_default=True, help="Parallel same-key submits (concurrent_duplicates).")
@click.option("--max-wait", "max_wait", type=float, default=MAX_WAIT_S, show_default=True,
              callback=_positive,
              help="Longest wait for a job to end or a receipt to expire, in seconds.")
@FORMAT_OPTION
def certify_command(profile_ref: str, binding_id: str, environment: str, level: Level,
                    registry: Path, artifacts_url: str | None, out: Path | None,
                    retention_delay: float, concurrency: int, max_wait: float,
                    fmt: str) -> None:
    """Test each claim of PROFILE (id@version) against the binding's receiver.

    Each case tests one claim of the profile with synthetic rows, inside the sandbox resource
    the binding's certification_scope names: key retention, key bound to the payload,
    concurrent duplicates, receipt TTL, read-after-write query, operation duration and clock
    skew (level static runs none of them: it sends no request). A case is PASS, FAIL or
    UNVERIFIED, never PASS without evidence. The dpone.rest_sink_certification.v1 artifact is
    published content-addressed into the artifact store and written under
    <registry>/certifications/, where `dpone check` reads it. Exit 0 when no case failed, 1
    when one did (its claims are named), 2 on a usage error or a run the binding does not
    allow, 3 when the credential or the artifact store is unavailable.
    """

    def body() -> int:
        from dpone.executor.certify import (  # noqa: PLC0415 - loads the transport
            Options,
            registry_directory,
        )

        options = Options(retention_delay_s=retention_delay, concurrency=concurrency,
                          max_wait_s=max_wait)
        words = _words(profile_ref, binding_id, environment, registry, artifacts_url, out,
                       options)
        certification, subject = _run(profile_ref, binding_id, environment, level, registry,
                                      options, progress=fmt == "text")
        key, digest = _publish(certification, registry, environment, artifacts_url)
        path = _write(certification, out or registry_directory(registry))
        if fmt == "json":
            emit_json(certification)
        else:
            click.echo(_text(certification, key, digest, path))
            click.echo("next: " + _next(certification, subject, words))
        return 1 if certification.result == "FAIL" else 0

    run_guarded(fmt, body)


def _run(profile_ref: str, binding_id: str, environment: str, level: Level, registry: Path,
         options: Options, *, progress: bool) -> tuple[SinkCertification, CertificationSubject]:
    from dpone.cli._progress import Progress  # noqa: PLC0415
    from dpone.compiler.certification_subject import (  # noqa: PLC0415 - the compiler
        load_certification_subject,
    )
    from dpone.executor.certify import certification_transport, certify  # noqa: PLC0415
    from dpone.executor.transport import EnvironmentCredentialResolver  # noqa: PLC0415

    subject = load_certification_subject(registry, profile_ref, binding_id, environment, level)
    bar = Progress(f"certify {profile_ref}", "case") if progress else None
    done: list[object] = []

    def tick(case: object) -> None:
        done.append(case)
        if bar is not None:
            bar(len(done), len(CASES))

    try:
        if level == "static":
            return certify(subject, level, None, options=options, progress=tick), subject
        credential = EnvironmentCredentialResolver().resolve(subject.binding)
        secrets = tuple(secret.reveal() for secret in credential.secrets())
        with certification_transport(subject, credential, options) as transport:
            return certify(subject, level, transport, options=options, redact=secrets,
                           progress=tick), subject
    finally:
        if bar is not None:
            bar.close()


def _publish(certification: SinkCertification, registry: Path, environment: str,
             artifacts_url: str | None) -> tuple[str, str]:
    from dpone.artifacts import open_artifact_store  # noqa: PLC0415
    from dpone.cli._environment import run_control_plane  # noqa: PLC0415
    from dpone.contracts import content_digest  # noqa: PLC0415
    from dpone.executor.certify import artifact_key, canonical_document  # noqa: PLC0415

    plane = run_control_plane(registry, environment, journal=None, artifacts=artifacts_url,
                              plans=None)
    canonical = canonical_document(certification)
    key = artifact_key(canonical)
    open_artifact_store(plane.artifacts).put_bytes(key, canonical)
    return key, content_digest(canonical)


def _write(certification: SinkCertification, directory: Path) -> Path:
    """The certification as pretty JSON (keys sorted) at its registry path, replaced whole."""
    from dpone.executor.certify import registry_file  # noqa: PLC0415

    path = registry_file(directory, certification)
    text = json.dumps(certification.model_dump(mode="json", by_alias=True), indent=2,
                      sort_keys=True, ensure_ascii=False) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".certification-")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except OSError as failure:
        raise DponeError(code="output.unwritable", message=f"cannot write {path}: "
                         f"{failure.strerror or type(failure).__name__}",
                         details={"path": str(path)}) from None
    return path


def _text(certification: SinkCertification, key: str, digest: str, path: Path) -> str:
    head = (f"certified {certification.profile} through {certification.binding} in "
            f"{certification.environment} at {certification.level} (sandbox resource "
            f"{certification.sandbox_resource}): {certification.result}")
    rows = [(case.case, case.claim, case.verdict, case.reason) for case in certification.cases]
    lines = [head, text_table(("case", "claim", "verdict", "reason"), rows, ())]
    failed = [case for case in certification.cases if case.verdict == "FAIL"]
    if failed:
        lines.append("the receiver contradicts these claims of the profile:")
        lines += [f"  {case.case}: {case.claim}" for case in failed]
    lines += [f"  artifact  {key}", f"  digest    {digest}", f"  file      {path}"]
    return "\n".join(lines)


def _words(profile_ref: str, binding_id: str, environment: str, registry: Path,
           artifacts_url: str | None, out: Path | None, options: Options) -> list[str]:
    """The command's options (without --level) as a printed command repeats them."""
    words = [profile_ref, "--binding", binding_id, "--environment", environment,
             "--registry", str(registry)]
    if artifacts_url is not None:
        words += ["--artifacts", artifacts_url]
    if out is not None:
        words += ["--out", str(out)]
    given: list[tuple[str, float | int, float | int]] = [
        ("--retention-delay", options.retention_delay_s, RETENTION_DELAY_S),
        ("--concurrency", options.concurrency, CONCURRENCY),
        ("--max-wait", options.max_wait_s, MAX_WAIT_S)]
    for name, value, default in given:
        if value != default:
            words += [name, f"{value:g}"]
    return words


def _next(certification: SinkCertification, subject: CertificationSubject,
          words: list[str]) -> str:
    again = command("profile", "certify", *words, "--level", certification.level)
    if certification.result == "FAIL":
        return (f"fix the receiver, or state what it does in a new version of profiles/"
                f"{certification.profile}.yaml; then `{again}`")
    if certification.result == "UNVERIFIED":
        return (f"each UNVERIFIED case says what it could not test (a receipt TTL is observed "
                f"only within --max-wait); when it can be tested, `{again}`")
    higher = [level for level in LEVEL_ORDER
              if LEVEL_ORDER.index(level) > LEVEL_ORDER.index(certification.level)
              and level in subject.scope.levels]
    if higher:
        return command("profile", "certify", *words, "--level", higher[0])
    return (f"keep the certification file in the registry: `dpone check` accepts plans of "
            f"{certification.profile} through {certification.binding} where "
            f"{certification.environment} requires {certification.level}")
