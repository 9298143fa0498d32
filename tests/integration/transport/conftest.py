"""Fixtures of the loopback transport suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.transport_servers import Pki


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    pytest.importorskip("cryptography")
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def pki_dir(pki: Pki) -> Path:
    return pki.ca_file.parent
