"""The shipped review hooks, run for real: `.pre-commit-hooks.yaml` by the `pre-commit` tool and
the CI recipe `docs/ci/plan-review.yml`'s steps by bash, on a temporary git repository that holds
a registry (not the examples) and its golden plans.

The hook repository is this checkout's working tree as a fresh git repository (its manifest, its
package), so the manifest under test is the one in the tree. The ``language: python`` hook makes
pre-commit build its own environment with pip (slow: marked so, never skipped).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support.common import ROOT
from support.review import edit, independent_registry

BIN = Path(sys.executable).parent
COLUMN = ("mappings/acme.orders.v1.yaml", "{name: note, type: string}",
          "{name: remark, type: string}")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=review@example", "-c", "user.name=review",
                           *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def _environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
            "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}


@pytest.fixture
def hook_repo(tmp_path: Path) -> tuple[Path, str]:
    """(a git repository of this working tree's manifest and package, its commit)."""
    repo = tmp_path / "hooks"
    repo.mkdir()
    for name in (".pre-commit-hooks.yaml", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, repo / name)
    shutil.copytree(ROOT / "dpone", repo / "dpone",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "hooks")
    return repo, _git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def user_repo(tmp_path: Path) -> Path:
    """A repository holding a registry under registry/ and its goldens under goldens/plans."""
    repo = tmp_path / "user"
    repo.mkdir()
    independent_registry(repo)
    subprocess.run([str(BIN / "dpone"), "plan", "--all", "--registry", "registry", "--out",
                    "goldens/plans"], cwd=repo, check=True, capture_output=True)
    _git(repo, "init", "-q", "-b", "main")
    return repo


def _configure(user: Path, hooks: tuple[Path, str], hook_id: str) -> None:
    config = {"repos": [{"repo": str(hooks[0]), "rev": hooks[1], "hooks": [
        {"id": hook_id, "args": ["--registry", "registry", "--check", "goldens/plans"]}]}]}
    (user / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), "utf-8")
    _git(user, "add", "-A")
    _git(user, "commit", "-q", "-m", "registry and goldens")


def _pre_commit(user: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "pre-commit"), "run", "--all-files"], cwd=user,
                          env=_environment(tmp_path), capture_output=True, text=True,
                          check=False, timeout=900)


def _passes_then_fails_on_a_stale_golden(user: Path, tmp_path: Path) -> None:
    current = _pre_commit(user, tmp_path)
    assert current.returncode == 0, current.stdout + current.stderr
    assert "Passed" in current.stdout

    edit(user / "registry", *COLUMN)
    stale = _pre_commit(user, tmp_path)

    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "Failed" in stale.stdout
    assert 'mapping.columns[5].name  "note" -> "remark"' in stale.stdout
    assert "dpone plan --all --registry registry --out goldens/plans" in stale.stdout


def test_the_installed_dpone_hook_fails_on_a_stale_golden(
        hook_repo: tuple[Path, str], user_repo: Path, tmp_path: Path) -> None:
    _configure(user_repo, hook_repo, "dpone-plan-goldens-system")
    _passes_then_fails_on_a_stale_golden(user_repo, tmp_path)


@pytest.mark.slow
def test_the_hook_in_its_own_environment_fails_on_a_stale_golden(
        hook_repo: tuple[Path, str], user_repo: Path, tmp_path: Path) -> None:
    _configure(user_repo, hook_repo, "dpone-plan-goldens")
    _passes_then_fails_on_a_stale_golden(user_repo, tmp_path)
    installed = list((tmp_path / "pre-commit-home").glob("repo*/py_env-*/bin/dpone"))
    assert installed, "pre-commit did not build the hook's own environment"


def _workflow_steps() -> tuple[dict[str, str], list[dict[str, object]]]:
    workflow = yaml.safe_load((ROOT / "docs" / "ci" / "plan-review.yml").read_text("utf-8"))
    [job] = workflow["jobs"].values()
    return job["env"], job["steps"]


def _run_step(step: dict[str, object], user: Path, env: dict[str, str],
              tmp_path: Path) -> subprocess.CompletedProcess[str]:
    step_env = {k: str(v).replace("${{ github.base_ref }}", "main")
                for k, v in dict(step.get("env") or {}).items()}  # type: ignore[call-overload]
    return subprocess.run(["bash", "-e", "-c", str(step["run"])], cwd=user,
                          env={**_environment(tmp_path), **env, **step_env},
                          capture_output=True, text=True, check=False)


def test_the_ci_recipe_checks_the_goldens_and_writes_the_pull_request_comment(
        user_repo: Path, tmp_path: Path) -> None:
    env, steps = _workflow_steps()
    _git(user_repo, "add", "-A")
    _git(user_repo, "commit", "-q", "-m", "base")
    _git(user_repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    named = {str(step.get("name")): step for step in steps}
    check, explain = named["Golden plans are current"], named["What the change means for deliveries"]
    assert _run_step(check, user_repo, env, tmp_path).returncode == 0

    edit(user_repo / "registry", *COLUMN)
    stale = _run_step(check, user_repo, env, tmp_path)
    explained = _run_step(explain, user_repo, env, tmp_path)

    assert stale.returncode == 1
    assert explained.returncode == 0, explained.stderr
    comment = (user_repo / "plan-diff.md").read_text("utf-8")
    assert comment.startswith("### dpone plan diff: 2 of 2 plan(s) changed")
    assert "| `mapping.columns[5].name` | `\"note\"` | `\"remark\"` |" in comment
