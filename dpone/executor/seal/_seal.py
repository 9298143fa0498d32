"""seal_all: one frozen parent + one compiled plan -> every child sealed and published."""

from __future__ import annotations

import collections
import contextvars
import hashlib
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa

import dpone
from dpone.codecs import codec_libraries
from dpone.contracts import DponeError, content_digest
from dpone.contracts.children import ChildDescriptor, ChildPlan, DaySlice
from dpone.contracts.identity import parent_plan_digest
from dpone.contracts.plan import PLANNER_ALGORITHM_VERSION, RestDeliveryPlan
from dpone.contracts.ports import AdoptsFiles, ArtifactRef, ImmutableArtifactPort
from dpone.contracts.sealed import (
    PayloadCodec,
    PayloadDocument,
    PayloadLineage,
    SealedChild,
    SealedTopology,
)
from dpone.contracts.source_parent import SourceParent
from dpone.executor.seal import _request
from dpone.executor.seal._names import filename, payload_extension, payload_key
from dpone.executor.seal._oracle import SealingOracle, Spooled, read_spool
from dpone.executor.seal._payload import PayloadEncoder
from dpone.executor.source import MappedParent, bounded_memory_pool
from dpone.observability import tracing
from dpone.plans import Measured, SizeOracle, child_plan_digest, plan_children, verify_coverage

Progress = Callable[[int, int], None]
PUBLISH_THREADS = 4
"""Children published at once. A child's publication is mostly waiting (fsync, the network)
with the GIL released, so a few overlap well; results, progress and the topology stay in child
order, and every child's bytes and documents are the same as when published one by one."""


def _file_digest(path: Path) -> str:
    with path.open("rb") as handle:
        return "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()


def _check_digest(parent: SourceParent, path: Path, digest: Future[str]) -> None:
    """Refuse the parent file unless it hashed to the parent's digest."""
    if digest.result() != parent.artifact.digest:
        raise DponeError(code="artifacts.unavailable",
                         message=f"{path} does not hash to the parent digest "
                                 f"{parent.artifact.digest}",
                         details={"key": parent.artifact.key})


def _mapped_table(parent: SourceParent, path: Path) -> MappedParent:
    """The memory-mapped parent table, after checking its row count against the document."""
    mapped = MappedParent(path)
    table = mapped.table
    if table.num_rows != parent.row_count:
        raise DponeError(code="artifacts.unavailable",
                         message=f"the parent file holds {table.num_rows} rows, its document "
                                 f"{parent.row_count}", details={"key": parent.artifact.key})
    return mapped


class _Releasing:
    """The sealer's oracle for the planner; after each estimate (string lengths of an interval)
    and each exact measurement (one encode of an interval) the parent's pages read so far leave
    the process's resident memory."""

    def __init__(self, oracle: SealingOracle, parent: MappedParent) -> None:
        self._oracle = oracle
        self._parent = parent

    def estimate(self, first_row: int, row_count: int) -> Measured:
        estimated = self._oracle.estimate(first_row, row_count)
        self._parent.release()
        return estimated

    def measure(self, first_row: int, row_count: int) -> Measured:
        measured = self._oracle.measure(first_row, row_count)
        self._parent.release()
        return measured


def _plan(plan: RestDeliveryPlan, parent: SourceParent, oracle: SizeOracle) -> ChildPlan:
    """The children of ``parent`` (nothing sealed yet); refuses a plan pinned to another
    planner version, or a boundary over the plan's child budget (``limits.max_children``)."""
    if plan.planner_algorithm_version != PLANNER_ALGORITHM_VERSION:
        raise DponeError(code="contract.semantic_invalid",
                         message=f"the plan pins planner {plan.planner_algorithm_version}; this "
                                 f"dpone plans new boundaries with {PLANNER_ALGORITHM_VERSION}",
                         hint="Recompile the workload (`dpone plan`) and deliver the new plan "
                              "digest; admitted deliveries resume without re-planning.")
    days = [DaySlice(day=entry.date, first_row=entry.first_row, row_count=entry.row_count)
            for entry in parent.scope_index]
    boundary = parent.boundary
    try:
        children = plan_children(boundary_from=boundary.from_date, boundary_to=boundary.to_date,
                                 days=days, total_rows=parent.row_count,
                                 limits=plan.effective_limits,
                                 mutation_kind=plan.source_boundary.mutation_kind, oracle=oracle)
        verify_coverage(children, days, parent.row_count, boundary.from_date, boundary.to_date)
    except ValueError as error:
        raise DponeError(code="input.invalid_argument",
                         message=f"the parent boundary cannot be planned: {error}") from error
    return children


