"""`dpone profile certify` against the real mock receiver over loopback, through the real
transport (helpers: ``support.certify``): every run resolves the binding's credential from the
environment, as a delivery does."""

from __future__ import annotations

import pytest

from support.cli import TOKEN, TOKEN_ENV


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
