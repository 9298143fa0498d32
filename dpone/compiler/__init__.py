"""The offline compiler: bounded YAML, registry resolution, policy checks, static digests."""

from dpone.compiler.compile import CompiledPlan, compile_workload

__all__ = ["CompiledPlan", "compile_workload"]
