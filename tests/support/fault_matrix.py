"""The process-cut fault matrix: one cell is one `dpone deliver` killed with SIGKILL at one cut
point (``DPONE_TEST_CUT``), possibly under a receiver fault, then recovered.

Recovery runs in other processes, from a fresh working directory, on the same journal, artifact
store and plan store, with only what the CLI itself names:

1. discovery: ``delivery list`` finds the lost run's delivery (none: it died before admission,
   and the same ``deliver`` runs again);
2. restart: ``delivery resume --apply --wait``, repeated while it is refused with
   ``journal.lease_held`` (the lost run's lease; the wait is the cell's ``recovery_wait_s``);
3. operator: while the delivery is not complete, ``delivery inspect`` and the commands its next
   actions map to: ``reconcile_delivery_key`` -> ``delivery reconcile --apply`` with the receiver
   console's word (an async job found by its filename: ``--receipt-id``; otherwise an
   ``dpone.operator_evidence.v1`` file built from the receiver's ledger), then ``delivery resume
   --apply --wait``.

The receiver console is the mock receiver's own state (its ledger and jobs), read in-process.
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.context
import os
import re
import secrets
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import psycopg
from psycopg import sql

from dpone import __version__
from dpone.cli._inputs import close_quietly, open_existing_journal, stored_plan
from dpone.contracts.design import load_state_contract
from dpone.contracts.documents import (
    MatrixCell,
    MatrixChild,
    MatrixCommand,
    MatrixTotals,
    RemoteEffectFaultMatrix,
)
from dpone.contracts.journal import ChildOperation
from dpone.contracts.state import StateName
from dpone.executor.cuts import CUT_ENV, PASSAGE_PREFIX, TRACE
from dpone.executor.seal import payload_filename
from dpone.receiver import ReceiverConfig, ReceiverThread
from support.cli import TOKEN, TOKEN_ENV, bind_registry
from support.common import ROOT

WORKLOADS: Final = {"sync_batch": "measurements_sync", "async_bulk_job": "measurements_async"}
ONE_CHILD: Final = ("2026-08-01", "2026-08-04")
"""One child in both families (the async example plans 3-day windows, the sync one 7-day)."""
TWO_CHILDREN: Final = ("2026-08-01", "2026-08-07")
"""Two async children (one sync child)."""
LEASE_TTL_S: Final = 4
"""The matrix environment's lease length: a lost run blocks recovery for about this long."""
LEASE_HEARTBEAT_S: Final = 1
MAX_OPERATOR_COMMANDS: Final = 3
LEASE_POLL_S: Final = 0.5
MAX_LEASE_WAIT_S: Final = 120.0
"""Past this the cell fails: a lease that outlives its TTL by this much was never released."""
COMMAND_TIMEOUT_S: Final = 180
RESUMING_ACTIONS: Final = frozenset({"resume_delivery", "poll_receipt", "verify_counters",
                                     "promote_checkpoint", "wait_for_mutation_lease"})
SUBMIT_PREFIX: Final = {"sync_batch": "/mock/v1/batches/", "async_bulk_job": "/mock/v1/dataset-jobs"}
POLL_PREFIX: Final = "/mock/v1/dataset-jobs/"


def _rule(fault: str, prefix: str, method: str = "POST", **params: object) -> dict[str, object]:
    return {"match": {"method": method, "path_prefix": prefix}, "fault": fault, **params}


def fault_rules(family: str, fault: str) -> list[dict[str, object]]:
    """The receiver's fault rules of ``fault`` for ``family`` (one firing each)."""
    submit = SUBMIT_PREFIX[family]
    return {
        "none": [],
        "commit_then_reset": [_rule("commit_then_drop", submit)],
        "throttle_429": [_rule("status", submit, status=429, retry_after=1)],
        "server_error_5xx": [_rule("status", submit, status=503, after_commit=True)],
        "receipt_expired": [_rule("expire_receipt", POLL_PREFIX, method="GET", status=410)],
    }[fault]