class _Sealer:
    def __init__(self, plan: RestDeliveryPlan, plan_digest: str, parent: SourceParent,
                 table: pa.Table, artifacts: ImmutableArtifactPort, scratch: Path) -> None:
        self.plan = plan
        self.plan_digest = plan_digest
        self.parent = parent
        self.artifacts = artifacts
        profile = plan.profile.snapshot
        self.payload = profile.request.body.payload_format
        self.codec = profile.codec
        self.extension = payload_extension(self.payload)
        self.multipart = profile.request.body.type == "multipart_file"
        self.encoder = PayloadEncoder(table, plan.mapping, self.payload, self.codec)
        self.oracle = SealingOracle(
            self.encoder, table, _request.envelope_overhead(plan, parent, self.extension),
            scratch)

    def spooled(self, child: ChildDescriptor) -> Spooled:
        """The spool of the payload the planner measured (measured now if it never was).

        Called from one thread only: the oracle is not thread-safe.
        """
        spooled = self.oracle.take(child.first_row, child.row_count)
        if spooled is None:  # the planner measures every child; spool it if it ever did not
            self.oracle.measure(child.first_row, child.row_count)
            spooled = self.oracle.take(child.first_row, child.row_count)
        if spooled is None:
            raise DponeError(code="artifacts.unavailable",
                             message=f"child {child.ordinal}: its payload was not spooled")
        return spooled

    def _publish_payload(self, child: ChildDescriptor, spooled: Spooled) -> ArtifactRef:
        """Publish the spooled payload: adopted as written by a local store, streamed into any
        other; never re-encoded."""
        key = payload_key(spooled.digest, self.extension)
        if isinstance(self.artifacts, AdoptsFiles):
            ref = self.artifacts.adopt_file(key, spooled.path, spooled.digest,
                                            spooled.sealed_bytes)
        else:
            ref = self.artifacts.put_stream(key, read_spool(spooled))
        if ref.digest != spooled.digest or ref.size != spooled.sealed_bytes \
                or spooled.decoded_bytes != child.decoded_bytes:
            raise DponeError(code="artifacts.unavailable",
                             message=f"child {child.ordinal}: the published payload differs "
                                     "from the measured one", details={"key": ref.key})
        return ref

    def seal(self, child: ChildDescriptor, spooled: Spooled) -> SealedChild:
        """Publish one child's payload and document (thread-safe: touches no shared state), in
        a span ``dpone.seal.child``."""
        with tracing.span("dpone.seal.child", plan_digest=self.plan_digest,
                          ordinal=child.ordinal, rows=child.row_count,
                          wire_bytes=child.wire_bytes):
            return self._seal(child, spooled)

    def _seal(self, child: ChildDescriptor, spooled: Spooled) -> SealedChild:
        keys = _request.child_keys(self.plan, self.parent, child)
        values = _request.symbols(self.plan, keys, child.scope_from, child.scope_to)
        ref = self._publish_payload(child, spooled)
        envelope = None
        if self.multipart:
            envelope = _request.envelope(
                self.plan, values, filename(keys.receiver_mutation_key, self.extension),
                ref.size, ref.digest, lambda: self.artifacts.open_stream(ref.key))
        rendered, identities = _request.render_child(self.plan, keys, values, envelope,
                                                     ref.size, ref.digest)
        if rendered.content_length != child.wire_bytes:
            raise DponeError(code="contract.semantic_invalid",
                             message=f"child {child.ordinal}: the request body is "
                                     f"{rendered.content_length} bytes, planned "
                                     f"{child.wire_bytes}")
        document = PayloadDocument(
            producer=f"dpone {dpone.__version__}",
            child=child,
            lineage=PayloadLineage(parent_digest=self.parent.artifact.digest,
                                   parent_key=self.parent.artifact.key,
                                   plan_digest=self.plan_digest,
                                   logical_route_id=self.plan.logical_route_id,
                                   environment=self.plan.environment.ref),
            payload=ref, decoded_bytes=child.decoded_bytes, wire_bytes=child.wire_bytes,
            codec=PayloadCodec(payload=self.payload, codec=self.codec,
                               libraries=codec_libraries()),
            identities=identities, request=rendered)
        data = document.canonical_bytes()
        document_ref = self.artifacts.put_bytes(payload_key(content_digest(data), "json"), data)
        return SealedChild(descriptor=child, payload=ref, document=document_ref,
                           identities=identities, request=rendered)


