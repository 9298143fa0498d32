"""Regenerate what the runtime reads of the design contract, from the YAML contract.

The YAML (dpone/contracts/design/rest-bulk-delivery-design.v1.yaml) is validated first (every
check of `dpone docs check-rest-delivery-design-contract`); only a passing contract is compiled
into its JSON form (dpone/contracts/design/rest-bulk-delivery-design.v1.json) and into the typed
names the code imports (dpone/contracts/_names.py, _terms.py and _catalog.py). ``--check`` writes
nothing and exits 1 when any generated file differs from the YAML (review the diff after
regenerating).
"""

import sys

from dpone.compiler.design_contract import (
    COMPILED_CONTRACT_PATH,
    render_compiled_contract,
    write_compiled_contract,
)
from dpone.compiler.design_names import rendered_modules, stale_modules, write_modules

if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        current = (COMPILED_CONTRACT_PATH.read_text("utf-8")
                   if COMPILED_CONTRACT_PATH.is_file() else None)
        stale = stale_modules() + ([COMPILED_CONTRACT_PATH]
                                   if current != render_compiled_contract() else [])
        for path in stale:
            print(f"{path} is stale; run scripts/generate_design_contract.py", file=sys.stderr)
        if stale:
            sys.exit(1)
        for path in [COMPILED_CONTRACT_PATH, *rendered_modules()]:
            print(f"{path} is current")
    else:
        print(f"wrote {write_compiled_contract()}")
        for path in write_modules():
            print(f"wrote {path}")
