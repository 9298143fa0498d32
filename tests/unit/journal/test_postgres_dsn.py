"""A PostgreSQL journal DSN is displayed without its password or options (no server needed)."""

from __future__ import annotations

from dpone.journal.postgres._connection import display_dsn

PASSWORD = "pw-sentinel-4Kx9"


def test_a_dsn_is_displayed_without_password_or_options() -> None:
    assert display_dsn(f"postgresql://u:{PASSWORD}@db.example:5433/j?options=-c%20x%3Dy"
                       ) == "postgresql://u@db.example:5433/j"
    assert display_dsn(f"host=/run/pg port=5 user=a password={PASSWORD} dbname=j"
                       ) == "postgresql://a@/run/pg:5/j"
    assert PASSWORD not in display_dsn(f"postgresql://u:{PASSWORD}@[broken")
