"""Every port is declared once, in dpone.contracts.ports; credentials come only through the
CredentialResolver port."""

from __future__ import annotations

import inspect
from typing import Protocol

import dpone.contracts.journal as journal_contracts
import dpone.executor.transport as transport
from dpone.compiler import compile_workload
from dpone.contracts import ports
from dpone.contracts.binding import ConnectionBinding
from dpone.contracts.secret import Credential, Secret
from support.common import EXAMPLES, ROOT

PORTS = {"ImmutableArtifactPort", "DeliveryJournalView", "DeliveryJournalPort",
         "JournalReads", "SupervisorJournal",
         "RestTransportPort", "CredentialResolver", "Clock", "ArtifactExpiryPort",
         "PrunableArtifactPort", "AdoptsFiles", "JournalMetricsView"}


def test_every_port_is_a_protocol_declared_in_the_ports_module() -> None:
    declared = {name for name, value in vars(ports).items()
                if inspect.isclass(value) and Protocol in value.__mro__[1:]
                and value.__module__ == ports.__name__}
    assert declared == PORTS


def test_moved_ports_are_the_same_objects_where_they_were() -> None:
    assert journal_contracts.DeliveryJournalPort is ports.DeliveryJournalPort
    assert journal_contracts.DeliveryJournalView is ports.DeliveryJournalView
    assert transport.RestTransportPort is ports.RestTransportPort
    assert transport.CredentialResolver is ports.CredentialResolver
    assert transport.Credential is Credential and transport.Secret is Secret


class _Resolver:
    def __init__(self) -> None:
        self.asked: list[ConnectionBinding] = []

    def resolve(self, binding: ConnectionBinding) -> Credential:
        self.asked.append(binding)
        return Credential("bearer", {"token": Secret("from-the-port")})


def test_a_plans_transport_resolves_its_credential_through_the_port() -> None:
    plan = compile_workload(EXAMPLES / "workloads" / "measurements_sync.yaml", EXAMPLES).plan
    resolver = _Resolver()
    with transport.transport_for(plan, credentials=resolver):
        pass
    assert resolver.asked == [plan.binding.snapshot]


def test_only_payload_retention_deletes_artifacts() -> None:
    """The artifact stores' one deletion (``ArtifactExpiryPort.expire``) is called by `dpone
    admin prune` alone, and only it opens a store typed with that port: the runtime cannot
    delete a payload."""
    package = ROOT / "dpone"
    callers = {path.relative_to(package).as_posix() for path in package.rglob("*.py")
               if ".expire(" in path.read_text(encoding="utf-8")
               or "open_prunable_artifact_store(" in path.read_text(encoding="utf-8")}
    assert callers == {"cli/admin_prune.py", "artifacts/_url.py"}
