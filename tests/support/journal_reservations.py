"""Reading the capacity reservations of a journal store (the port does not expose them).

Each dialect's conftest offers a ``reservations`` fixture built from these pieces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

Reservations = Callable[[str], dict[str, str | None]]
"""operation id -> {attempt_id: release reason, or None while the reservation is held}."""

QUERY = ("SELECT attempt_id, released_at IS NOT NULL, release_reason "
         "FROM rest_delivery_capacity_reservation WHERE operation_id = {}")
"""``QUERY.format(placeholder)``: the dialect's parameter placeholder for the operation id."""


def reservation_map(rows: Iterable[tuple[str, object, str | None]]) -> dict[str, str | None]:
    return {attempt: (reason or "released") if released else None
            for attempt, released, reason in rows}
