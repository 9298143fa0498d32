"""The offline compiler: bounded YAML, registry resolution, policy checks, static digests."""

from dpone.compiler._digests import namespace_digest
from dpone.compiler.compile import CompiledPlan, compile_workload
from dpone.compiler.environment_file import load_environment

__all__ = ["CompiledPlan", "compile_workload", "load_environment", "namespace_digest"]
