"""The OpenLineage facets of a dpone delivery task (the operators'
``get_openlineage_facets_on_complete`` / ``_on_failure``).

* inputs: the source the plan reads. A file is ``file`` + its path under the operator's source
  root (``s3://bucket`` + its key under an ``s3://bucket/prefix`` root; the plan's registry path
  when the operator has no root); a PostgreSQL source is named by its connection reference
  (``dpone-connection://REF``: its DSN is a credential, never read here) and its table, or the
  digest of its query.
* outputs: the receiver endpoint: the binding authority's origin ``scheme://host:port`` and the
  operation's request path from the profile (``{resource}`` rendered; a per-child placeholder
  kept as written; never a query string).
* the run facet ``dponeDelivery`` (:class:`~dpone_airflow._lineage_facet.DponeDeliveryRunFacet`):
  the plan digest, the delivery's (parent) operation id once admitted, and the stable error
  code of a failed task.

The OpenLineage provider is optional: without it :func:`operator_lineage` returns ``None`` and
reads nothing. Airflow calls these hooks only where the provider is installed and enabled.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import quote, urlsplit

if TYPE_CHECKING:
    from airflow.providers.openlineage.extractors import OperatorLineage
    from openlineage.client.event_v2 import Dataset
    from openlineage.client.facet_v2 import RunFacet

    from dpone.contracts.plan import ResolvedSource, RestDeliveryPlan

    Lineage = OperatorLineage[Dataset, RunFacet]

FACET: Final = "dponeDelivery"
"""The run facet's key in the OpenLineage event."""
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


@dataclass(frozen=True)
class LineageDataset:
    """A dataset as OpenLineage names it: a namespace (the data source) and a name in it."""

    namespace: str
    name: str


@dataclass(frozen=True)
class RunFacts:
    """What the task knows of its delivery so far (bounded identifiers, never a secret)."""

    plan_digest: str | None
    operation_id: str | None = None
    """The delivery's (parent) operation id, once admitted."""
    error_code: str | None = None
    """The stable code of the task's failure."""


def source_dataset(source: ResolvedSource, source_root: str | None) -> LineageDataset:
    """The dataset the plan's source reads (see the module docstring)."""
    if source.type == "file":
        path = source.registry_path or ""
        if source_root and "://" in source_root:
            root = urlsplit(source_root)
            bucket = root.netloc.rpartition("@")[2]
            key = "/".join(part for part in (root.path.strip("/"), path) if part)
            return LineageDataset(f"{root.scheme}://{bucket}", key)
        if source_root:
            return LineageDataset("file", os.path.normpath(os.path.join(source_root, path)))
        return LineageDataset("file", path)
    namespace = f"dpone-connection://{source.connection_ref}"
    if source.table:
        return LineageDataset(namespace, source.table)
    query = hashlib.sha256((source.query or "").encode()).hexdigest()
    return LineageDataset(namespace, f"query:sha256:{query}")


def endpoint_dataset(plan: RestDeliveryPlan) -> LineageDataset:
    """The receiver endpoint the plan's operation writes to (see the module docstring)."""
    authority = urlsplit(plan.binding.snapshot.authority)
    scheme = authority.scheme.lower()
    host = authority.hostname or ""
    shown = f"[{host}]" if ":" in host else host
    port = authority.port or _DEFAULT_PORTS.get(scheme, 0)
    path = plan.profile.snapshot.request.path.partition("?")[0]
    # A template is literal text and `{symbol}` placeholders, nothing else (grammar/template.lark):
    # the plan-wide symbol renders as the transport renders it, percent-encoded.
    path = path.replace("{resource}", quote(plan.workload.sink.resource, safe=""))
    return LineageDataset(f"{scheme}://{shown}:{port}", path)


def plan_datasets(plan: RestDeliveryPlan,
                  source_root: str | None) -> tuple[LineageDataset, LineageDataset]:
    """(input, output) of ``plan``."""
    return source_dataset(plan.source, source_root), endpoint_dataset(plan)


def operator_lineage(
        facts: RunFacts,
        datasets: Callable[[], tuple[LineageDataset, LineageDataset] | None]) -> Lineage | None:
    """The task's ``OperatorLineage``: ``datasets()`` (read only when the OpenLineage provider is
    installed; ``None`` when the plan could not be read: the run facet alone) and the run facet
    of ``facts``. ``None`` without the OpenLineage provider."""
    try:
        from airflow.providers.openlineage.extractors import (  # noqa: PLC0415 - optional
            OperatorLineage,
        )
        from openlineage.client.event_v2 import Dataset  # noqa: PLC0415

        from dpone_airflow._lineage_facet import DponeDeliveryRunFacet  # noqa: PLC0415
    except ImportError:
        return None
    found = datasets()
    inputs: list[Dataset] = []
    outputs: list[Dataset] = []
    if found is not None:
        source, endpoint = found
        inputs.append(Dataset(namespace=source.namespace, name=source.name))
        outputs.append(Dataset(namespace=endpoint.namespace, name=endpoint.name))
    facet = DponeDeliveryRunFacet(planDigest=facts.plan_digest, operationId=facts.operation_id,
                                  errorCode=facts.error_code)
    run_facets: dict[str, RunFacet] = {FACET: facet}
    return OperatorLineage(inputs=inputs, outputs=outputs, run_facets=run_facets)
