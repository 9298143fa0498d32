"""PostgreSQL journal driver failures reach the user as a catalog code with the driver's message
and where the journal is, never as a bare driver class and never with the DSN's password."""

from __future__ import annotations

import pytest

from dpone.contracts import DponeError
from dpone.journal.postgres import PostgresJournal
from support.common import free_port

PASSWORD = "pw-sentinel-4Kx9"


@pytest.mark.parametrize("migrate", [False, True])
def test_an_unreachable_journal_is_unavailable_with_the_driver_message(migrate: bool) -> None:
    port = free_port()
    journal = PostgresJournal(f"postgresql://dpone:{PASSWORD}@127.0.0.1:{port}/journal",
                              environment_id="dev")

    with pytest.raises(DponeError) as excinfo:
        journal.migrate() if migrate else journal.journal_epoch("dev")
    journal.close()

    error = excinfo.value
    assert error.code == "journal.unavailable" and error.exit_code == 3
    assert "Connection refused" in error.message
    assert error.message.endswith(
        f"(psycopg.OperationalError) at postgresql://dpone@127.0.0.1:{port}/journal")
    assert "\n" not in error.message
    assert PASSWORD not in repr(error.to_document())
