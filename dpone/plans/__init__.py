"""Plan artifacts (content-addressed canonical JSON) and, later, the adaptive planner."""

from dpone.plans._store import plan_path, read_plan, write_plan

__all__ = ["plan_path", "read_plan", "write_plan"]