_FORKSERVER: list[multiprocessing.context.ForkServerContext] = []
_FORKSERVER_LOCK = threading.Lock()


def _forkserver() -> multiprocessing.context.ForkServerContext:
    """One process that has imported dpone's CLI and forks a fresh process per command: each
    command is its own OS process (its own memory, working directory, environment, exit or
    SIGKILL) without paying the CLI's import time again."""
    with _FORKSERVER_LOCK:
        if not _FORKSERVER:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["dpone.cli.main", "support.fault_matrix"])
            _FORKSERVER.append(context)
        return _FORKSERVER[0]


def _dpone_main(args: Sequence[str], cwd: str, env: Mapping[str, str], out: str,
                err: str) -> None:
    """In the forked process: ``dpone ARGS`` in ``cwd`` under ``env``, stdout and stderr to
    files; the process exits with the command's exit code (or dies by its signal)."""
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for fd, path in ((1, out), (2, err)):
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(handle, fd)
        os.close(handle)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.argv = ["dpone", *args]
    from dpone.cli.main import main  # noqa: PLC0415 - preloaded by the fork server
    code = 0
    try:
        main()
    except SystemExit as exited:
        code = exited.code if isinstance(exited.code, int) else (0 if exited.code is None else 1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


_STATUS_LOST: Final = 255
"""multiprocessing's exit code for a fork-server child whose status could not be read."""
_CUT_ANNOUNCED: Final = re.compile(r"^dpone: test cut \S+: killing process \d+$", re.MULTILINE)


def run_dpone_process(args: Sequence[str], cwd: Path,
                      env: Mapping[str, str]) -> tuple[int, str, str]:
    """``dpone ARGS`` as its own process; its exit code (-9 when SIGKILLed), stdout, stderr."""
    out, err = cwd / f".out-{threading.get_ident()}", cwd / f".err-{threading.get_ident()}"
    process = _forkserver().Process(target=_dpone_main,
                                    args=(list(args), str(cwd), dict(env), str(out), str(err)))
    process.start()
    process.join(COMMAND_TIMEOUT_S)
    if process.exitcode is None:
        process.kill()
        process.join()
    code = process.exitcode if process.exitcode is not None else -9
    texts = [path.read_text(encoding="utf-8") if path.exists() else "" for path in (out, err)]
    for path in (out, err):
        path.unlink(missing_ok=True)
    if code == _STATUS_LOST and _CUT_ANNOUNCED.search(texts[1]):
        # The fork server reports 255 when it lost a child's wait status; a child that
        # announced its cut on stderr and then left no status died by that cut's SIGKILL.
        code = -9
    return code, texts[0], texts[1]


@dataclass(frozen=True)
class CellSpec:
    dialect: str
    family: str
    cut: str
    fault: str = "none"
    interval: tuple[str, str] = ONE_CHILD

    @property
    def cell_id(self) -> str:
        size = "2ch" if self.interval == TWO_CHILDREN else "1ch"
        return f"{self.dialect}/{self.family}/{size}/{self.cut}/{self.fault}"


@dataclass
class Ran:
    record: MatrixCommand
    document: dict[str, Any]
    started: float
    stderr: str


def _code(document: Mapping[str, Any]) -> str | None:
    """A delivery result's status, or the code of its stop or of an error document."""
    for section in ("blocked", "stopped"):
        if isinstance(document.get(section), dict):
            return str(document[section]["code"])
    if document.get("schema") == "dpone.error.v1":
        return str(document.get("code"))
    status = document.get("status")
    return str(status) if status is not None else None


def _actions(document: Mapping[str, Any]) -> tuple[str, ...]:
    for section in ("blocked",):
        if isinstance(document.get(section), dict):
            return tuple(document[section].get("allowed_actions", ()))
    return tuple(document.get("next_actions", ()))


def _shown(args: Sequence[str], root: Path) -> tuple[str, ...]:
    """``args`` with the cell's directory shortened to ``$CELL`` and a URL's query dropped."""
    return tuple(arg.replace(str(root), "$CELL").split("?")[0] for arg in args)


def proven_outcomes() -> frozenset[str]:
    """Transitions that end an attempt with a proof that a next attempt is safe: the request
    provably never took effect (remote effect NONE_PROVEN), or a certified same-key replay."""
    contract = load_state_contract()
    return frozenset(
        listed.id for listed in contract.transitions.values()
        if contract.tuples[listed.target].remote_effect.value == "NONE_PROVEN"
        or listed.target == StateName.SUBMITTING_FENCED_REPLAY.value)


def orphan_outcomes() -> frozenset[str]:
    """Transitions that record an orphan MAY_ATTEMPT marker as an attempt: its ordinal is
    consumed and nothing is sent under it (found before an attempt, or covered by a
    reconciliation)."""
    return frozenset(listed.id for listed in load_state_contract().transitions.values()
                     if listed.trigger.evidence == "ORPHAN_MAY_ATTEMPT_MARKER_FOUND")


class Journals:
    """A fresh journal per cell: a SQLite file, or a new schema of the session's cluster."""

    def __init__(self, postgres_dsn: str) -> None:
        self.admin = postgres_dsn
        self.schemas: list[str] = []

    def url(self, dialect: str, root: Path) -> str:
        if dialect == "sqlite":
            return str(root / "journal" / "journal.sqlite3")
        schema = "fm_" + secrets.token_hex(6)
        with psycopg.connect(self.admin, autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        self.schemas.append(schema)
        separator = "&" if "?" in self.admin else "?"
        return f"{self.admin}{separator}options={quote(f'-c search_path={schema},public')}"

    def drop(self) -> None:
        with psycopg.connect(self.admin, autocommit=True) as admin:
            for schema in self.schemas:
                admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@dataclass
class Cell:
    """One cell: its receiver, registry, journal and stores under ``root``."""

    spec: CellSpec
    root: Path
    journal_url: str
    receiver: ReceiverThread
    registry: Path = field(init=False)
    commands: list[MatrixCommand] = field(default_factory=list)
    reconciled_absent: set[str] = field(default_factory=set)
    false_successes: int = 0

    def __post_init__(self) -> None:
        self.registry = bind_registry(self.root, self.receiver.base_url)
        environment = self.registry / "environments" / "local-dev.yaml"
        text = environment.read_text(encoding="utf-8")
        if "\nleases:" in text:
            lines = [line for line in text.splitlines() if not line.startswith("leases:")]
            lines.append(f"leases: {{ttl_s: {LEASE_TTL_S}, heartbeat_s: {LEASE_HEARTBEAT_S}}}")
            environment.write_text("\n".join(lines) + "\n", encoding="utf-8")

    # -- locations -----------------------------------------------------------------------------

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts"

    @property
    def plans(self) -> Path:
        return self.root / "plans"

    def _state(self) -> list[str]:
        return ["--journal", self.journal_url, "--artifacts", str(self.artifacts),
                "--plans", str(self.plans)]

    def deliver_args(self) -> list[str]:
        workload = self.registry / "workloads" / f"{WORKLOADS[self.spec.family]}.yaml"
        return ["deliver", str(workload), "--registry", str(self.registry),
                "--interval-start", self.spec.interval[0], "--interval-end", self.spec.interval[1],
                *self._state(), "--wait", "--format", "json"]

    def resume_args(self, parent_id: str) -> list[str]:
        return ["delivery", "resume", "--operation-id", parent_id, *self._state(), "--apply",
                "--wait", "--format", "json"]

    def inspect_args(self, parent_id: str) -> list[str]:
        return ["delivery", "inspect", "--operation-id", parent_id, "--journal", self.journal_url,
                "--plans", str(self.plans), "--format", "json"]

    # -- running commands ----------------------------------------------------------------------

    def run(self, role: str, args: Sequence[str], *, cwd: Path, cut: str | None = None) -> Ran:
        cwd.mkdir(parents=True, exist_ok=True)
        env = {key: value for key, value in os.environ.items() if key != CUT_ENV}
        env.update({"PYTHONPATH": str(ROOT), TOKEN_ENV: TOKEN, "NO_COLOR": "1"})
        if cut is not None:
            env[CUT_ENV] = cut
        started = time.monotonic()
        code, stdout, stderr = run_dpone_process(args, cwd, env)
        document: dict[str, Any] = json.loads(stdout) if stdout.strip() else {}
        command = " ".join(args[:2]) if args[0] == "delivery" else args[0]
        record = MatrixCommand(role=role, command=command,  # type: ignore[arg-type]
                               argv=_shown(args, self.root), exit_code=code,
                               status=_code(document), allowed_actions=_actions(document))
        self.commands.append(record)
        if code == 0 or document.get("status") == "completed":
            self._check_success(document)
        return Ran(record, document, started, stderr)

    def _check_success(self, document: Mapping[str, Any]) -> None:
        """A command that exited 0 or said ``completed``: if it claims the delivery complete
        while a sealed row is not applied exactly once, it is a false success."""
        if document.get("status") != "completed" and document.get("complete") is not True:
            return
        children = self.final_children()
        if any(child.rows_applied != child.rows_sealed or child.mutations != 1
               for child in children if child.rows_sealed):
            self.false_successes += 1

    # -- the receiver console ------------------------------------------------------------------

    def ledger_key(self, child: ChildOperation) -> str:
        """The key the receiver applies ``child`` under: its delivery key (sync batches) or
        its job's filename (async jobs)."""
        if self.spec.family == "sync_batch":
            return child.delivery_key
        (stored,) = (self.plans / "plans" / "sha256").glob("*.json")
        name = payload_filename(stored_plan(self.plans, f"sha256:{stored.stem}"),
                                child.receiver_mutation_key)
        assert name is not None
        return name

    def console_word(self, child: ChildOperation) -> list[str]:
        """What the operator found in the receiver's console for ``child``: a live job's id
        (``--receipt-id``), or an evidence file of what its ledger applied."""
        state = self.receiver.state
        key = self.ledger_key(child)
        if self.spec.family == "async_bulk_job":
            state.jobs.settle(state.now())
            job = state.jobs.by_filename(key)
            if job is not None and job.expired_status is None:
                return ["--receipt-id", job.job_id]
        rows = sum(m.rows for m in state.ledger.mutations if m.key == key)
        effect = "applied" if rows == child.row_count else "partially_applied" if rows else \
            "not_applied"
        if effect == "not_applied":
            self.reconciled_absent.add(child.operation_id)
        evidence = {"schema": "dpone.operator_evidence.v1", "effect": effect,
                    "accepted_rows": rows, "rejected_rows": 0,
                    "receiver_reference": f"mock-ledger:{key}",
                    "attested_by": "fault-matrix", "note": f"cell {self.spec.cell_id}"}
        path = self.root / "console" / f"evidence-{child.ordinal}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(evidence), encoding="utf-8")
        return ["--evidence", str(path)]

    # -- the journal at the end ----------------------------------------------------------------

    def final_children(self) -> list[MatrixChild]:
        journal = open_existing_journal(self.journal_url, environment_id="local-dev")
        try:
            listed = journal.list_deliveries(10)
            if not listed:
                return []
            parent = journal.load_parent(listed[0].parent_id)
            attempts = {child.operation_id: journal.list_attempts(child.operation_id)
                        for child in parent.children}
        finally:
            close_quietly(journal)
        mutations = self.receiver.state.ledger.mutations
        proven, orphans = proven_outcomes(), orphan_outcomes()
        children = []
        for child in sorted(parent.children, key=lambda c: c.ordinal):
            key = self.ledger_key(child)
            mine = [m for m in mutations if m.key == key]
            tried = sorted(attempts[child.operation_id], key=lambda a: a["attempt_ordinal"])
            sent = [a for a in tried if a.get("outcome") not in orphans]  # orphans send nothing
            unproved = sum(1 for before in sent[:-1]
                           if before.get("outcome") not in proven
                           and child.operation_id not in self.reconciled_absent)
            children.append(MatrixChild(
                ordinal=child.ordinal, delivery_key=child.delivery_key,
                rows_sealed=child.row_count, rows_applied=sum(m.rows for m in mine),
                mutations=len(mine), attempts=len(tried), unproved_resends=unproved,
                state_name=child.state_name, axes=child.axes))
        return children


def _passages(stderr: str) -> list[str]:
    return [line.removeprefix(PASSAGE_PREFIX) for line in stderr.splitlines()
            if line.startswith(PASSAGE_PREFIX)]


def trace(cell: Cell) -> list[str]:
    """Every cut point an uncut `deliver` of ``cell`` passes, in order (``when:point@n``),
    except lease renewals: the heartbeat thread renews on its own clock, so whether and where a
    run passes one depends on timing (a kill then is a kill at whatever the run does)."""
    ran = cell.run("cut", cell.deliver_args(), cwd=cell.root / "trace", cut=TRACE)
    assert ran.record.exit_code in (0, 4) and ran.record.status is not None, ran.stderr[-2000:]
    return [p for p in _passages(ran.stderr) if ":lease_renew@" not in p]


_PORT_LOCK = threading.Lock()


def new_receiver() -> ReceiverThread:
    with _PORT_LOCK:
        receiver = ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=0.2))
        receiver.__enter__()
    return receiver


