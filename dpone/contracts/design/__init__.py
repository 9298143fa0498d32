"""The machine-readable design contract and its JSON Schema (package data)."""