def _seal_children(sealer: _Sealer, children: Sequence[ChildDescriptor],
                   progress: Progress | None, release: Callable[[], None]) -> list[SealedChild]:
    """Every child sealed, in order, up to :data:`PUBLISH_THREADS` at once; ``release()`` after
    each child is encoded drops the parent pages read for it from resident memory.

    The first failure in child order is raised, as if published one by one (children after it
    may be published already: harmless, artifacts are immutable and content-addressed).
    """
    sealed: list[SealedChild] = []
    pending: collections.deque[Future[SealedChild]] = collections.deque()

    def finish_oldest() -> None:
        sealed.append(pending.popleft().result())
        if progress is not None:
            progress(len(sealed), len(children))

    with ThreadPoolExecutor(max_workers=PUBLISH_THREADS,
                            thread_name_prefix="dpone-seal") as pool:
        try:
            for child in children:
                # In the caller's context: each child's span is a child of the seal stage's.
                pending.append(pool.submit(contextvars.copy_context().run, sealer.seal, child,
                                           sealer.spooled(child)))
                release()
                if len(pending) >= 2 * PUBLISH_THREADS:
                    finish_oldest()
            while pending:
                finish_oldest()
        except BaseException:
            for future in pending:
                future.cancel()
            raise
    return sealed


def seal_all(plan: RestDeliveryPlan, plan_digest: str, parent: SourceParent,
             parent_bytes_path: Path, artifacts: ImmutableArtifactPort, *,
             progress: Progress | None = None,
             scratch_dir: Path | None = None) -> SealedTopology:
    """Plan every child of the frozen ``parent`` and seal and publish each one.

    Reads only the parent's IPC file at ``parent_bytes_path`` (memory-mapped; hashed while the
    planner works and checked against ``parent.artifact.digest`` before anything is published).
    Payload bytes go create-if-absent to ``payloads/sha256/<hex>.<ext>`` and each child's
    ``dpone.rest_payload.v1`` document to ``payloads/sha256/<hex of the document>.json``.
    ``progress(done, total)`` is called after each sealed child. Deterministic: the same parent,
    plan and codec libraries give the same bytes, digests and ``parent_plan_digest``.

    Each payload is encoded and compressed once, while the planner measures it (row texts are
    encoded once per block of parent rows and sliced per interval); the sealed bytes of each
    wait in a spool file of their own (written, hashed and flushed behind the planner) under a
    temporary directory in ``scratch_dir`` (the system's temporary directory by default), which
    a local store on the same filesystem adopts as the payload artifact (no copy, no second
    hash); the directory is deleted when sealing ends. Up to :data:`PUBLISH_THREADS` children
    are published at once.
    """
    bounded_memory_pool()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpone-parent-hash") as hashing, \
            tempfile.TemporaryDirectory(prefix="dpone-seal-", dir=scratch_dir) as scratch:
        # The parent file is hashed while the planner reads it; nothing is published before
        # the digest is checked.
        digest = hashing.submit(_file_digest, parent_bytes_path)
        mapped = _mapped_table(parent, parent_bytes_path)
        sealer = _Sealer(plan, plan_digest, parent, mapped.table, artifacts, Path(scratch))
        try:
            children = _plan(plan, parent, _Releasing(sealer.oracle, mapped))
            _check_digest(parent, parent_bytes_path, digest)
            sealer.oracle.discard_except({(child.first_row, child.row_count)
                                          for child in children.children})
            sealed = _seal_children(sealer, children.children, progress, mapped.release)
        finally:
            sealer.oracle.close()
            mapped.release()
    topology_digest = parent_plan_digest(
        frozen_parent_digest=parent.artifact.digest, compiled_plan_digest=plan_digest,
        profile_contract_digest=plan.profile.profile_contract_digest,
        **child_plan_digest(children))
    return SealedTopology(
        parent_digest=parent.artifact.digest, plan_digest=plan_digest,
        profile_contract_digest=plan.profile.profile_contract_digest,
        planner_algorithm_version=children.planner_algorithm_version,
        parent_plan_digest=topology_digest, total_rows=parent.row_count,
        children=tuple(sealed), coverage=children.coverage)
