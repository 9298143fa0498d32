"""Fixtures of the design-contract suite: the shipped contract, its report and mutations."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from dpone.compiler.design_contract import (
    DesignReport,
    check_shipped_contract,
    shipped_contract_bytes,
)
from dpone.contracts.design import load_state_contract
from dpone.contracts.state import StateContract
from support.design import Edit, apply_edits


@pytest.fixture(scope="session")
def shipped_text() -> str:
    return shipped_contract_bytes().decode("utf-8")


@pytest.fixture(scope="session")
def shipped_report() -> DesignReport:
    return check_shipped_contract()


@pytest.fixture(scope="session")
def contract() -> StateContract:
    return load_state_contract()


@pytest.fixture
def write_contract(tmp_path: Path) -> Callable[[str | bytes], Path]:
    def write(content: str | bytes) -> Path:
        path = tmp_path / "contract.yaml"
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return path

    return write


@pytest.fixture
def mutate(shipped_text: str) -> Callable[[Sequence[Edit]], str]:
    """The shipped contract text with the given snippet edits applied."""
    return lambda edits: apply_edits(shipped_text, edits)
