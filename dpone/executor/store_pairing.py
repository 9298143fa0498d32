"""An artifact store belongs to one journal per operation namespace.

The first run of a namespace writes ``control/journals/<namespace hex>.json``
(``dpone.store_journal_binding.v1``: the journal id and the environment identity) into the
store, create-if-absent. Every later run reads it back: a run that pairs the store with another
journal of the same namespace (a fresh journal created by running from another directory, a
typo in ``--journal``) would find none of the admitted deliveries and send the same data again,
so it is refused with ``environment.store_journal_mismatch`` before anything is frozen,
admitted or sent.
"""

from __future__ import annotations

import json
from typing import Final

from pydantic import ValidationError

from dpone.contracts import DponeError
from dpone.contracts.journal_identity import (
    EnvironmentIdentity,
    JournalIdentity,
    StoreJournalBinding,
)
from dpone.contracts.plan import RestDeliveryPlan
from dpone.contracts.ports import ImmutableArtifactPort

BINDING_PREFIX: Final = "control/journals/"


def environment_identity(plan: RestDeliveryPlan) -> EnvironmentIdentity:
    """The environment identity of the plan's operation namespace."""
    snapshot = plan.environment.snapshot
    return EnvironmentIdentity(
        operation_namespace=plan.environment.operation_namespace,
        platform_instance_id=snapshot.platform_instance_id, tenant_id=snapshot.tenant_id,
        environment_id=snapshot.environment_id, namespace_revision=snapshot.namespace_revision)


def binding_key(environment: EnvironmentIdentity) -> str:
    return BINDING_PREFIX + environment.operation_namespace.removeprefix("sha256:") + ".json"


def _canonical(binding: StoreJournalBinding) -> bytes:
    return json.dumps(binding.model_dump(mode="json", by_alias=True), sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def stored_binding(store: ImmutableArtifactPort,
                   environment: EnvironmentIdentity) -> StoreJournalBinding | None:
    """The journal the store records for ``environment``; None when it records none."""
    key = binding_key(environment)
    if store.stat(key) is None:
        return None
    try:
        return StoreJournalBinding.model_validate_json(store.get_bytes(key))
    except ValidationError as error:
        raise DponeError(code="contract.schema_invalid",
                         message=f"the artifact store's {key} is not a "
                                 "dpone.store_journal_binding.v1 document") from error


def pair_store(store: ImmutableArtifactPort, journal: JournalIdentity,
               environment: EnvironmentIdentity, *, store_name: str, journal_name: str) -> None:
    """Record that ``store`` belongs to ``journal`` for ``environment`` (create-if-absent), or
    refuse with ``environment.store_journal_mismatch`` when it belongs to another journal."""
    binding = StoreJournalBinding(journal_id=journal.journal_id, environment=environment)
    existing = stored_binding(store, environment)
    if existing is None:
        try:
            store.put_bytes(binding_key(environment), _canonical(binding))
            return
        except DponeError as error:
            if error.code != "artifact.conflict":
                raise
        existing = stored_binding(store, environment)
    if existing is None or existing.journal_id == journal.journal_id:
        return
    raise mismatch(existing, environment, store_name=store_name, journal_name=journal_name,
                   journal_id=journal.journal_id)


def mismatch(existing: StoreJournalBinding, environment: EnvironmentIdentity, *,
             store_name: str, journal_name: str, journal_id: str | None) -> DponeError:
    """``environment.store_journal_mismatch``: the store belongs to ``existing``'s journal;
    ``journal_id`` None is a journal that does not exist yet."""
    this = f"{journal_name} ({journal_id})" if journal_id else f"{journal_name} (no journal yet)"
    return DponeError(
        code="environment.store_journal_mismatch",
        message=f"the artifact store {store_name} belongs to journal {existing.journal_id} of "
                f"environment {environment.environment_id!r} (tenant {environment.tenant_id!r}), "
                f"not to this run's journal {this}; nothing was frozen, admitted or sent",
        details={"store_journal_id": existing.journal_id, "journal_id": journal_id,
                 "operation_namespace": environment.operation_namespace,
                 "binding_key": binding_key(environment)})
