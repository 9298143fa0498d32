"""Regenerate dpone/contracts/schemas/*.schema.json from the models (review the diff)."""

from dpone.compiler.schemas import write_all

if __name__ == "__main__":
    for path in write_all():
        print(f"wrote {path}")
