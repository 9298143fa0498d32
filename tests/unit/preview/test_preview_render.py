"""render_child shows each sealed child's request as the transport sends it: for every child of
both examples, the transport (over httpx.MockTransport, with a credential) sends the method, URL,
headers and body the preview shows, except that the preview's credential is its reference."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import httpx
import pytest

from dpone.contracts import DponeError
from dpone.executor.preview import render_child
from dpone.executor.supervisor import outbound_request
from dpone.executor.transport import Credential, HttpTransport, Secret
from support.common import EXAMPLES
from support.example_seal import SealedExample, seal_example

TOKEN = "tok-preview-render-never-shown"
INTERVALS = {"measurements_sync": (dt.date(2026, 8, 1), dt.date(2026, 8, 15)),
             "measurements_async": (dt.date(2026, 8, 1), dt.date(2026, 8, 7))}


@pytest.fixture(params=sorted(INTERVALS))
def example(request: pytest.FixtureRequest, tmp_path: Path) -> SealedExample:
    workload = str(request.param)
    return seal_example(EXAMPLES / "workloads" / f"{workload}.yaml", EXAMPLES,
                        tmp_path / "artifacts", INTERVALS[workload])


def test_every_child_is_shown_as_the_transport_sends_it(example: SealedExample) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        request.read()
        seen.append(request)
        return httpx.Response(200, json={})

    binding = example.plan.binding.snapshot
    credential = Credential("bearer", {"token": Secret(TOKEN)})
    children = example.topology.children
    assert len(children) >= 2
    with HttpTransport(binding, credential, transport=httpx.MockTransport(handler)) as transport:
        for child in children:
            transport.send(outbound_request(example.plan, child, example.store))
    for child, sent in zip(children, seen, strict=True):
        shown = render_child(example.plan, child, example.store).request
        assert (shown.method, shown.url) == (sent.method, str(sent.url))
        assert shown.path == sent.url.raw_path.decode("ascii")
        wire = [(h.name, h.value) for h in shown.headers if not h.credential]
        assert wire == [(n.decode(), v.decode()) for n, v in sent.headers.raw
                        if n.lower() != b"authorization"]
        assert [(h.name, h.value) for h in shown.headers if h.credential] == [
            ("Authorization", "<bearer from env DPONE_CONN_MOCK_MEASUREMENTS_TOKEN>")]
        assert shown.body_bytes == len(sent.content)
        assert shown.body_digest == "sha256:" + hashlib.sha256(sent.content).hexdigest()
        assert TOKEN not in shown.model_dump_json()


def test_the_body_streams_again_and_the_sample_is_opt_in(example: SealedExample) -> None:
    child = example.topology.children[0]
    rendered = render_child(example.plan, child, example.store, sample=2)
    body = b"".join(rendered.body)
    assert b"".join(rendered.body) == body  # replayable
    assert "sha256:" + hashlib.sha256(body).hexdigest() == rendered.request.body_digest
    sample = rendered.request.sample
    assert sample is not None and len(sample) == 2
    assert set(sample[0]) == {c.name for c in example.plan.mapping.columns}
    assert render_child(example.plan, child, example.store).request.sample is None


def test_a_payload_that_is_not_the_sealed_one_is_refused(example: SealedExample) -> None:
    child = example.topology.children[0]
    stored = example.store.local_file(child.payload.key)
    assert stored is not None
    stored.chmod(0o644)
    data = stored.read_bytes()
    stored.write_bytes(bytes([data[0] ^ 0xFF]) + data[1:])  # same size, other bytes
    with pytest.raises(DponeError) as raised:
        render_child(example.plan, child, example.store)
    assert raised.value.code == "artifact.conflict"
