"""The certification artifact: content-addressed in the artifact store, bound to the exact
profile contract, binding semantics, environment and product version, valid against its
published schema, read by the compile gate, and free of any credential or payload row."""

from __future__ import annotations

import json
from pathlib import Path

from jsonschema import Draft202012Validator

from dpone import __version__
from dpone.artifacts import open_artifact_store
from dpone.compiler import compile_workload
from dpone.contracts import canonical_json, content_digest
from dpone.contracts.certification import CERTIFICATION_KEY_PREFIX, CERTIFICATION_SCHEMA_ID
from support.certify import (
    ASYNC,
    certify,
    certify_json,
    mock_receiver,
    registry_for,
    short_receipt_ttl,
    written,
)
from support.cli import TOKEN, TWO_ASYNC_CHILDREN
from support.common import ROOT

SCHEMA = ROOT / "dpone" / "contracts" / "schemas" / f"{CERTIFICATION_SCHEMA_ID}.schema.json"


def _files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


def test_the_artifact_is_content_addressed_and_bound_to_what_it_certifies(
        tmp_path: Path) -> None:
    with mock_receiver() as receiver:
        dpone = registry_for(tmp_path, receiver)

        run = certify(dpone, ASYNC, "local-live", "--retention-delay", "0.5", "--max-wait", "3")

    assert run.code == 0, run.out + run.err
    path = dpone.registry / "certifications" / ASYNC / "local-dev" / "local-live.json"
    document = json.loads(path.read_text("utf-8"))
    assert path.read_text("utf-8") == json.dumps(document, indent=2, sort_keys=True,
                                                 ensure_ascii=False) + "\n"
    canonical = canonical_json(document)
    digest = content_digest(canonical)
    key = f"{CERTIFICATION_KEY_PREFIX}{digest.removeprefix('sha256:')}.json"
    assert open_artifact_store(str(dpone.state / "artifacts")).get_bytes(key) == canonical
    assert f"  artifact  {key}\n  digest    {digest}\n  file      {path}\n" in run.out

    plan = compile_workload(dpone.registry / "workloads" / "measurements_async.yaml",
                            dpone.registry).plan
    certification = written(dpone, ASYNC)
    assert certification.profile == plan.profile.ref == ASYNC
    assert certification.profile_contract_digest == plan.profile.profile_contract_digest
    assert certification.operation_semantics_digest == plan.profile.operation_semantics_digest
    assert certification.binding == plan.binding.ref
    assert (certification.receiver_binding_semantics_digest
            == plan.binding.receiver_binding_semantics_digest)
    assert certification.environment == "local-dev"
    assert certification.product_version == __version__
    assert certification.sandbox_resource == "dpone_certification"
    assert certification.certified_at < certification.valid_until
    validator = Draft202012Validator(json.loads(SCHEMA.read_text("utf-8")),
                                     format_checker=Draft202012Validator.FORMAT_CHECKER)
    assert list(validator.iter_errors(document)) == []


def test_a_passing_certification_is_what_the_compile_gate_accepts(tmp_path: Path) -> None:
    with mock_receiver(receipt_ttl_seconds=2.0) as receiver:
        dpone = registry_for(tmp_path, receiver)
        short_receipt_ttl(dpone.registry, 2)
        environment = dpone.registry / "environments" / "local-dev.yaml"
        environment.write_text(environment.read_text("utf-8") + "certification: "
                               "{required_levels: [local-live], max_age_days: 30}\n", "utf-8")
        workload = str(dpone.registry / "workloads" / "measurements_async.yaml")
        refused = dpone("check", workload, "--registry", str(dpone.registry),
                        "--format", "json")
        assert refused.code == 2
        assert refused.json()["code"] == "certification.missing"

        run = certify(dpone, ASYNC, "local-live", "--retention-delay", "0.5")
        assert run.code == 0, run.out + run.err

        checked = dpone("check", workload, "--registry", str(dpone.registry))
        assert checked.code == 0, checked.out + checked.err
        delivered = dpone.deliver("measurements_async", TWO_ASYNC_CHILDREN)
        assert delivered.code == 0, delivered.out + delivered.err


def test_format_json_prints_the_certification_and_no_credential_leaves_the_process(
        tmp_path: Path) -> None:
    with mock_receiver() as receiver:
        dpone = registry_for(tmp_path, receiver)

        code, document, stderr = certify_json(dpone, ASYNC, "local-live", "--retention-delay",
                                              "0.5", "--max-wait", "3")
        text = certify(dpone, ASYNC, "local-live", "--retention-delay", "0.5", "--max-wait", "3")

    assert code == 0, stderr
    assert document["schema"] == CERTIFICATION_SCHEMA_ID
    validator = Draft202012Validator(json.loads(SCHEMA.read_text("utf-8")))
    assert list(validator.iter_errors(document)) == []
    evidence = [exchange for case in document["cases"] for exchange in case["evidence"]]
    assert evidence and all(len(exchange["answer_excerpt"]) <= 512 for exchange in evidence)
    assert all(exchange["request_body_digest"].startswith("sha256:")
               for exchange in evidence if exchange["method"] == "POST")
    outputs = [json.dumps(document), stderr, text.out, text.err]
    outputs += [path.read_text("utf-8", errors="replace")
                for path in _files(dpone.registry / "certifications")]
    outputs += [path.read_bytes().decode("utf-8", errors="replace")
                for path in _files(dpone.state / "artifacts")]
    for output in outputs:
        assert TOKEN not in output
        assert "Bearer" not in output
        assert "dpone-certification-" not in output  # the synthetic rows' marker


def test_out_writes_the_certification_under_another_directory(tmp_path: Path) -> None:
    with mock_receiver() as receiver:
        dpone = registry_for(tmp_path, receiver)
        out = tmp_path / "evidence"

        run = certify(dpone, ASYNC, "static", "--out", str(out))

    assert run.code == 0, run.out + run.err
    path = out / ASYNC / "local-dev" / "static.json"
    assert f"  file      {path}\n" in run.out
    assert json.loads(path.read_text("utf-8"))["level"] == "static"
    assert not (dpone.registry / "certifications").exists()
    assert f"--out {out}" in run.out.split("next: ", 1)[1]
