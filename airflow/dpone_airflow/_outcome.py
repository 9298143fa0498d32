"""How a dpone result or error becomes a task outcome: the text a failed task shows (stable code,
remote-effect certainty, allowed actions, the exact `dpone delivery ...` commands) and whether
Airflow may retry it. Airflow-free."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dpone.contracts import DponeError
    from dpone.executor.supervisor import DeliveryBlocked

_CHILD_ID = re.compile(r"^(op_v1_[0-9a-f]{64})_[0-9]{4,}$")
PARENT_ID = re.compile(r"^op_v1_[0-9a-f]{64}$")
"""A delivery's (parent) operation id."""
ERROR_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9_.]{0,127}$")
"""The shape of a stable error code of dpone's catalog."""
SCHEMA_INVALID = "contract.schema_invalid"
RETRYABLE_EXIT = 3
"""Exit class 3 (unavailable, fixable environment): an Airflow retry may succeed. Every other
class (invalid input, effect uncertain, terminal) fails the task without retries."""
JOB_ID = "JOB_ID"
EVIDENCE_FILE = "FILE"


def may_retry(code: str) -> bool:
    """The one retry rule of both operators (in-process and pod), for a blocked delivery, a
    stopped one and an error alike: Airflow may retry a stable code of exit class 3 (unavailable:
    a credential, a store, a receiver to be fixed or to come back; ``credential.rejected`` too,
    its child waiting NONE_PROVEN for the fixed credential). An unknown code is never retried."""
    from dpone.contracts import ERROR_CATALOG  # noqa: PLC0415

    spec = ERROR_CATALOG.get(code)
    return spec is not None and spec.exit_code == RETRYABLE_EXIT


def parent_of(operation_id: str) -> str:
    """The delivery (parent) id of a child id ``op_v1_<hex>_NNNN``; a parent id as it is."""
    match = _CHILD_ID.match(operation_id)
    return match.group(1) if match else operation_id


def _dpone(*words: str) -> str:
    return " ".join(shlex.quote(word) for word in ("dpone", *words))


def commands(parent_id: str, child_id: str | None, actions: tuple[str, ...],
             environment: str, receipt_id: str | None = None) -> list[str]:
    """The operator's next commands for ``actions``, every one scoped by ``--environment`` and
    runnable as printed once a placeholder is filled: a reconciliation names its proof (the
    job ``receipt_id`` when known, else ``--receipt-id JOB_ID`` for an asynchronous job or
    ``--evidence FILE`` for an attested ``dpone.operator_evidence.v1`` document)."""
    where = ("--environment", environment)
    lines = [_dpone("delivery", "inspect", "--operation-id", parent_id, *where)]
    if "reconcile_delivery_key" in actions and child_id is not None:
        reconcile = ("delivery", "reconcile", "--operation-id", child_id, *where)
        if receipt_id is not None:
            lines.append(_dpone(*reconcile, "--receipt-id", receipt_id, "--apply"))
        else:
            lines += [_dpone(*reconcile, "--receipt-id", JOB_ID, "--apply"),
                      f"    ({JOB_ID}: the job found in the receiver's console under the "
                      "child's key), or",
                      _dpone(*reconcile, "--evidence", EVIDENCE_FILE, "--apply"),
                      f"    ({EVIDENCE_FILE}: a dpone.operator_evidence.v1 document you attest)"]
    if "resume_delivery" in actions or "fix_credential" in actions:
        lines.append(_dpone("delivery", "resume", "--operation-id", parent_id, *where, "--apply"))
    return lines


@dataclass(frozen=True)
class Failure:
    """What a failed task raises: its text, whether Airflow may retry it and its stable code
    (the task's lineage and trace carry the code, never the text)."""

    text: str
    retryable: bool
    code: str


def _receipt_id(evidence: Mapping[str, Any]) -> str | None:
    """The job a duplicate answer named under the child's key and that was not adopted: the
    receipt a reconciliation reads (a receipt that expired or failed proves nothing more, so
    its own id is not offered)."""
    value = evidence.get("duplicate_job_id")
    return value if isinstance(value, str) and value else None


def blocked(result: DeliveryBlocked, environment: str) -> Failure:
    """A blocked delivery: its code, certainty, allowed actions and commands; retried only by
    :func:`may_retry`."""
    from dpone.contracts import ERROR_CATALOG  # noqa: PLC0415

    spec = ERROR_CATALOG[result.code]
    where = f" at child {result.operation_id}" if result.operation_id else ""
    lines = [f"{result.code}: delivery {result.parent_id} blocked{where} (remote effect "
             f"{result.remote_effect.value}, exit class {spec.exit_code})",
             f"operator action: {spec.operator_action}",
             f"allowed actions: {', '.join(result.allowed_actions) or 'none'}",
             "next:", *(f"  {line}" for line in commands(
                 result.parent_id, result.operation_id, result.allowed_actions, environment,
                 _receipt_id(result.evidence)))]
    return Failure("\n".join(lines), retryable=may_retry(result.code), code=result.code)


