"""``DeliveryLink``: a task's extra link to the delivery it ran, on the deployment's own page.

Both operators take ``delivery_url``, a template naming ``{operation_id}`` (the delivery's parent
operation id) and optionally ``{environment}``: a console, a dashboard filtered by delivery, a
runbook search. Once the task knows its delivery (admitted, or named by a failure), its link is
that URL, values URL-quoted; a task that never reached a delivery, or an operator without a
template, shows no link (an empty URL). On Airflow 3 the worker computes the link when the task
ends and Airflow stores it; on Airflow 2 the webserver reads it from the task's XCom
``dpone_delivery_link``, which the operator pushes. What `dpone delivery inspect --operation-id
ID --environment NAME` prints is the authority either way: the link only finds the delivery.
"""

from __future__ import annotations

import string
from typing import Any, Final
from urllib.parse import quote

try:  # Airflow 3: the worker computes the link from the operator that ran
    from airflow.sdk import BaseOperatorLink  # type: ignore[attr-defined,import-not-found,unused-ignore]

    _FROM_XCOM = False
except ImportError:  # Airflow 2.10, 2.11: the webserver reads what the operator pushed
    from airflow.models.baseoperatorlink import (  # type: ignore[no-redef,import-not-found,unused-ignore]
        BaseOperatorLink,
    )

    _FROM_XCOM = True

LINK_XCOM_KEY: Final = "dpone_delivery_link"
FIELDS: Final = frozenset({"operation_id", "environment"})


def check_template(template: str | None) -> str | None:
    """``template`` when it names ``{operation_id}`` and no field but those of :data:`FIELDS`;
    a ``ValueError`` at DAG parse time otherwise."""
    if template is None:
        return None
    named = {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}
    if "operation_id" not in named or not named <= FIELDS:
        raise ValueError(f"delivery_url {template!r} must name {{operation_id}} and may name "
                         "{environment}, nothing else")
    return template


def render(template: str, operation_id: str, environment: str) -> str:
    return template.format(operation_id=quote(operation_id, safe=""),
                           environment=quote(environment, safe=""))


class DeliveryLink(BaseOperatorLink):  # type: ignore[misc,unused-ignore]
    """The "dpone delivery" button of a dpone task."""

    name = "dpone delivery"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        if not _FROM_XCOM:
            live = getattr(operator, "_dpone_link", None)
            return live if isinstance(live, str) else ""
        from airflow.models.xcom import XCom  # noqa: PLC0415 - Airflow 2's webserver

        stored = XCom.get_value(ti_key=ti_key, key=LINK_XCOM_KEY)
        return stored if isinstance(stored, str) else ""
