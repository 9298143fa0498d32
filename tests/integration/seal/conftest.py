"""The two examples sealed once per session into a local artifact store."""

from __future__ import annotations

import pytest

from support.seal import EXAMPLE_NAMES, Sealed, seal_example


@pytest.fixture(scope="session")
def sealed_examples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Sealed]:
    root = tmp_path_factory.mktemp("sealed-artifacts")
    return {name: seal_example(name, root) for name in EXAMPLE_NAMES}
