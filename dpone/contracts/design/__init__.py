"""The machine-readable design contract (package data) and its runtime loader.

``rest-bulk-delivery-design.v1.yaml`` is the source of the delivery state machine. Its compiled
form, ``rest-bulk-delivery-design.v1.json``, holds the same document as JSON: it is generated
from the YAML (``scripts/generate_design_contract.py``), drift-tested against it and validated
by ``dpone docs check-rest-delivery-design-contract`` at build and test time, so the runtime
reads it with the standard library alone (no YAML library, no JSON Schema validator, nothing of
the compiler) and builds the typed ``StateContract`` the journal's guard runs.
"""

from __future__ import annotations

import functools
import json
from importlib.resources import files

from dpone.contracts._errors import DponeError, Location
from dpone.contracts.state import StateContract

CONTRACT_RESOURCE = "rest-bulk-delivery-design.v1.yaml"
"""The source: the contract as people edit and review it."""
COMPILED_RESOURCE = "rest-bulk-delivery-design.v1.json"
"""The compiled form the runtime loads (generated from ``CONTRACT_RESOURCE``)."""
COMPILED_CONTRACT_NAME = f"dpone/contracts/design/{COMPILED_RESOURCE}"


def compiled_contract_bytes() -> bytes:
    return files(__name__).joinpath(COMPILED_RESOURCE).read_bytes()


@functools.cache
def load_state_contract() -> StateContract:
    """The shipped contract as the runtime guard's model, loaded once per process."""
    try:
        data = json.loads(compiled_contract_bytes())
    except (OSError, ValueError) as exc:
        raise DponeError(code="contract.schema_invalid",
                         message=f"the compiled design contract cannot be read: {exc}",
                         location=Location(file=COMPILED_CONTRACT_NAME)) from None
    if not isinstance(data, dict):
        raise DponeError(code="contract.schema_invalid",
                         message="the compiled design contract is not a JSON object",
                         location=Location(file=COMPILED_CONTRACT_NAME))
    return StateContract.from_document(data)


__all__ = [
    "COMPILED_CONTRACT_NAME",
    "COMPILED_RESOURCE",
    "CONTRACT_RESOURCE",
    "compiled_contract_bytes",
    "load_state_contract",
]