@dataclass
class LeaseWait:
    """A command re-run while the lost run's lease holds it off: each refusal is recorded as
    ``lease_wait`` and waited out until the expiry it names (the lease is never broken)."""

    cell: Cell
    killed_at: float
    refusals: int = 0
    free_at: float | None = None
    """When the first command after the last refusal started: recovery could begin."""
    refusals_pending: bool = False

    def run(self, role: str, args: Sequence[str], cwd: Path) -> Ran:
        while True:
            ran = self.cell.run(role, args, cwd=cwd)
            if ran.record.status != "journal.lease_held" or \
                    time.monotonic() - self.killed_at > MAX_LEASE_WAIT_S:
                if self.free_at is None or self.refusals_pending:
                    self.free_at, self.refusals_pending = ran.started, False
                return ran
            self.cell.commands[-1] = ran.record.model_copy(update={"role": "lease_wait"})
            self.refusals += 1
            self.refusals_pending = True
            time.sleep(_until_expiry(ran.document))


def run_cell(cell: Cell) -> MatrixCell:
    """Cut, restart, and let an operator finish the cell; the record of all of it."""
    spec = cell.spec
    for rule in fault_rules(spec.family, spec.fault):
        cell.receiver.state.faults.install([rule])
    killed = cell.run("cut", cell.deliver_args(), cwd=cell.root / "cut", cut=spec.cut)
    died = killed.record.exit_code == -9 and f"test cut {spec.cut}" in killed.stderr
    leases = LeaseWait(cell, time.monotonic())
    work = cell.root / "recover"  # a fresh working directory: nothing of the lost run's
    listing = cell.run("discovery", ["delivery", "list", "--journal", cell.journal_url,
                                     "--format", "json"], cwd=work)
    deliveries = listing.document.get("deliveries", [])
    admitted = bool(deliveries)
    restart_args = cell.resume_args(deliveries[0]["parent_id"]) if admitted else \
        [*cell.deliver_args()]
    last = leases.run("restart", restart_args, work)
    operator = 0
    parent_id = deliveries[0]["parent_id"] if admitted else last.document.get("parent_id")
    while _code(last.document) != "completed" and operator < MAX_OPERATOR_COMMANDS and parent_id:
        inspected = cell.run("operator", cell.inspect_args(parent_id), cwd=work)
        operator += 1
        if inspected.document.get("complete") is True:
            last = inspected
            break
        actions = set(inspected.document.get("next_actions", ()))
        pending = [c for c in inspected.document.get("children", ()) if c.get("allowed_actions")]
        if "reconcile_delivery_key" in actions and pending and operator < MAX_OPERATOR_COMMANDS:
            child = _child(cell, pending[0]["operation_id"])
            leases.run("operator", ["delivery", "reconcile", "--operation-id",
                                    child.operation_id, *cell._state(),
                                    *cell.console_word(child), "--apply", "--actor",
                                    "fault-matrix", "--format", "json"], work)
            operator += 1
        if operator >= MAX_OPERATOR_COMMANDS:
            break
        if actions & (RESUMING_ACTIONS | {"reconcile_delivery_key"}):
            last = leases.run("operator", cell.resume_args(parent_id), work)
            operator += 1
        else:
            break
    children = cell.final_children()
    completed = bool(children) and all(c.axes.checkpoint_state.value == "PROMOTED"
                                       for c in children) and _code(last.document) == "completed"
    waited = (leases.free_at or leases.killed_at) - leases.killed_at
    return MatrixCell(
        cell_id=spec.cell_id, dialect=spec.dialect, family=spec.family,  # type: ignore[arg-type]
        workload=WORKLOADS[spec.family], cut=spec.cut, receiver_fault=spec.fault,  # type: ignore[arg-type]
        children_total=len(children), killed=died, admitted=admitted,
        recovery_wait_s=round(max(waited, 0.0), 2), lease_refusals=leases.refusals,
        operator_commands=operator, commands=tuple(cell.commands), children=tuple(children),
        rows_sealed=sum(c.rows_sealed for c in children),
        rows_applied=sum(c.rows_applied for c in children),
        duplicate_mutations=cell.receiver.state.ledger.duplicate_mutations,
        false_successes=cell.false_successes,
        unproved_resends=sum(c.unproved_resends for c in children),
        completed=completed, final_exit_code=last.record.exit_code)


