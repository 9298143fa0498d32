"""The ``dponeDelivery`` OpenLineage run facet (imported only where the OpenLineage provider is
installed: :func:`dpone_airflow._lineage.operator_lineage` imports it lazily).

Its JSON schema ships with the provider (``schemas/dpone.airflow_delivery_run_facet.v1.json``);
its ``$id`` is the facet's ``_schemaURL``.
"""

from __future__ import annotations

from typing import ClassVar, Final

import attr
from openlineage.client.facet_v2 import RunFacet

SCHEMA_FILE: Final = "schemas/dpone.airflow_delivery_run_facet.v1.json"
SCHEMA_URL: Final = ("https://dpone.dev/schemas/dpone.airflow_delivery_run_facet.v1.json"
                     "#/$defs/DponeDeliveryRunFacet")


@attr.define
class DponeDeliveryRunFacet(RunFacet):
    """A dpone delivery task's run: identifiers and a stable code, never a message or secret."""

    planDigest: str | None = attr.field(default=None)
    """The published plan the task delivers (``sha256:<64 hex>``)."""
    operationId: str | None = attr.field(default=None)
    """The delivery's (parent) operation id, once admitted."""
    errorCode: str | None = attr.field(default=None)
    """The stable code of a failed task (dpone's error catalog)."""

    # Identifiers and codes: the secrets masker has nothing to find in them.
    _additional_skip_redact: ClassVar[list[str]] = ["planDigest", "operationId", "errorCode"]

    @staticmethod
    def _get_schema() -> str:
        return SCHEMA_URL
