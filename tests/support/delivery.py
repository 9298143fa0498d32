"""The delivery acceptance suite's harness: both example workloads sealed into a fresh store,
delivered over loopback to the mock receiver through the real transport and a real journal.

A :class:`Harness` holds one sealed plan (either family), its journal, artifact store and
transport, and reads back what the receiver applied. Plans are prepared for a fast suite: the
receipt poll interval is 0 (the receiver's jobs end at once unless a test says otherwise) and the
shared submit and poll rates never make a turn wait (:func:`wide_rates`).
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import random
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from dpone.artifacts import LocalArtifactStore
from dpone.contracts.binding import LeasePolicy
from dpone.contracts.journal import ChildOperation, DeliveryJournalPort, ParentOperation
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.sealed import SealedTopology
from dpone.executor.supervisor import DeliveryResult, deliver, parent_admission
from dpone.executor.transport import (
    HttpTransport,
    OutboundRequest,
    RestTransportPort,
    TransportOutcome,
    TransportTimeouts,
    resolve_credentials,
)
from dpone.journal.postgres import PostgresJournal
from dpone.receiver import ReceiverThread
from dpone.receiver._readers import gunzip, read_csv
from support.common import EXAMPLES
from support.example_seal import seal_example

TOKEN: Final = f"dpone-sentinel-{secrets.token_hex(16)}"
"""The bearer token of every receiver and transport here: a unique, searchable sentinel."""
TOKEN_ENV: Final = "DPONE_CONN_MOCK_MEASUREMENTS_TOKEN"
ENVIRONMENT: Final = "local-dev"
HOLDER: Final = "delivery-acceptance"
FULL: Final = (dt.date(2026, 8, 1), dt.date(2026, 9, 1))
"""The examples' interval: sync 5 children (7-day windows), async 11 (3-day windows)."""
SHORT: Final = (dt.date(2026, 8, 1), dt.date(2026, 8, 7))
"""The fault interval: sync 1 child, async 2 children (3-day windows)."""
WORKLOADS: Final = {"sync": "measurements_sync", "async": "measurements_async"}
SUBMIT_PREFIX: Final = {"sync": "/mock/v1/batches/", "async": "/mock/v1/dataset-jobs"}
POLL_PREFIX: Final = "/mock/v1/dataset-jobs/"
WIDE_RATE_PER_MINUTE: Final = 1_000_000_000_000
"""The widest rate a profile may declare: turns under a microsecond apart."""
MAX_STEPS: Final = 400
"""A run taking more journal steps than this is stuck (e.g. polling a job that never ends)."""

StepHook = Callable[[ChildOperation, str], None]
HarnessFactory = Callable[..., "Harness"]
"""The ``harness`` fixture: ``harness(family, interval=SHORT, *, receiver, registry, store)``."""


def no_sleep(_seconds: float) -> None:
    """The supervisor's sleep for scenarios that need no real waiting (poll interval is 0)."""


def fast_polling(plan: RestDeliveryPlan) -> RestDeliveryPlan:
    """``plan`` with the profile's receipt poll interval set to 0 seconds."""
    snapshot = plan.profile.snapshot
    timeouts = snapshot.timeouts.model_copy(update={"poll_interval_s": 0})
    profile = plan.profile.model_copy(
        update={"snapshot": snapshot.model_copy(update={"timeouts": timeouts})})
    return plan.model_copy(update={"profile": profile})


def wide_rates(plan: RestDeliveryPlan) -> RestDeliveryPlan:
    """``plan`` whose submit and poll rates are so wide that no turn ever waits: a test that
    records the supervisor's sleeps sees its back-offs only (a rate test sets its own)."""
    snapshot = plan.profile.snapshot
    rate = snapshot.rate.model_copy(update={"submit_per_minute": WIDE_RATE_PER_MINUTE,
                                            "poll_per_minute": WIDE_RATE_PER_MINUTE})
    profile = plan.profile.model_copy(
        update={"snapshot": snapshot.model_copy(update={"rate": rate})})
    return plan.model_copy(update={"profile": profile})


