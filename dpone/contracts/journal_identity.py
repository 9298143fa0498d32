"""Which journal a delivery's state lives in, and the environments that journal serves.

A journal records the environment identity of every operation namespace a run writes into it
(platform instance, tenant, environment, namespace revision) and carries a journal id of its
own. An artifact store records, per operation namespace, the journal it belongs to
(:data:`STORE_BINDING_SCHEMA`): a run that pairs the store with another journal of the same
namespace, such as a fresh journal created by running from another directory, is refused with
``environment.store_journal_mismatch`` before anything is frozen, admitted or sent.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, Protocol

from pydantic import Field

from dpone.contracts._base import Digest, StrictModel

STORE_BINDING_SCHEMA: Final = "dpone.store_journal_binding.v1"
JournalId = Annotated[str, Field(pattern=r"^jrn_[0-9a-f]{32}$")]


class EnvironmentIdentity(StrictModel):
    """The inputs of one operation namespace, as a plan's environment names them."""

    operation_namespace: Digest
    platform_instance_id: str
    tenant_id: str
    environment_id: str
    namespace_revision: Annotated[int, Field(ge=1)]


class JournalIdentity(StrictModel):
    """A journal's id and the environment identities recorded in it (sorted by namespace)."""

    journal_id: JournalId
    environments: tuple[EnvironmentIdentity, ...] = ()


class StoreJournalBinding(StrictModel):
    """The artifact store's record of the journal one operation namespace's state lives in."""

    schema_id: Literal["dpone.store_journal_binding.v1"] = Field(
        default="dpone.store_journal_binding.v1", alias="schema")
    journal_id: JournalId
    environment: EnvironmentIdentity


class JournalIdentityPort(Protocol):
    """The journal's identity: read it, and record an environment a run writes for."""

    def journal_identity(self) -> JournalIdentity: ...

    def record_environment(self, identity: EnvironmentIdentity) -> JournalIdentity: ...
