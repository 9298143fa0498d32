"""Every command transcript the docs show is produced by running it (``support.doc_transcripts``):
each document in a sandbox of its own, against the mock receiver on the example binding's
authority, outputs compared with only instants, job run prefixes, durations and the sandbox
path normalized. ``DPONE_UPDATE_DOCS=1 scripts/test tests/integration/docs`` refreshes the
transcripts from the real run; a block marked ``<!-- skip: next -->`` is illustrative and says
so to the reader."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sybil.example import SybilFailure

from dpone.receiver import ReceiverConfig, ReceiverThread
from support.common import ROOT
from support.doc_transcripts import TOKEN, Session, document, write_updates

DOCS = ("README.md", "docs/tutorial.md", "docs/planner.md", "docs/generations.md",
        "docs/authoring.md", "docs/receiver.md", "docs/reference/reconcile.md",
        "docs/airflow.md", "docs/fault-matrix.md", "docs/review.md",
        "docs/preview.md", "docs/certification.md")
AUTHORITY_PORT = 8765


@pytest.fixture
def receiver() -> Iterator[ReceiverThread]:
    """A fresh mock receiver per document (its batch and job numbers start at 1)."""
    deadline = time.monotonic() + 15  # the previous document's receiver may still be closing
    while _listening(AUTHORITY_PORT):
        if time.monotonic() > deadline:
            pytest.fail(f"127.0.0.1:{AUTHORITY_PORT} is taken: the docs' transcripts need the "
                        "example binding's authority for the mock receiver")
        time.sleep(0.2)
    with ReceiverThread(ReceiverConfig(token=TOKEN, processing_seconds=0.2),
                        port=AUTHORITY_PORT) as running:
        yield running


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.parametrize("name", DOCS)
def test_the_document_s_transcripts_are_what_its_commands_print(
        name: str, receiver: ReceiverThread, tmp_path: Path) -> None:
    session = Session.fresh(tmp_path)
    failures: list[str] = []
    for example in document(ROOT / name, session):
        try:
            example.evaluate()
        except SybilFailure as failure:
            failures.append(str(failure.result))
    if session.updates:
        write_updates(ROOT / name, session.updates)
    assert not failures, "\n\n".join(failures)