def uncertified(plan: RestDeliveryPlan) -> RestDeliveryPlan:
    """``plan`` whose receiver fence is not certified in this environment."""
    fence = plan.fence.model_copy(update={"certified_in_environment": False})
    return plan.model_copy(update={"fence": fence})


@dataclass(frozen=True)
class Sealed:
    plan: RestDeliveryPlan
    topology: SealedTopology
    store: LocalArtifactStore

    def decoded_rows(self, ordinal: int) -> list[dict[str, Any]]:
        """The rows of one sealed payload as the receiver decodes them."""
        child = self.topology.children[ordinal - 1]
        data = self.store.get_bytes(child.payload.key)
        if child.payload.key.endswith(".gz"):
            return list(read_csv(gunzip(data, 1 << 30)))
        return [json.loads(line) for line in data.decode("utf-8").splitlines() if line]

    def sealed_rows(self) -> list[dict[str, Any]]:
        return [row for child in self.topology.children
                for row in self.decoded_rows(child.descriptor.ordinal)]

    def mutation_key(self, ordinal: int) -> str:
        """The receiver's ledger key of a child: the X-Delivery-Key or the job file name."""
        child = self.topology.children[ordinal - 1]
        return child.request.filename or child.identities.delivery_key


def seal(family: str, root: Path, interval: tuple[dt.date, dt.date], *,
         registry: Path = EXAMPLES) -> Sealed:
    """One example workload frozen and sealed into the store at ``root``."""
    sealed = seal_example(registry / "workloads" / f"{WORKLOADS[family]}.yaml", registry, root,
                          interval)
    return Sealed(wide_rates(fast_polling(sealed.plan)), sealed.topology, sealed.store)


def http_transport(plan: RestDeliveryPlan, authority: str) -> HttpTransport:
    """The real transport of ``plan``'s binding, pointed at ``authority``."""
    binding = plan.binding.snapshot.model_copy(update={"authority": authority})
    return HttpTransport(binding, resolve_credentials(binding),
                         timeouts=TransportTimeouts(connect=2, read=10, write=10, pool=2, total=20))


@dataclass
class Harness:
    """One sealed workload, its journal and transport, and the receiver it delivers to."""

    family: str
    sealed: Sealed
    journal: DeliveryJournalPort
    transport: HttpTransport
    receiver: ReceiverThread
    plan: RestDeliveryPlan
    steps: list[tuple[int, str]] = field(default_factory=list)

    @property
    def topology(self) -> SealedTopology:
        return self.sealed.topology

    @property
    def store(self) -> LocalArtifactStore:
        return self.sealed.store

    def run(self, *, sleep: Callable[[float], None] = no_sleep, rng: random.Random | None = None,
            transport: RestTransportPort | None = None, on_step: StepHook | None = None,
            plan: RestDeliveryPlan | None = None,
            leases: LeasePolicy | None = None) -> DeliveryResult:
        """One ``deliver()`` call; every journal step is recorded in ``steps``."""
        taken = len(self.steps)

        def observer(operation: ChildOperation, transition_id: str) -> None:
            self.steps.append((operation.ordinal, transition_id))
            if len(self.steps) - taken > MAX_STEPS:
                raise AssertionError(f"more than {MAX_STEPS} journal steps in one run")
            if on_step is not None:
                on_step(operation, transition_id)

        return deliver(plan or self.plan, self.topology, self.journal, self.store,
                       transport or self.transport, holder=HOLDER, sleep=sleep,
                       rng=rng or random.Random(14), observer=observer, leases=leases)

    # --- the journal ---------------------------------------------------------------------------

    def parent(self) -> ParentOperation:
        admission = parent_admission(self.plan, self.topology)
        found = self.journal.find_parent(admission.tenancy, admission.parent_plan_digest)
        assert found is not None, "the parent is not admitted"
        return found

    def child(self, ordinal: int) -> ChildOperation:
        return self.journal.get_child(self.parent().children[ordinal - 1].operation_id)

    def outcomes(self, ordinal: int) -> list[tuple[int, str | None]]:
        """(attempt ordinal, recorded outcome) of every attempt of one child."""
        attempts = self.journal.list_attempts(self.child(ordinal).operation_id)
        return [(int(a["attempt_ordinal"]), a["outcome"]) for a in attempts]

    # --- the receiver --------------------------------------------------------------------------

    def ledger(self) -> dict[str, Any]:
        return self.receiver.state.ledger.snapshot(with_rows=True)

    def requests(self) -> dict[str, int]:
        return dict(self.ledger()["requests"])

    def count(self, method: str) -> int:
        return sum(n for line, n in self.requests().items() if line.startswith(f"{method} "))

    def ledger_rows(self) -> list[dict[str, Any]]:
        ledger = self.ledger()
        assert all(m["records_complete"] for m in ledger["mutations"])
        return [row for mutation in ledger["mutations"] for row in mutation["records"]]

    def fault(self, fault: str, *, method: str, path_prefix: str, **params: Any) -> None:
        self.receiver.state.faults.install(
            [{"match": {"method": method, "path_prefix": path_prefix}, "fault": fault, **params}])

    def fail_submit(self, fault: str, **params: Any) -> None:
        """One fault on the next submit POST of this family."""
        self.fault(fault, method="POST", path_prefix=SUBMIT_PREFIX[self.family], **params)

    def fail_poll(self, fault: str, **params: Any) -> None:
        """One fault on the next receipt poll GET."""
        self.fault(fault, method="GET", path_prefix=POLL_PREFIX, **params)


