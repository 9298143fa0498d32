"""`dpone preview`: the requests a plan sends for an interval, offline, credentials as references.

The boundary is frozen and sealed exactly as `dpone deliver` seals it, into a scratch artifact
store removed afterwards. With ``--artifacts`` (a local store, where `dpone seal` sealed it) the
sealed boundary is read from that store and nothing is written into it
(:class:`~dpone.artifacts.ReadThroughStore`): what it lacks, because the source changed since or
it was never sealed there, is sealed into the scratch store, and a warning says so. Each child's
request is rendered by :mod:`dpone.executor.preview`. Nothing is sent, no credential is resolved,
no journal is opened, and a remote artifact store is refused (reading it would be network I/O).
A PostgreSQL source is still read, as `dpone seal` reads it: the source is what is previewed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click

from dpone.artifacts import ReadThroughStore, open_artifact_store
from dpone.cli._environment import registry_defaults
from dpone.cli._hints import command
from dpone.cli._inputs import boundary_options, load_plan, sealed_boundary
from dpone.cli._output import emit_json, invalid_argument, run_guarded
from dpone.cli._preview_formats import curl, har, text
from dpone.contracts.documents import Interval, RequestPreview
from dpone.contracts.ports import ImmutableArtifactPort
from dpone.contracts.sealed import SealedChild


@dataclass(frozen=True)
class _Stores:
    """Where the preview seals: ``store``; ``named`` is the store --artifacts names (if any),
    ``read_through`` the view that keeps it unchanged."""

    store: ImmutableArtifactPort
    named: ImmutableArtifactPort | None = None
    read_through: ReadThroughStore | None = None


@contextlib.contextmanager
def _stores(artifacts_url: str | None) -> Iterator[_Stores]:
    """A scratch store, read through to the --artifacts store when one is named; the scratch
    directory is removed when the preview ends."""
    if artifacts_url is not None and "://" in artifacts_url \
            and not artifacts_url.startswith("file://"):
        raise invalid_argument(f"--artifacts {artifacts_url} is a remote store: a preview reads no "
                      "network", "Name a local directory (or leave --artifacts out: the "
                                 "boundary is sealed into a scratch directory).")
    with tempfile.TemporaryDirectory(prefix="dpone-preview-") as scratch:
        if artifacts_url is None:
            yield _Stores(open_artifact_store(str(Path(scratch) / "artifacts")))
            return
        named = open_artifact_store(artifacts_url)
        overlay = ReadThroughStore.over(named, Path(scratch) / "artifacts")
        yield _Stores(overlay, named, overlay)


def _chosen(children: tuple[SealedChild, ...], child: int | None) -> tuple[SealedChild, ...]:
    if child is None:
        return children
    chosen = tuple(c for c in children if c.descriptor.ordinal == child)
    if not chosen:
        raise invalid_argument(f"--child {child}: the boundary has {len(children)} child(ren)",
                      f"Name an ordinal from 1 to {len(children)}." if children
                      else "The boundary is empty: there is no request to preview.")
    return chosen


def _payload_files(stores: _Stores, children: tuple[SealedChild, ...]) -> dict[int, str]:
    """The files in the named store that hold a single-body child's exact body (its payload),
    for curl to read: only what the store already held (the scratch store is removed)."""
    if stores.named is None or stores.read_through is None:
        return {}
    written = set(stores.read_through.written)
    files = {}
    for sealed in children:
        key = sealed.payload.key
        local = stores.named.local_file(key) if key not in written else None
        if sealed.request.multipart_boundary is None and local is not None:
            files[sealed.descriptor.ordinal] = str(local)
    return files


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
    read and nothing is left behind: the boundary is sealed into a scratch directory, or read
    from a local --artifacts store where `dpone seal` sealed it (never written to)."""
    from dpone.executor.preview import render_child  # noqa: PLC0415 - loads the sealer

    def body() -> int:
        plan, digest = load_plan(target, registry, plans or registry_defaults(registry)[2])
        with _stores(artifacts_url) as stores:
            sealed = sealed_boundary(plan, digest, registry, interval_start.date(),
                                     interval_end.date(), stores.store)
            if stores.read_through is not None and stores.read_through.written:
                click.echo(f"warning: --artifacts {artifacts_url} does not hold this boundary "
                           f"as the source is now ({len(stores.read_through.written)} "
                           "artifact(s) sealed into a scratch directory): the source changed "
                           "since it was sealed there, or it never was; the preview shows "
                           "what `dpone deliver` sends now", err=True)
            children = _chosen(sealed.topology.children, child)
            rendered = [render_child(plan, c, stores.store, sample=sample) for c in children]
            bodies = _payload_files(stores, children)
            if body_dir is not None:
                body_dir.mkdir(parents=True, exist_ok=True)
                for item in rendered:
                    path = body_dir / f"child-{item.request.ordinal:04d}.body"
                    with path.open("wb") as handle:
                        handle.writelines(item.body)
                    bodies[item.request.ordinal] = str(path)
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
                click.echo(curl(document, plan.binding.snapshot, bodies))
            elif fmt == "har":
                click.echo(har(document, [item.body for item in rendered]))
            else:
                click.echo(text(document))
                given = [*(["--artifacts", artifacts_url] if artifacts_url is not None else []),
                         *(["--plans", str(plans)] if plans is not None else [])]
                click.echo("next: " + command(
                    "deliver", target, "--registry", str(registry), "--interval-start",
                    f"{interval_start:%Y-%m-%d}", "--interval-end",
                    f"{interval_end:%Y-%m-%d}", *given))
        return 0

    run_guarded("json" if fmt == "json" else "text", body)
