"""`dpone plan --all`: every workload of a registry compiled into its golden plan.

``--out DIR`` writes one golden per workload and environment (``DIR/<environment>/<workload>
.json``, see :mod:`dpone.plans._goldens`), rewriting only those that changed and removing the
goldens no workload compiles to any more; ``--check DIR`` writes nothing and names every golden
that differs from what the registry compiles to now, with the semantic difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dpone.cli._plan_compare import Side, compare
from dpone.compiler import compile_workload
from dpone.contracts import DponeError
from dpone.contracts.documents import GoldenPlan, PlanSet
from dpone.contracts.plan import RestDeliveryPlan
from dpone.plans import golden_files, golden_name, golden_text, read_plan_file

WORKLOAD_SUFFIXES = frozenset({".yaml", ".yml"})


@dataclass(frozen=True, slots=True)
class CompiledWorkload:
    workload: Path
    plan: RestDeliveryPlan
    digest: str
    canonical: bytes

    @property
    def name(self) -> str:
        return golden_name(self.plan)

    def side(self) -> Side:
        return Side(self.plan, self.digest, str(self.workload))


def workload_files(directory: Path) -> list[Path]:
    """The workload files under ``directory`` (recursively), in path order."""
    if not directory.is_dir():
        raise DponeError(code="input.not_found",
                         message=f"no workload directory {directory}",
                         hint="Name the directory holding the workload files with --workloads "
                              "(default: <registry>/workloads).")
    return sorted(p for p in directory.rglob("*") if p.suffix in WORKLOAD_SUFFIXES
                  and p.is_file())


def compile_all(registry: Path, workloads: Sequence[Path],
                display: Mapping[Path, str] | None = None) -> list[CompiledWorkload]:
    """Each workload compiled; two workloads that compile to one golden name are refused.
    ``display`` names a workload file in messages (e.g. ``REF:path`` for a git ref's copy)."""
    compiled: dict[str, CompiledWorkload] = {}
    for path in workloads:
        result = compile_workload(path, registry,
                                  workload_display=(display or {}).get(path, str(path)),
                                  registry_display=str(registry))
        entry = CompiledWorkload(path, result.plan, result.digest, result.canonical)
        if entry.name in compiled:
            raise DponeError(
                code="input.invalid_argument",
                message=f"{compiled[entry.name].workload} and {path} both compile to "
                        f"{entry.name}: a workload's name is unique within its environment",
                hint="Rename one workload (its `name:` is the delivery's logical route).")
        compiled[entry.name] = entry
    return [compiled[name] for name in sorted(compiled)]


def write_goldens(directory: Path, compiled: Sequence[CompiledWorkload]) -> PlanSet:
    entries = []
    for item in compiled:
        path = directory / item.name
        text = golden_text(item.canonical)
        unchanged = path.is_file() and path.read_text("utf-8") == text
        if not unchanged:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        entries.append(GoldenPlan(name=item.plan.logical_route_id,
                                  environment=item.plan.environment.ref,
                                  workload=str(item.workload), path=str(path),
                                  digest=item.digest,
                                  state="unchanged" if unchanged else "written"))
    wanted = {item.name for item in compiled}
    for name, path in golden_files(directory).items():
        if name not in wanted:
            path.unlink()
            environment, _, file = name.partition("/")
            entries.append(GoldenPlan(name=file.removesuffix(".json"), environment=environment,
                                      workload=None, path=str(path), digest=None,
                                      state="extra"))
    return PlanSet(mode="write", directory=str(directory), plans=tuple(entries), stale=0)


def _golden_side(path: Path) -> Side | None:
    try:
        plan, digest = read_plan_file(path)
    except DponeError:
        return None  # not a plan any more: shown as missing, the compiled plan as added
    return Side(plan, digest, str(path))


def check_goldens(directory: Path, compiled: Sequence[CompiledWorkload]) -> PlanSet:
    entries = []
    for item in compiled:
        path = directory / item.name
        entry = GoldenPlan(name=item.plan.logical_route_id,
                           environment=item.plan.environment.ref, workload=str(item.workload),
                           path=str(path), digest=item.digest, state="unchanged")
        if path.is_file() and path.read_text("utf-8") == golden_text(item.canonical):
            entries.append(entry)
            continue
        old = _golden_side(path) if path.is_file() else None
        entries.append(entry.model_copy(update={
            "state": "stale" if path.is_file() else "missing", "diff": compare(old, item.side())}))
    wanted = {item.name for item in compiled}
    for name, path in golden_files(directory).items():
        if name in wanted:
            continue
        environment, _, file = name.partition("/")
        old = _golden_side(path)
        entries.append(GoldenPlan(
            name=file.removesuffix(".json"), environment=environment, workload=None,
            path=str(path), digest=None, state="extra",
            **({"diff": compare(old, None)} if old is not None else {})))
    stale = sum(1 for e in entries if e.state != "unchanged")
    return PlanSet(mode="check", directory=str(directory), plans=tuple(entries), stale=stale)