def row_key(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False)


def payload_text(store: LocalArtifactStore) -> Iterator[tuple[Path, bytes]]:
    """Every file under the store root with its bytes (gzip payloads also decompressed)."""
    for path in sorted(p for p in store.root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        yield path, data
        if path.name.endswith(".gz"):
            yield path, gzip.decompress(data)


class FirstSendTo:
    """A transport whose first send goes through ``first``, every later one through ``rest``."""

    def __init__(self, first: RestTransportPort, rest: RestTransportPort) -> None:
        self.first, self.rest, self.sent = first, rest, 0

    def send(self, request: OutboundRequest) -> TransportOutcome:
        self.sent += 1
        return (self.first if self.sent == 1 else self.rest).send(request)

    def close(self) -> None:
        self.first.close()
        self.rest.close()


# --- PostgreSQL journals -----------------------------------------------------------------------

@contextmanager
def postgres_schema(postgres_dsn: str) -> Iterator[tuple[str, str]]:
    """A fresh journal schema migrated for ``local-dev``: yields (DSN, schema name); dropped after."""
    schema = "delivery_" + secrets.token_hex(6)
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    dsn = make_conninfo(postgres_dsn, options=f"-c search_path={schema},public")
    migrating = PostgresJournal(dsn, environment_id=ENVIRONMENT)
    migrating.migrate()
    migrating.close()
    try:
        yield dsn, schema
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def postgres_contents(postgres_dsn: str, schema: str) -> bytes:
    """Every value of every table of the schema, as text (bytea raw, JSON serialized)."""
    chunks: list[bytes] = []
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        tables = [row[0] for row in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (schema,)).fetchall()]
        assert tables, f"no journal tables in {schema}"
        for table in tables:
            query = sql.SQL("SELECT t::text, t.* FROM {}.{} AS t").format(
                sql.Identifier(schema), sql.Identifier(table))
            for row in conn.execute(query).fetchall():
                for value in row:
                    if isinstance(value, bytes | memoryview):
                        chunks.append(bytes(value))
                    elif isinstance(value, dict | list):
                        chunks.append(json.dumps(value, ensure_ascii=False).encode("utf-8"))
                    elif value is not None:
                        chunks.append(str(value).encode("utf-8"))
    return b"\n".join(chunks)
