"""The kill switch of new deliveries: ``runtime.features.rest_bulk_delivery_v1`` of an environment.

An environment file turns it on (``runtime: {features: {rest_bulk_delivery_v1: true}}``); it is
off unless the file does, also in a file written before the switch existed (no ``runtime``
block), whose refusal names its migration note (the ``admission`` change of
:data:`~dpone.compiler.migrations.CHANGES`). Off, :meth:`KillSwitch.refuse_new_delivery` stops
the admission of a new delivery (``runtime.feature_disabled``, exit 2) before anything is frozen,
sealed, admitted or sent: `dpone deliver`, `dpone-executor run` and the Airflow operator's submit
call it. Nothing else reads the switch, so everything about admitted work goes on: `dpone delivery
resume` (including the admitted children not sent yet), reconcile, receipt observation,
checkpoints, retention and inspection.

A run whose plan's environment has no file (a pinned plan run with explicit stores) cannot read
the switch: a plan of a production environment is refused then (fail closed), a development plan
runs (`dpone.cli._environment.refuse_new_deliveries_when_off`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from dpone.compiler.migrations import CHANGES, FormatChange
from dpone.contracts import DponeError
from dpone.contracts.binding import ENVIRONMENT_SCHEMA_ID, EnvironmentDocument

KILL_SWITCH: Final = "runtime.features.rest_bulk_delivery_v1"
_TURN_ON: Final = "runtime: {features: {rest_bulk_delivery_v1: true}}"


def _introduced() -> FormatChange:
    """The change that introduced the switch (its migration note)."""
    return next(change for change in CHANGES
                if change.schema == ENVIRONMENT_SCHEMA_ID and change.stage == "admission")


@dataclass(frozen=True, slots=True)
class KillSwitch:
    """What one environment file says about new deliveries."""

    environment: str
    """The environment's name (its file's stem)."""
    file: Path
    on: bool
    predates: bool
    """The file states no ``runtime`` block: it was written before the switch existed."""

    @classmethod
    def of(cls, document: EnvironmentDocument, file: Path) -> KillSwitch:
        stated = document.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return cls(environment=document.id, file=file,
                   on=document.runtime.features.rest_bulk_delivery_v1,
                   predates=_introduced().applies(stated))

    def refuse_new_delivery(self) -> None:
        """``runtime.feature_disabled`` when the switch is off: no new delivery is admitted."""
        if self.on:
            return
        note = _introduced().path
        older = (f" (the file predates the switch, which is off unless a file turns it on: "
                 f"{note})") if self.predates else ""
        raise DponeError(
            code="runtime.feature_disabled",
            message=f"{KILL_SWITCH} is off in {self.file}: no new delivery is admitted{older}",
            hint=f"Turn it on in the environment file ({_TURN_ON}) to admit new deliveries. "
                 "Admitted ones go on: `dpone delivery list` finds them and `dpone delivery "
                 "resume --operation-id ID --apply` continues one.",
            details={"environment": self.environment, "switch": KILL_SWITCH,
                     "file": str(self.file), **({"note": note} if self.predates else {})})