def _until_expiry(document: Mapping[str, Any]) -> float:
    """Seconds to wait before the next restart: until the refusal's named lease expiry."""
    section = document.get("stopped") or document
    details = section.get("details") or {}
    expires_in = details.get("expires_in_s")
    return LEASE_POLL_S + (float(expires_in) if isinstance(expires_in, int) else 0.0)


def _child(cell: Cell, operation_id: str) -> ChildOperation:
    journal = open_existing_journal(cell.journal_url, environment_id="local-dev")
    try:
        return journal.get_child(operation_id)
    finally:
        close_quietly(journal)


def matrix_document(cells: Sequence[MatrixCell], wall_time_s: float,
                    lease_ttl_s: int | None) -> RemoteEffectFaultMatrix:
    def by(attribute: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        for cell in cells:
            value = str(getattr(cell, attribute))
            counts[value] = counts.get(value, 0) + 1
        return counts

    totals = MatrixTotals(
        cells=len(cells), cells_by_dialect=by("dialect"), cells_by_family=by("family"),
        cells_by_receiver_fault=by("receiver_fault"),
        killed=sum(c.killed for c in cells), completed=sum(c.completed for c in cells),
        duplicate_mutations=sum(c.duplicate_mutations for c in cells),
        false_successes=sum(c.false_successes for c in cells),
        unproved_resends=sum(c.unproved_resends for c in cells),
        max_operator_commands=max((c.operator_commands for c in cells), default=0),
        max_recovery_wait_s=max((c.recovery_wait_s for c in cells), default=0.0),
        wall_time_s=round(wall_time_s, 1))
    return RemoteEffectFaultMatrix(producer=f"dpone {__version__}", lease_ttl_s=lease_ttl_s,
                                   totals=totals, cells=tuple(cells))