def error(failure: DponeError, environment: str) -> Failure:
    """A dpone error: its code and hint; the commands when it names a delivery."""
    lines = [f"{failure.code}: {failure.message}", f"hint: {failure.fix_hint}"]
    if failure.operation_id:
        parent = parent_of(failure.operation_id)
        child = failure.operation_id if parent != failure.operation_id else None
        lines += ["next:", *(f"  {line}" for line in commands(parent, child, (), environment))]
    return Failure("\n".join(lines), retryable=may_retry(failure.code), code=failure.code)


TRIGGERER_SETUP_CODES = frozenset({"credential.unavailable", "credential.rejected"})
"""A trigger's stop that the triggerer's own setup causes (the receipt GET carries the binding's
credential): it repeats on every deferral, whatever the worker can do."""


def trigger_stopped(code: str, operation_id: str, environment: str) -> Failure | None:
    """The failure of a task whose receipt trigger stopped with ``code``, one of
    :data:`TRIGGERER_SETUP_CODES` (``credential.unavailable``: the triggerer lacks the binding's
    credential), else None (a race such as ``journal.revision_conflict``, a step timeout, an
    unexpected exception: the task rereads the journal). It is never retried: another deferral
    reaches the same triggerer and stops again at once, so re-deferring would loop. The delivery
    stays admitted; nothing was lost or resent."""
    from dpone.contracts import ERROR_CATALOG  # noqa: PLC0415

    if code not in TRIGGERER_SETUP_CODES:
        return None
    spec = ERROR_CATALOG[code]
    parent = parent_of(operation_id)
    lines = [f"{code}: the receipt trigger of {operation_id} stopped in the triggerer (exit "
             f"class {spec.exit_code}); the task is not deferred again",
             f"hint: {spec.operator_action.rstrip('.')}. The triggerer polls with what the worker sends: the "
             "binding's credential (its DPONE_CONN_<REF>_* variable or file) and the journal's "
             "locator. The delivery waits in the "
             "journal: nothing was lost or resent.",
             "next:", *(f"  {line}" for line in commands(parent, None, ("resume_delivery",),
                                                         environment))]
    return Failure("\n".join(lines), retryable=False, code=code)


def _text(section: Mapping[str, Any], name: str) -> str:
    value = section.get(name)
    return value if isinstance(value, str) else ""


def from_document(document: Mapping[str, Any], environment: str) -> Failure:
    """The failure a task shows for a result document the executor pod wrote that is not
    completed, empty or pending: a ``blocked`` or ``stopped`` ``dpone.delivery_result.v1`` (its
    code, allowed actions and commands) or a ``dpone.error.v1`` (its code and hint). Anything
    else is ``contract.schema_invalid``: the task fails closed, never retried."""
    parent = _text(document, "parent_id")
    for status in ("blocked", "stopped"):
        section = document.get(status)
        if document.get("status") == status and isinstance(section, Mapping) and parent:
            child = _text(section, "operation_id") or None
            actions = tuple(str(a) for a in section.get("allowed_actions") or ())
            if status == "stopped" and section.get("retryability") == "when_available":
                actions = ("resume_delivery",)
            detail = (f"remote effect {_text(section, 'remote_effect')}" if status == "blocked"
                      else _text(section, "message"))
            where = f" at child {child}" if child else ""
            lines = [f"{_text(section, 'code')}: delivery {parent} {status}{where} "
                     f"({detail}, exit class {section.get('exit_code')})"]
            if status == "blocked":
                lines += [f"operator action: {_text(section, 'operator_action')}",
                          f"allowed actions: {', '.join(actions) or 'none'}"]
            else:
                lines.append(f"hint: {_text(section, 'hint')}")
            evidence = section.get("evidence")
            receipt = _receipt_id(evidence) if isinstance(evidence, Mapping) else None
            lines += ["next:", *(f"  {line}" for line in commands(parent, child, actions,
                                                                  environment, receipt))]
            code = _text(section, "code") or SCHEMA_INVALID
            return Failure("\n".join(lines), retryable=may_retry(code), code=code)
    code = _text(document, "code")
    if code and "status" not in document:
        lines = [f"{code}: {_text(document, 'message')}", f"hint: {_text(document, 'hint')}"]
        return Failure("\n".join(lines), retryable=may_retry(code), code=code)
    shown = _text(document, "status") or type(document).__name__
    return Failure(f"{SCHEMA_INVALID}: the executor pod wrote no dpone result document "
                   f"this provider reads (status {shown!r})", retryable=False, code=SCHEMA_INVALID)
