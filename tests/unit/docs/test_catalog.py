"""`dpone catalog`: the generated catalog of a registry's operation profiles.

The examples' catalog (docs/catalog/) is committed, built with a fixed --as-of, and
`dpone catalog check` keeps it current (the CI check). Rendering is tested with certification
fixtures built as `SinkCertification` objects: a PASS that counts, a FAIL, a certification past
its validity, one older than its environment's max_age_days, one of another profile contract.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from dpone.cli.main import cli
from dpone.compiler.catalog import BuildSettings, recorded_settings, render_catalog
from dpone.compiler.catalog._blocks import Code, Page, Paragraph, Table
from dpone.compiler.catalog._inventory import read_registry
from dpone.compiler.catalog._markdown import render_markdown
from dpone.contracts.certification import (
    CaseResult,
    Exchange,
    Level,
    SinkCertification,
    Verdict,
)
from support.common import EXAMPLES, ROOT, assert_no_traceback

CATALOG = ROOT / "docs" / "catalog"
AS_OF = dt.date(2026, 12, 4)
ASYNC = "mock.dataset-jobs@1"
SYNC = "mock.batch-ndjson@1"
HOSTILE = '<script>alert("x")</script> & <img src=x onerror=alert(1)> | *star* _under_ `tick`'


def _run(*args: str) -> Result:
    result = CliRunner().invoke(cli, ["catalog", *args])
    assert_no_traceback(result)
    return result


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    target = tmp_path / "registry"
    shutil.copytree(EXAMPLES, target)
    return target


def _moment(day: dt.date, hour: int = 9) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, hour, tzinfo=dt.UTC)


def _certification(registry: Path, *, certified: dt.date, valid_days: int = 365,
                   result: Verdict = "PASS", level: Level = "local-live",
                   contract: str | None = None,
                   claim: str = "a duplicate key is refused and names the first job",
                   profile: str = ASYNC) -> SinkCertification:
    inventory = read_registry(registry)
    entry = next((e for e in inventory.profiles if e.profile.ref == profile), inventory.profiles[0])
    verdict: Verdict = "FAIL" if result == "FAIL" else "PASS"
    cases = (
        CaseResult(case="static_profile", claim="the profile compiles", verdict="PASS",
                   reason="compiled"),
        CaseResult(case="key_payload_binding", claim=claim, verdict=verdict,
                   reason="second submit answered 409" if verdict == "PASS"
                   else "second submit with another payload answered 202",
                   measured={"replays": 2, "status": 409},
                   evidence=(Exchange(method="POST", path="/mock/v1/dataset-jobs", status=409,
                                      elapsed_ms=12),)),
        CaseResult(case="clock_skew", claim="skew within 60 s", verdict="UNVERIFIED",
                   reason="skipped: no Date header"),
    )
    return SinkCertification(
        profile=profile,
        profile_contract_digest=contract or entry.contract_digest,
        operation_semantics_digest=entry.semantics_digest,
        binding="mock_measurements",
        receiver_binding_semantics_digest=inventory.binding_digests["mock_measurements"],
        environment="local-dev", level=level, product_version="0.75.0.dev0",
        certified_at=_moment(certified),
        valid_until=_moment(certified + dt.timedelta(days=valid_days)),
        sandbox_resource="certification_sandbox", cases=cases, result=result)


def _store(registry: Path, name: str, certification: SinkCertification) -> None:
    path = registry / "certifications" / "local-dev" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(certification.model_dump_json(by_alias=True, indent=2), "utf-8")


def _render(registry: Path, as_of: dt.date = AS_OF, html: bool = True) -> dict[str, str]:
    return render_catalog(registry, BuildSettings(as_of, html))


# --- the committed catalog: the CI check -------------------------------------------------------

def test_the_examples_catalog_is_current() -> None:
    result = _run("check", "--registry", str(EXAMPLES), "--out", str(CATALOG))
    assert result.exit_code == 0, (
        f"{result.stderr}\ndocs/catalog is stale: run `.venv/bin/dpone catalog build --registry "
        "examples --out docs/catalog --as-of <the date in docs/catalog/README.md>` and review")
    assert "is current" in result.stdout


def test_the_examples_catalog_records_a_fixed_as_of_date_and_html() -> None:
    settings = recorded_settings(CATALOG)
    assert settings is not None and settings.html
    assert sorted(p.relative_to(CATALOG).as_posix() for p in CATALOG.rglob("*") if p.is_file()) \
        == sorted(_render(EXAMPLES, settings.as_of))


# --- pages -------------------------------------------------------------------------------------

def test_a_profile_page_names_every_part_of_the_profile(registry: Path) -> None:
    page = _render(registry)[f"profiles/{ASYNC}.md"]
    for expected in ("`POST /mock/v1/dataset-jobs`", "`GET /mock/v1/dataset-jobs/{receipt.id}`",
                     "`GET /mock/v1/dataset-job-keys/{receiver_mutation_key}`",
                     "| payload format | `csv` |", "| gzip | level 6, mtime 0, zlib |",
                     "| rows per child | 100,000 | 100,000 |",
                     "| window days | default 3; a workload may choose 1 to 4 |",
                     "| children in flight | 1 |", "| submit | 3 | 1 s | 30 s | 300 s |",
                     "Mutation fence `receiver_duplicate_key`", "multipart filename",
                     "(`key_payload_binding: required`)", "claimed safe in: `local-dev`",
                     "Duplicate statuses: `409`", "| `id` | body `/job_id`, string |",
                     "600 s (receipt_ttl_s) + 60 s (skew_margin_s)",
                     "| counters from | `poll_response` |", "| sealed payloads kept | 30 day(s) |",
                     "**experimental**", "No certification of `mock.dataset-jobs@1`",
                     "| `measurements_async` | file csv | `mock_measurements` | `local-dev` |"):
        assert expected in page, expected
    sync = _render(registry)[f"profiles/{SYNC}.md"]
    assert "No mutation fence (`none`)" in sync and "| JSON | field order mapping" in sync


def test_certification_results_per_environment_and_level(registry: Path) -> None:
    _store(registry, "pass", _certification(registry, certified=AS_OF - dt.timedelta(days=12)))
    _store(registry, "fail", _certification(registry, certified=AS_OF - dt.timedelta(days=3),
                                            result="FAIL", level="vendor-live"))
    _store(registry, "expired", _certification(registry, certified=dt.date(2025, 1, 10),
                                               valid_days=30, level="static"))
    _store(registry, "old-contract", _certification(registry, certified=AS_OF,
                                                    contract="sha256:" + "0" * 64))
    files = _render(registry)
    page = files[f"profiles/{ASYNC}.md"]
    rows = [line for line in page.splitlines()
            if line.startswith("| `local-dev` |") and ":00Z |" in line]
    assert [line.split(" | ")[1] for line in rows] == ["static", "local-live", "local-live",
                                                       "vendor-live"]
    static, fresh_other, passing, failed = rows
    assert "| 2025-01-10T09:00:00Z | 693 |" in static  # days from 2025-01-10 to 2026-12-04
    assert "stale: past valid_until" in static
    assert "| **PASS** | 2026-11-22T09:00:00Z | 12 |" in passing and "**counts**" in passing
    assert "| **FAIL** |" in failed and "does not count: result FAIL" in failed
    assert "certifies another profile contract" in fresh_other
    assert "| 2026-12-04T09:00:00Z | 0 |" in fresh_other  # 09:00 on the as-of day
    assert "| `key_payload_binding` | **FAIL** |" in page
    assert "| `clock_skew` | **UNVERIFIED** |" in page
    assert "`replays=2`, `status=409`" in page
    assert re.search(r"Artifact `sha256:[0-9a-f]{64}` \(`certifications/local-dev/pass.json`\)",
                     page)
    index = files["README.md"]
    assert "| 4 in registry, 1 counting, 1 stale, 1 FAIL |" in index


def test_an_environment_max_age_makes_an_old_certification_stale(registry: Path) -> None:
    environment = registry / "environments" / "local-dev.yaml"
    environment.write_text(environment.read_text("utf-8")
                           + "certification: {minimum_maturity: beta, max_age_days: 30}\n",
                           "utf-8")
    _store(registry, "old", _certification(registry, certified=AS_OF - dt.timedelta(days=45)))
    page = _render(registry)[f"profiles/{ASYNC}.md"]
    assert "stale: older than 30 day(s), the environment's max_age_days" in page
    assert "requires maturity `beta` or more (refused: this profile is experimental)" in page
    assert "| 45 |" in page
    later = _render(registry, as_of=AS_OF - dt.timedelta(days=20))[f"profiles/{ASYNC}.md"]
    assert "**counts**" in later and "| 25 |" in later


def test_a_production_environment_without_a_policy_gets_the_gates_default(
        registry: Path) -> None:
    environment = registry / "environments" / "local-dev.yaml"
    environment.write_text(environment.read_text("utf-8").replace(
        "tier: development", "tier: production"), "utf-8")
    page = _render(registry)[f"profiles/{ASYNC}.md"]
    assert ("requires maturity `production` or more (refused: this profile is experimental); "
            "certification levels `vendor-live`, at most 90 day(s) old") in page


def test_a_certification_of_no_profile_here_is_listed_in_the_index(registry: Path) -> None:
    orphan = _certification(registry, certified=AS_OF).model_copy(update={"profile": "gone.p@3"})
    _store(registry, "orphan", orphan)
    index = _render(registry)["README.md"]
    assert "## Certifications of no profile here" in index
    assert "| `certifications/local-dev/orphan.json` | `gone.p@3` |" in index


# --- the source/sink matrix --------------------------------------------------------------------

def test_the_matrix_crosses_source_kinds_with_profiles(registry: Path) -> None:
    workloads = registry / "workloads"
    sync = (workloads / "measurements_sync.yaml").read_text("utf-8")
    (workloads / "pg_readings.yaml").write_text(
        sync.replace("name: measurements_sync", "name: pg_readings").replace(
            "  type: file\n  format: csv\n  path: ../data/measurements.csv\n",
            "  type: postgres\n  connection_ref: warehouse\n  table: public.readings\n"), "utf-8")
    (workloads / "nested").mkdir()
    (workloads / "nested" / "parquet_readings.yaml").write_text(
        sync.replace("name: measurements_sync", "name: parquet_readings").replace(
            "format: csv", "format: parquet").replace("measurements.csv", "readings.parquet"),
        "utf-8")
    index = _render(registry)["README.md"]
    assert "| source | mock.batch-ndjson@1 | mock.dataset-jobs@1 |" in index
    assert "| file csv | `measurements_sync` | `measurements_async` |" in index
    assert "| file parquet | `parquet_readings` | — |" in index
    assert "| postgres | `pg_readings` | — |" in index
    assert "| `incremental_append`, `partition_replace` | `none` | none | `measurements_sync`, " \
           "`parquet_readings`, `pg_readings` |" in index


# --- escaping, HTML ----------------------------------------------------------------------------

def test_hostile_text_is_escaped_in_markdown_and_html(registry: Path) -> None:
    profile = registry / "profiles" / f"{ASYNC}.yaml"
    profile.write_text(profile.read_text("utf-8").replace(
        "protocol_family:", f"description: '{HOSTILE}'\nprotocol_family:"), "utf-8")
    _store(registry, "hostile", _certification(registry, certified=AS_OF, claim=HOSTILE))
    files = _render(registry)
    for name, content in files.items():
        if name.endswith(".html"):
            assert "<script" not in content.lower() and "<img" not in content.lower(), name
            assert "onerror=alert" not in content.replace("onerror=alert(1)&gt;", ""), name
            assert "http://" not in content and "https://" not in content, name
            assert 'http-equiv="Content-Security-Policy" content="default-src \'none\';' in content
    html = files[f"html/{ASYNC}.html"]
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img" in html
    markdown = files[f"profiles/{ASYNC}.md"]
    assert r"\<script\>alert(\"x\")\</script\>" not in markdown  # quotes are not markup
    assert r"\<script\>alert(" in markdown and r"\&" in markdown and r"\*star\*" in markdown
    assert r"\_under\_" in markdown and r"\`tick\`" in markdown
    assert r"\| \*star\*" in markdown  # a pipe never splits a table cell
    assert '<a href="index.html">' in html and f'href="{SYNC}.html"' in files["html/index.html"]


def test_code_spans_survive_backticks_and_pipes() -> None:
    page = Page("p@1", "T", (Paragraph((Code("a`b"), " ", Code("`x"), " ", Code(""))),
                             Table(("h",), (((Code("a|b"),),),))))
    text = render_markdown(page, "c")
    assert "``a`b`` `` `x `` (empty)" in text
    assert "| `a\\|b` |" in text


# --- determinism -------------------------------------------------------------------------------

def test_output_depends_on_the_registry_and_the_as_of_date_only(registry: Path,
                                                                 tmp_path: Path) -> None:
    _store(registry, "pass", _certification(registry, certified=AS_OF - dt.timedelta(days=2)))
    elsewhere = tmp_path / "elsewhere" / "copy"
    shutil.copytree(registry, elsewhere)
    first = _render(registry)
    assert first == _render(registry) == render_catalog(elsewhere, BuildSettings(AS_OF, True),
                                                        display="somewhere/else")
    assert list(first) == sorted(first)
    assert str(tmp_path) not in "".join(first.values())
    assert _render(registry, as_of=AS_OF + dt.timedelta(days=1)) != first
    dates = set(re.findall(r"20\d\d-\d\d-\d\d", first["README.md"]))
    assert dates == {AS_OF.isoformat()}


# --- build and check ---------------------------------------------------------------------------

def test_check_names_each_stale_file_and_build_repairs_them(registry: Path,
                                                            tmp_path: Path) -> None:
    out = tmp_path / "catalog"
    built = _run("build", "--registry", str(registry), "--out", str(out), "--as-of", "2026-12-04")
    assert built.exit_code == 0 and "6 files (6 written, 0 removed)" in built.stdout
    assert _run("check", "--registry", str(registry), "--out", str(out)).exit_code == 0

    page = out / "profiles" / f"{ASYNC}.md"
    page.write_text(page.read_text("utf-8").replace("100,000", "99"), "utf-8")
    (out / "html" / f"{SYNC}.html").unlink()
    (out / "profiles" / "retired.profile@1.md").write_text("old\n", "utf-8")
    stale = _run("check", "--registry", str(registry), "--out", str(out))
    assert stale.exit_code == 1
    assert f"profiles/{ASYNC}.md: stale (differs from the registry's catalog)" in stale.stderr
    assert f"html/{SYNC}.html: stale (missing)" in stale.stderr
    assert "profiles/retired.profile@1.md: stale (no longer generated)" in stale.stderr
    assert "--as-of 2026-12-04 --html" in stale.stderr

    rebuilt = _run("build", "--registry", str(registry), "--out", str(out), "--as-of", "2026-12-04")
    assert "(2 written, 1 removed)" in rebuilt.stdout
    assert not (out / "profiles" / "retired.profile@1.md").exists()
    assert _run("check", "--registry", str(registry), "--out", str(out)).exit_code == 0


def test_a_registry_change_makes_the_catalog_stale(registry: Path, tmp_path: Path) -> None:
    out = tmp_path / "catalog"
    _run("build", "--registry", str(registry), "--out", str(out), "--as-of", "2026-12-04",
         "--no-html")
    assert not (out / "html").exists()
    _store(registry, "pass", _certification(registry, certified=AS_OF))
    stale = _run("check", "--registry", str(registry), "--out", str(out))
    assert stale.exit_code == 1
    assert f"profiles/{ASYNC}.md" in stale.stderr and "README.md" in stale.stderr
    assert "html/" not in stale.stderr  # the recorded --no-html is honoured


def test_build_without_html_removes_the_html_pages(registry: Path, tmp_path: Path) -> None:
    out = tmp_path / "catalog"
    _run("build", "--registry", str(registry), "--out", str(out), "--as-of", "2026-12-04")
    result = _run("build", "--registry", str(registry), "--out", str(out), "--as-of",
                  "2026-12-04", "--no-html")
    assert "3 removed" in result.stdout and not list((out / "html").iterdir())
    assert recorded_settings(out) == BuildSettings(AS_OF, html=False)


def test_build_defaults_to_today(registry: Path, tmp_path: Path) -> None:
    out = tmp_path / "catalog"
    assert _run("build", "--registry", str(registry), "--out", str(out)).exit_code == 0
    settings = recorded_settings(out)
    assert settings is not None
    assert abs((settings.as_of - dt.datetime.now(dt.UTC).date()).days) <= 1


def test_an_empty_directory_is_stale_and_a_broken_registry_is_an_error(registry: Path,
                                                                       tmp_path: Path) -> None:
    empty = _run("check", "--registry", str(registry), "--out", str(tmp_path / "none"))
    assert empty.exit_code == 1 and "README.md: stale (missing)" in empty.stderr
    assert "records no build settings" in empty.stderr
    profile = registry / "profiles" / f"{ASYNC}.yaml"
    profile.write_text(profile.read_text("utf-8").replace("protocol_family:", "protocol_famly:"),
                       "utf-8")
    for command in ("check", "build"):
        broken = _run(command, "--registry", str(registry), "--out", str(tmp_path / "out"))
        assert broken.exit_code == 2, broken.output
        assert "schema.unknown_field" in broken.stderr and f"{ASYNC}.yaml" in broken.stderr


def test_a_workload_naming_a_missing_binding_is_the_compilers_error(registry: Path,
                                                                    tmp_path: Path) -> None:
    workload = registry / "workloads" / "measurements_sync.yaml"
    workload.write_text(workload.read_text("utf-8").replace(
        "connection_ref: mock_measurements", "connection_ref: nowhere"), "utf-8")
    result = _run("check", "--registry", str(registry), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "registry.not_found" in result.stderr and "measurements_sync.yaml" in result.stderr
