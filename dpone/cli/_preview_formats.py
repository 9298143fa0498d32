"""`dpone preview`'s renderings of a ``dpone.request_preview.v1`` for people and for tools.

``text`` shows each request in full (beyond :data:`SHOWN_BLOCKS` children, the first and the
last) and a table of them all; ``curl`` is one runnable command per request, whose credential is
read from where the binding keeps it when the command runs (a shell variable, a file, a token
request), never printed; ``har`` is a HAR 1.2 log that browser dev tools and API clients import.
Nothing here resolves a credential or opens a connection: they render the document.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import httpx

from dpone import __version__
from dpone.cli._table import summarized
from dpone.contracts.binding import ConnectionBinding
from dpone.contracts.documents import PreviewedRequest, RequestPreview
from dpone.executor.transport import CredentialHeader, authority_url, credential_header

SHOWN_BLOCKS: Final = 10
"""Beyond this many children the text shows the first and the last request in full."""
HAR_TEXT_BYTES: Final = 1 << 20
"""A HAR inlines a body of at most this many bytes when it is UTF-8 text."""
CURL_SKIPPED: Final = frozenset({"host", "content-length", "connection"})
"""Headers curl writes itself (from the URL, the body file and its connection handling)."""
_BODYLESS: Final = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})


def _scope(request: PreviewedRequest) -> str:
    scope = f"[{request.scope.from_date}, {request.scope.to_date})"
    if request.scope.parts > 1:
        scope += f" part {request.scope.part}/{request.scope.parts}"
    return scope


def _block(request: PreviewedRequest) -> list[str]:
    lines = [f"child {request.ordinal} {_scope(request)}: {request.rows} rows",
             f"  {request.method} {request.url}"]
    width = max(len(h.name) for h in request.headers)
    lines += [f"  {h.name.ljust(width)}: {h.value}" for h in request.headers]
    encoding = f", {request.content_encoding}-compressed" if request.content_encoding else ""
    keys, receipt = request.keys, request.receipt
    carried = f", in the {keys.carried_in})" if keys.carried_in else ")"
    lines += [f"  body          {request.body_bytes} bytes {request.body_digest}",
              f"  payload       {request.decoded_bytes} decoded / {request.wire_bytes} wire "
              f"bytes {request.payload_digest}{encoding}",
              f"  delivery key  {keys.delivery_key}",
              f"  receiver key  {keys.receiver_mutation_key} ({keys.fence}{carried}",
              f"  accepted      {', '.join(map(str, receipt.accepted_statuses))}"
              + (f"; receipt {', '.join(receipt.fields)}" if receipt.fields else "")
              + (f"; polled by {receipt.poll}" if receipt.poll else "")]
    lines += [f"  sample        {json.dumps(record, ensure_ascii=False)}"
              for record in request.sample or ()]
    return lines


def text(preview: RequestPreview) -> str:
    """Each request in full (the first and last beyond :data:`SHOWN_BLOCKS`), then a table."""
    requests = preview.requests
    lines = [f"preview {preview.boundary.render()}: {len(requests)} of "
             f"{preview.children_total} request(s) to {preview.authority} "
             f"({preview.profile}, binding {preview.binding}); nothing sent"]
    shown = requests if len(requests) <= SHOWN_BLOCKS else (requests[0], requests[-1])
    for index, request in enumerate(shown):
        if index == 1 and len(shown) < len(requests):
            lines += ["", f"... {len(requests) - 2} more requests (--child N shows any one; "
                          "--format json shows them all) ..."]
        lines += ["", *_block(request)]
    header = ("ordinal", "scope", "rows", "decoded bytes", "wire bytes", "body bytes", "body")
    rows = [(str(r.ordinal), _scope(r), str(r.rows), str(r.decoded_bytes), str(r.wire_bytes),
             str(r.body_bytes), r.body_digest[:19]) for r in requests]
    total = ("total", f"{len(requests)} requests", str(sum(r.rows for r in requests)),
             str(sum(r.decoded_bytes for r in requests)),
             str(sum(r.wire_bytes for r in requests)),
             str(sum(r.body_bytes for r in requests)), "")
    lines += ["", summarized(header, rows, {"ordinal", "rows", "decoded bytes", "wire bytes",
                                            "body bytes"},
                             noun="requests", how="--format json lists them all", total=total)]
    return "\n".join(lines)


def _value(credential: CredentialHeader) -> tuple[str, list[str]]:
    """The shell expression of the credential's value (inside double quotes) and the comments
    that tell where it comes from when no variable or file holds it."""
    if credential.file is not None:
        return f"$(cat {shlex.quote(credential.file)})", []
    if len(credential.variables) == 2:  # conn: a variable per field of a pair
        return f"${credential.variables[0]}:${credential.variables[1]}", []
    if len(credential.variables) == 1:
        return f"${credential.variables[0]}", []
    return "$DPONE_CREDENTIAL", [f"# set DPONE_CREDENTIAL to the credential of "
                                 f"{credential.reference}"]


def _oauth2_token(binding: ConnectionBinding, credential: CredentialHeader) -> list[str]:
    """A shell line that asks the token endpoint for the bearer, as the transport does."""
    pair, notes = _value(credential)
    token_url = str(authority_url(binding.authority).copy_with(
        raw_path=(binding.auth_options.token_path or "/").encode("ascii")))
    scope = (" --data-urlencode " + shlex.quote("scope=" + " ".join(binding.auth_options.scopes))
             if binding.auth_options.scopes else "")
    return [*notes, f"DPONE_ACCESS_TOKEN=$(curl -sS --fail -u \"{pair}\" -d "
                    f"grant_type=client_credentials{scope} {shlex.quote(token_url)} | python3 -c "
                    "'import json, sys; print(json.load(sys.stdin)[\"access_token\"])')"]


def curl_credential(binding: ConnectionBinding) -> tuple[list[str], list[str]]:
    """``(lines before the command, arguments of the command)`` that send ``binding``'s
    credential, read when the command runs: a variable, a file or a token request."""
    credential = credential_header(binding)
    if credential is None:
        if binding.auth_provider == "mtls":
            return [f"# mTLS: add --cert with the client certificate {binding.credential_ref}"], []
        return [], []
    if credential.provider == "oauth2_client_credentials":
        return (_oauth2_token(binding, credential),
                [f"-H \"{credential.name}: Bearer $DPONE_ACCESS_TOKEN\""])
    value, notes = _value(credential)
    if credential.provider == "basic":
        return notes, [f"-u \"{value}\""]
    return notes, [f"-H \"{credential.name}: {credential.scheme}{value}\""]


def curl(preview: RequestPreview, binding: ConnectionBinding,
         bodies: Mapping[int, str]) -> str:
    """One curl command per request; ``bodies`` names the file holding each one's exact body
    (by ordinal); a request without one reads ``child-NNNN.body`` and says how to write it."""
    before, credential = curl_credential(binding)
    lines = ["# dpone preview: the credential is read where the binding keeps it when curl runs",
             *before]
    if any(r.ordinal not in bodies for r in preview.requests):
        lines.append("# add --body-dir DIR to write each request's exact body where "
                     "--data-binary reads it")
    for request in preview.requests:
        arguments = [shlex.quote(f"{h.name}: {h.value}") for h in request.headers
                     if not h.credential and h.name.lower() not in CURL_SKIPPED]
        command = [f"curl -X {request.method} {shlex.quote(request.url)}",
                   *(f"-H {argument}" for argument in arguments), *credential]
        if request.body_bytes > 0 or request.method not in _BODYLESS:
            body = bodies.get(request.ordinal, f"child-{request.ordinal:04d}.body")
            command.append(f"--data-binary @{shlex.quote(body)}")
        lines += [f"# child {request.ordinal}: {request.rows} rows, body {request.body_bytes} "
                  f"bytes {request.body_digest}", " \\\n  ".join(command)]
    return "\n".join(lines)


def _post_data(request: PreviewedRequest, body: Iterable[bytes]) -> dict[str, str]:
    inlined = ""
    if request.body_bytes <= HAR_TEXT_BYTES:
        try:
            inlined = b"".join(body).decode("utf-8")
        except UnicodeDecodeError:
            inlined = ""
    note = "" if inlined or request.body_bytes == 0 else ": binary or larger than 1 MiB, " \
                                                         "not inlined"
    return {"mimeType": request.content_type, "text": inlined,
            "comment": f"{request.body_bytes} bytes {request.body_digest}{note}"}


def har(preview: RequestPreview, bodies: Sequence[Iterable[bytes]]) -> str:
    """A HAR 1.2 log of the requests, unanswered (nothing was sent); ``bodies`` are each
    request's exact body (replayable), read only when it is small enough to inline."""
    started = dt.datetime.combine(preview.boundary.from_date, dt.time(),
                                  tzinfo=dt.UTC).isoformat()
    entries = []
    for request, body in zip(preview.requests, bodies, strict=True):
        query = httpx.URL(request.url).params.multi_items()
        entries.append({
            "startedDateTime": started, "time": 0,
            "comment": f"child {request.ordinal}: {request.rows} rows; not sent (dpone preview)",
            "request": {
                "method": request.method, "url": request.url, "httpVersion": "HTTP/1.1",
                "cookies": [],
                "headers": [{"name": h.name, "value": h.value} for h in request.headers],
                "queryString": [{"name": name, "value": value} for name, value in query],
                "postData": _post_data(request, body),
                "headersSize": -1, "bodySize": request.body_bytes},
            "response": {"status": 0, "statusText": "", "httpVersion": "HTTP/1.1",
                         "cookies": [], "headers": [],
                         "content": {"size": 0, "mimeType": "x-unknown"},
                         "redirectURL": "", "headersSize": -1, "bodySize": -1},
            "cache": {}, "timings": {"send": 0, "wait": 0, "receive": 0}})
    log = {"log": {"version": "1.2", "creator": {"name": "dpone", "version": __version__},
                   "comment": f"dpone preview {preview.boundary.render()} of plan "
                              f"{preview.plan_digest}: requests not sent, credentials shown "
                              "as references", "entries": entries}}
    return json.dumps(log, indent=2, ensure_ascii=False)
