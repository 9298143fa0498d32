"""The journal's id and the environment identities recorded in it (``rest_delivery_journal``,
``rest_delivery_namespace``, migration 0006)."""

from __future__ import annotations

from dpone.contracts._errors import DponeError
from dpone.contracts.journal_identity import EnvironmentIdentity, JournalIdentity
from dpone.journal._unit import UnitOfWork


def identity(tx: UnitOfWork) -> JournalIdentity:
    """The journal id and every recorded environment identity."""
    row = tx.one("journal_id")
    if row is None:
        raise DponeError(code="journal.unavailable",
                         message="the journal has no id: apply its migrations (any writing "
                                 "command does)")
    return JournalIdentity(
        journal_id=str(row["journal_id"]),
        environments=tuple(EnvironmentIdentity(
            operation_namespace=str(found["operation_namespace"]),
            platform_instance_id=str(found["platform_instance_id"]),
            tenant_id=str(found["tenant_id"]), environment_id=str(found["environment_id"]),
            namespace_revision=int(found["namespace_revision"]))
            for found in tx.all("journal_namespaces")))


def record(tx: UnitOfWork, environment: EnvironmentIdentity) -> JournalIdentity:
    """Record ``environment`` (insert-only: a namespace's identity never changes) and return
    the journal's identity."""
    tx.run("record_namespace", **environment.model_dump())
    return identity(tx)
