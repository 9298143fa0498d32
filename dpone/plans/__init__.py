"""Plan artifacts (content-addressed canonical JSON) and the adaptive frozen-window planner."""

from dpone.plans._coverage import ParentPlanDigestInputs, child_plan_digest, verify_coverage
from dpone.plans._diff import (
    CONSEQUENCES,
    IDENTITY_MEANING,
    MEANING,
    Change,
    Consequence,
    PlanDiff,
    diff_plans,
)
from dpone.plans._goldens import golden_files, golden_name, golden_text, read_plan_file
from dpone.plans._planner import (
    FIXED_WIDTH_ALGORITHM_VERSION,
    Measured,
    SizeOracle,
    fixed_width_children,
    limit_violations,
    plan_children,
)
from dpone.plans._store import (
    plan_key,
    plan_path,
    publish_plan,
    read_plan,
    read_plan_bytes,
    read_published_plan,
    read_published_plan_bytes,
    write_plan,
)

__all__ = [
    "CONSEQUENCES",
    "FIXED_WIDTH_ALGORITHM_VERSION",
    "IDENTITY_MEANING",
    "MEANING",
    "Change",
    "Consequence",
    "Measured",
    "ParentPlanDigestInputs",
    "PlanDiff",
    "SizeOracle",
    "child_plan_digest",
    "diff_plans",
    "fixed_width_children",
    "golden_files",
    "golden_name",
    "golden_text",
    "limit_violations",
    "plan_children",
    "plan_key",
    "plan_path",
    "publish_plan",
    "read_plan",
    "read_plan_bytes",
    "read_plan_file",
    "read_published_plan",
    "read_published_plan_bytes",
    "verify_coverage",
    "write_plan",
]
