"""The child budget: one boundary plans at most ``limits.max_children`` children.

A bound on the children still to come is cheap: windows cover every day of a boundary with
rows (days without rows included) and hold at most ``window_days`` days each, and no child
holds more than ``max_rows`` rows, so ``n`` days holding ``r`` rows need at least
``max(ceil(n / window_days), ceil(r / max_rows))`` children. The planner checks that bound
before it reads a single size (so a boundary of thousands of years fails at once) and again
after each window (so it never measures more than about ``max_children`` windows).
"""

from __future__ import annotations

import datetime as dt

from dpone.contracts import DponeError
from dpone.contracts.plan import EffectiveLimits


def fewest_children(n_days: int, rows: int, limits: EffectiveLimits) -> int:
    """The fewest children that can cover ``n_days`` days holding ``rows`` rows.

    Only meaningful inside a boundary that has rows at all: a boundary without rows has no
    children (callers pass that case as 0 without asking).
    """
    return max(-(-n_days // limits.window_days), -(-rows // limits.max_rows))


def check_budget(children: int, *, exact: bool, boundary_from: dt.date, boundary_to: dt.date,
                 limits: EffectiveLimits) -> None:
    """Raise ``REST_DELIVERY_SCOPE_EXCEEDS_LIMIT`` if ``children`` (exact or a lower bound)
    is over ``limits.max_children``."""
    if children <= limits.max_children:
        return
    n_days = (boundary_to - boundary_from).days
    count = str(children) if exact else f"at least {children}"
    widest = limits.max_children * limits.window_days
    raise DponeError(
        code="REST_DELIVERY_SCOPE_EXCEEDS_LIMIT",
        message=(f"boundary [{boundary_from}, {boundary_to}) of {n_days} day(s) needs {count} "
                 f"children, over limits.max_children {limits.max_children} "
                 f"(windows of at most {limits.window_days} day(s), at most "
                 f"{limits.max_rows} rows each); nothing was sealed"),
        hint=(f"Shrink the interval: {limits.max_children} windows of {limits.window_days} "
              f"day(s) cover at most {widest} days (fewer where a window is shortened by the "
              "planning limits); or have the profile owner raise limits.max_children."),
        details={"boundary_from": boundary_from.isoformat(),
                 "boundary_to": boundary_to.isoformat(), "days": n_days,
                 "children": children, "children_exact": exact,
                 "max_children": limits.max_children, "window_days": limits.window_days},
    )
