"""The renderings of a request preview: curl commands that read the credential where the
binding keeps it (never a value), a HAR 1.2 log, and text that stays short for many children."""

from __future__ import annotations

import datetime as dt
import json
import shlex
import subprocess
from pathlib import Path

import pytest

from dpone.cli._preview_formats import SHOWN_BLOCKS, curl, curl_credential, har, text
from dpone.contracts.binding import ConnectionBinding
from dpone.contracts.documents import Interval, PreviewedRequest, RequestPreview
from dpone.executor.preview import RenderedChild, render_child
from support.common import EXAMPLES
from support.example_seal import seal_example
from support.transport import binding

QUOTED_PATH = "/run/secrets/rx's$token"
INTERVALS = {"measurements_sync": (dt.date(2026, 8, 1), dt.date(2026, 8, 15)),
             "measurements_async": (dt.date(2026, 8, 1), dt.date(2026, 8, 7))}


def _rendered(tmp_path: Path, workload: str) -> tuple[RequestPreview, list[RenderedChild]]:
    sealed = seal_example(EXAMPLES / "workloads" / f"{workload}.yaml", EXAMPLES,
                          tmp_path / workload, INTERVALS[workload])
    items = [render_child(sealed.plan, c, sealed.store) for c in sealed.topology.children]
    document = RequestPreview(
        plan_digest=sealed.plan_digest, parent_digest=sealed.topology.parent_digest,
        boundary=Interval.of(*INTERVALS[workload]), profile=sealed.plan.profile.ref,
        binding=sealed.plan.binding.ref, authority=sealed.plan.binding.snapshot.authority,
        children_total=len(items), requests=tuple(i.request for i in items))
    return document, items


@pytest.mark.parametrize(("provider", "ref", "options", "before", "arguments"), [
    ("bearer", "env:RX_TOKEN", {}, [], ['-H "Authorization: Bearer $RX_TOKEN"']),
    ("api_key_header", "conn:rx", {"header_name": "X-Api-Key"}, [],
     ['-H "X-Api-Key: $DPONE_CONN_RX_TOKEN"']),
    ("bearer", "file:/run/secrets/rx's$token", {}, [],
     [f'-H "Authorization: Bearer $(cat {shlex.quote(QUOTED_PATH)})"']),
    ("basic", "env:RX_PAIR", {}, [], ['-u "$RX_PAIR"']),
    ("basic", "conn:rx", {}, [], ['-u "$DPONE_CONN_RX_USERNAME:$DPONE_CONN_RX_PASSWORD"']),
    ("bearer", "vault://kv/rx#token", {},
     ["# set DPONE_CREDENTIAL to the credential of <bearer from vault://kv/rx#token>"],
     ['-H "Authorization: Bearer $DPONE_CREDENTIAL"']),
    ("mtls", "file:/etc/rx.pem", {}, ["# mTLS: add --cert with the client certificate "
                                      "file:/etc/rx.pem"], []),
    ("none", None, {}, [], []),
], ids=["bearer-env", "api-key-conn", "bearer-file", "basic-env", "basic-conn", "vault", "mtls",
        "none"])
def test_curl_reads_the_credential_when_it_runs(
        provider: str, ref: str | None, options: dict[str, str], before: list[str],
        arguments: list[str]) -> None:
    assert curl_credential(binding(provider=provider, credential_ref=ref, **options)) == (
        before, arguments)


def test_curl_asks_the_token_endpoint_for_an_oauth2_bearer() -> None:
    before, arguments = curl_credential(binding(
        provider="oauth2_client_credentials", credential_ref="conn:rx",
        token_path="/oauth/token", scopes=("ingest:write",)))
    [line] = before
    assert line.startswith('DPONE_ACCESS_TOKEN=$(curl -sS --fail -u '
                           '"$DPONE_CONN_RX_CLIENT_ID:$DPONE_CONN_RX_CLIENT_SECRET" '
                           "-d grant_type=client_credentials --data-urlencode scope=ingest:write "
                           "https://receiver.example.test/oauth/token | python3 -c")
    assert arguments == ['-H "Authorization: Bearer $DPONE_ACCESS_TOKEN"']


