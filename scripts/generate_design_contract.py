"""Regenerate dpone/contracts/design/rest-bulk-delivery-design.v1.json from the YAML contract.

The YAML is validated first (every check of `dpone docs check-rest-delivery-design-contract`);
only a passing contract is compiled. ``--check`` writes nothing and exits 1 when the compiled
form differs from the YAML (review the diff after regenerating).
"""

import sys

from dpone.compiler.design_contract import (
    COMPILED_CONTRACT_PATH,
    render_compiled_contract,
    write_compiled_contract,
)

if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        current = (COMPILED_CONTRACT_PATH.read_text("utf-8")
                   if COMPILED_CONTRACT_PATH.is_file() else None)
        if current != render_compiled_contract():
            print(f"{COMPILED_CONTRACT_PATH} is stale; run scripts/generate_design_contract.py",
                  file=sys.stderr)
            sys.exit(1)
        print(f"{COMPILED_CONTRACT_PATH} is current")
    else:
        print(f"wrote {write_compiled_contract()}")
