"""`dpone preview`: the requests a plan sends for an interval, offline, credentials as references.

The boundary is frozen and sealed exactly as `dpone deliver` seals it, into a scratch artifact
store removed afterwards (or into a local ``--artifacts`` store that already holds it: sealing is
create-if-absent, so a sealed parent is read, not rewritten). Each child's request is rendered by
:mod:`dpone.executor.preview`. Nothing is sent, no credential is resolved, no journal is opened,
and a remote artifact store is refused (reading it would be network I/O).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import shlex
import tempfile
from collections.abc import Sequence
from pathlib import Path

import click

from dpone import __version__
from dpone.artifacts import open_artifact_store
from dpone.cli._environment import registry_defaults
from dpone.cli._hints import command
from dpone.cli._inputs import boundary_options, load_plan, sealed_boundary
from dpone.cli._output import emit_json, run_guarded
from dpone.contracts import DponeError
from dpone.contracts.documents import Interval, RequestPreview

_TEXT_BODY_BYTES = 1 << 20


def _refuse(message: str, hint: str) -> DponeError:
    return DponeError(code="input.invalid_argument", message=message, hint=hint)


def _body_file(directory: Path | None, ordinal: int) -> str:
    name = f"child-{ordinal:04d}.body"
    return str(directory / name) if directory is not None else name


def _text(preview: RequestPreview) -> str:
    lines = [f"preview {preview.boundary.render()}: {len(preview.requests)} of "
             f"{preview.children_total} request(s) to {preview.authority} "
             f"({preview.profile}, binding {preview.binding}); nothing sent"]
    for request in preview.requests:
        scope = f"[{request.scope.from_date}, {request.scope.to_date})"
        if request.scope.parts > 1:
            scope += f" part {request.scope.part}/{request.scope.parts}"
        lines += ["", f"child {request.ordinal} {scope}: {request.rows} rows",
                  f"  {request.method} {request.url}"]
        width = max(len(h.name) for h in request.headers)
        lines += [f"  {h.name.ljust(width)}: {h.value}" for h in request.headers]
        encoding = f", {request.content_encoding}-compressed" \
            if request.content_encoding else ""
        lines += [f"  body          {request.body_bytes} bytes {request.body_digest}",
                  f"  payload       {request.decoded_bytes} decoded / {request.wire_bytes} wire "
                  f"bytes {request.payload_digest}{encoding}",
                  f"  delivery key  {request.keys.delivery_key}",
                  f"  receiver key  {request.keys.receiver_mutation_key} "
                  f"({request.keys.fence}"
                  + (f", in the {request.keys.carried_in})" if request.keys.carried_in else ")"),
                  f"  accepted      {', '.join(map(str, request.receipt.accepted_statuses))}"
                  + (f"; receipt {', '.join(request.receipt.fields)}"
                     if request.receipt.fields else "")
                  + (f"; polled by {request.receipt.poll}" if request.receipt.poll else "")]
        for record in request.sample or ():
            lines.append(f"  sample        {json.dumps(record, ensure_ascii=False)}")
    return "\n".join(lines)


def _curl(preview: RequestPreview, body_dir: Path | None) -> str:
    lines = ["# dpone preview: the credential is read from its variable when curl runs"]
    if body_dir is None:
        lines.append("# add --body-dir DIR to write each request's exact body where "
                     "--data-binary reads it")
    for request in preview.requests:
        lines += [f"# child {request.ordinal}: {request.rows} rows, body {request.body_digest}",
                  f"curl -X {request.method} {shlex.quote(request.url)}"]
        for header in request.headers:
            if header.name.lower() in {"host", "content-length", "connection"}:
                continue  # curl sends its own
            value = shlex.quote(f"{header.name}: {header.value}")
            if header.credential:
                value = _credential_argument(header.name, header.value)
            lines[-1] += f" \\\n  -H {value}"
        lines[-1] += f" \\\n  --data-binary @{shlex.quote(_body_file(body_dir, request.ordinal))}"
    return "\n".join(lines)


def _credential_argument(name: str, reference: str) -> str:
    """A ``-H`` argument that reads an ``env`` credential from its variable at run time."""
    variable = reference.split(" from env ", 1)[1].rstrip(">") if " from env " in reference \
        else None
    if variable is None:
        return shlex.quote(f"{name}: {reference}")
    scheme = {"Authorization": "Bearer "}.get(name, "")
    if reference.startswith("<basic"):
        scheme = "Basic "
    return f"\"{name}: {scheme}${variable}\""


def _har(preview: RequestPreview, bodies: Sequence[bytes]) -> dict[str, object]:
    started = dt.datetime.combine(preview.boundary.from_date, dt.time(),
                                  tzinfo=dt.UTC).isoformat()
    entries = []
    for request, body in zip(preview.requests, bodies, strict=True):
        try:
            text = body.decode("utf-8") if len(body) <= _TEXT_BODY_BYTES else ""
        except UnicodeDecodeError:
            text = ""
        query = request.url.partition("?")[2]
        entries.append({
            "startedDateTime": started, "time": 0,
            "comment": f"child {request.ordinal}: {request.rows} rows; body "
                       f"{request.body_digest}; not sent (dpone preview)",
            "request": {
                "method": request.method, "url": request.url, "httpVersion": "HTTP/1.1",
                "cookies": [],
                "headers": [{"name": h.name, "value": h.value} for h in request.headers],
                "queryString": [{"name": k, "value": v} for k, _, v in
                                (pair.partition("=") for pair in query.split("&") if pair)],
                "postData": {"mimeType": request.content_type, "text": text,
                             "comment": f"{request.body_bytes} bytes {request.body_digest}"
                                        + ("" if text else ": binary or large, not inlined")},
                "headersSize": -1, "bodySize": request.body_bytes},
            "response": {"status": 0, "statusText": "", "httpVersion": "HTTP/1.1",
                         "cookies": [], "headers": [],
                         "content": {"size": 0, "mimeType": "x-unknown"},
                         "redirectURL": "", "headersSize": -1, "bodySize": -1},
            "cache": {}, "timings": {"send": 0, "wait": 0, "receive": 0}})
    return {"log": {"version": "1.2", "creator": {"name": "dpone", "version": __version__},
                    "entries": entries}}


@click.command()
@boundary_options
@click.option("--child", "child", type=click.IntRange(1), default=None,
              help="Show only the child with this ordinal.")
@click.option("--sample", "sample", type=click.IntRange(0, 1000), default=0,
              help="Also show the first K decoded records of each payload (opt-in: rows are "
                   "data).")
@click.option("--body-dir", "body_dir", type=click.Path(path_type=Path, file_okay=False),
              default=None, help="Write each request's exact body to DIR/child-NNNN.body "
                                 "(what the curl format sends).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "curl", "har"]),
              default="text", show_default=True,
              help="text for people, json (dpone.request_preview.v1), curl commands, or HAR "
                   "1.2 for browser dev tools and API clients.")
def preview(target: str, registry: Path, interval_start: dt.datetime, interval_end: dt.datetime,
            artifacts_url: str | None, plans: Path | None, child: int | None, sample: int,
            body_dir: Path | None, fmt: str) -> None:
    """Show the requests a plan sends for an interval, offline: credentials as references.

    Method, URL, every header as sent (the credential shown as its reference), the keys and
    where the request carries them, the receipt fields, content type and encoding, rows,
    decoded and wire bytes, the payload and body digests. Nothing is sent, no credential is
    read and nothing is left behind."""
    from dpone.executor.preview import render_child  # noqa: PLC0415 - loads the sealer

    def body() -> int:
        if artifacts_url is not None and "://" in artifacts_url \
                and not artifacts_url.startswith("file://"):
            raise _refuse(f"--artifacts {artifacts_url} is a remote store: a preview reads no "
                          "network", "Name a local directory (or leave --artifacts out: the "
                                     "boundary is sealed into a scratch directory).")
        plan, digest = load_plan(target, registry, plans or registry_defaults(registry)[2])
        with contextlib.ExitStack() as stack:
            where = artifacts_url or stack.enter_context(
                tempfile.TemporaryDirectory(prefix="dpone-preview-"))
            store = open_artifact_store(where)
            sealed = sealed_boundary(plan, digest, registry, interval_start.date(),
                                     interval_end.date(), store)
            children = sealed.topology.children
            if child is not None:
                children = tuple(c for c in children if c.descriptor.ordinal == child)
                if not children:
                    raise _refuse(f"--child {child}: the boundary has "
                                  f"{len(sealed.topology.children)} child(ren)",
                                  f"Name an ordinal from 1 to {len(sealed.topology.children)}.")
            rendered = [render_child(plan, c, store, sample=sample) for c in children]
        if body_dir is not None:
            body_dir.mkdir(parents=True, exist_ok=True)
            for item in rendered:
                Path(_body_file(body_dir, item.request.ordinal)).write_bytes(item.body)
        document = RequestPreview(
            plan_digest=digest, parent_digest=sealed.topology.parent_digest,
            boundary=Interval.of(interval_start.date(), interval_end.date()),
            profile=plan.profile.ref, binding=plan.binding.ref,
            authority=plan.binding.snapshot.authority,
            children_total=len(sealed.topology.children),
            requests=tuple(item.request for item in rendered))
        if fmt == "json":
            emit_json(document)
        elif fmt == "curl":
            click.echo(_curl(document, body_dir))
        elif fmt == "har":
            click.echo(json.dumps(_har(document, [i.body for i in rendered]), indent=2,
                                  ensure_ascii=False))
        else:
            click.echo(_text(document))
            click.echo("next: " + command(
                "deliver", target, "--registry", str(registry), "--interval-start",
                f"{interval_start:%Y-%m-%d}", "--interval-end", f"{interval_end:%Y-%m-%d}"))
        return 0

    run_guarded("json" if fmt == "json" else "text", body)