@pytest.mark.parametrize("workload", sorted(INTERVALS))
def test_each_request_is_one_curl_command_reading_its_body_file(tmp_path: Path,
                                                                workload: str) -> None:
    document, items = _rendered(tmp_path, workload)
    bodies = {items[0].request.ordinal: str(tmp_path / "first body")}
    rendered = curl(document, document_binding(), bodies)
    commands = _commands(rendered)
    assert len(commands) == len(items)
    for command, item in zip(commands, items, strict=True):
        request = item.request
        assert command[:4] == ["curl", "-X", request.method, request.url]
        headers = [command[i + 1] for i, word in enumerate(command) if word == "-H"]
        assert "Authorization: Bearer $DPONE_CONN_MOCK_MEASUREMENTS_TOKEN" in headers
        assert f"Content-Type: {request.content_type}" in headers
        assert not any(h.lower().startswith(("host:", "content-length:", "connection:"))
                       for h in headers)
        assert command[-2] == "--data-binary"
    assert commands[0][-1] == f"@{tmp_path / 'first body'}"
    assert commands[1][-1] == f"@child-{items[1].request.ordinal:04d}.body"
    assert "# add --body-dir DIR" in rendered


def document_binding() -> ConnectionBinding:
    return binding(authority="http://127.0.0.1:8765",
                   credential_ref="env:DPONE_CONN_MOCK_MEASUREMENTS_TOKEN")


def _commands(rendered: str) -> list[list[str]]:
    joined = rendered.replace(" \\\n  ", " ")
    return [shlex.split(line) for line in joined.split("\n") if line.startswith("curl ")]


def test_the_har_log_is_har_1_2(tmp_path: Path) -> None:
    document, items = _rendered(tmp_path, "measurements_async")
    log = json.loads(har(document, [i.body for i in items]))["log"]
    assert log["version"] == "1.2" and log["creator"]["name"] == "dpone"
    for entry, item in zip(log["entries"], items, strict=True):
        request = entry["request"]
        assert set(entry) == {"startedDateTime", "time", "comment", "request", "response",
                              "cache", "timings"}
        assert dt.datetime.fromisoformat(entry["startedDateTime"]).tzinfo is not None
        assert (request["method"], request["url"], request["bodySize"]) == (
            item.request.method, item.request.url, item.request.body_bytes)
        assert request["queryString"] == []
        assert {"name": "Authorization",
                "value": "<bearer from env DPONE_CONN_MOCK_MEASUREMENTS_TOKEN>"} in request[
                    "headers"]
        post = request["postData"]
        assert post["mimeType"] == item.request.content_type
        assert post["text"] == ""  # a gzip part is binary: named by size and digest instead
        assert post["comment"].startswith(f"{item.request.body_bytes} bytes "
                                          f"{item.request.body_digest}")
        assert entry["response"]["status"] == 0 and set(entry["timings"]) >= {
            "send", "wait", "receive"}


def test_a_text_body_is_inlined_and_a_query_is_decoded(tmp_path: Path) -> None:
    document, items = _rendered(tmp_path, "measurements_sync")
    first = items[0].request.model_copy(update={"url": items[0].request.url + "?q=%C3%A4+b&x="})
    document = document.model_copy(update={"requests": (first,)})
    [entry] = json.loads(har(document, [items[0].body]))["log"]["entries"]
    assert entry["request"]["queryString"] == [{"name": "q", "value": "ä b"},
                                               {"name": "x", "value": ""}]
    assert entry["request"]["postData"]["text"].encode() == b"".join(items[0].body)


def test_text_shows_the_first_and_last_of_many_requests_and_a_table_of_all(
        tmp_path: Path) -> None:
    document, items = _rendered(tmp_path, "measurements_sync")
    many = SHOWN_BLOCKS + 5
    requests: list[PreviewedRequest] = [items[0].request.model_copy(update={"ordinal": n})
                                        for n in range(1, many + 1)]
    shown = text(document.model_copy(update={"requests": tuple(requests),
                                             "children_total": many})).splitlines()
    assert [line for line in shown if line.startswith("child ")] == [
        f"child 1 {_scope(requests[0])}: {requests[0].rows} rows",
        f"child {many} {_scope(requests[0])}: {requests[0].rows} rows"]
    assert f"... {many - 2} more requests (--child N shows any one; --format json shows them " \
           "all) ..." in shown
    table = shown[shown.index(next(line for line in shown if line.lstrip().startswith(
        "ordinal"))):]
    assert len(table) == 1 + many


def _scope(request: PreviewedRequest) -> str:
    return f"[{request.scope.from_date}, {request.scope.to_date})"


def test_the_shell_reads_the_credential_file_whatever_its_name(tmp_path: Path) -> None:
    secret_file = tmp_path / "rx's$token`"
    secret_file.write_text("file-credential\n", encoding="utf-8")
    _, [argument] = curl_credential(binding(credential_ref=f"file:{secret_file}"))
    shown = subprocess.run(["bash", "-c", f"printf '%s' {argument.removeprefix('-H ')}"],
                           capture_output=True, text=True, check=True, env={})
    assert shown.stdout == "Authorization: Bearer file-credential"
