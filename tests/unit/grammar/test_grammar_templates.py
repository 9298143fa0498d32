"""Typed request templates: accepted shapes, rendering, and every rejection code with its column."""

from __future__ import annotations

import json

import pytest

from dpone.contracts import DponeError
from dpone.grammar import Literal, Placeholder, Template, TemplateContext, parse_template

PATH = TemplateContext.PATH
QUERY = TemplateContext.QUERY
HEADER = TemplateContext.HEADER
MULTIPART = TemplateContext.MULTIPART_SCALAR

VALUES = {
    "resource": "orders",
    "delivery_key": "dk-01HZX",
    "receiver_mutation_key": "rmk_7",
    "scope.from": "2024-01-01",
    "scope.to": "2024-02-01T00:00:00+00:00",
    "receipt.id": "job 42/a",
    "receipt.status_url": "../../admin",
}

# (template, context, allow_receipt, symbols, rendered with VALUES)
ACCEPTED = [
    ("/jobs/{receipt.id}", PATH, True, {"receipt.id"}, "/jobs/job%2042%2Fa"),
    ("/v1/{resource}.csv", PATH, False, {"resource"}, "/v1/orders.csv"),
    ("/v1/bulk", PATH, False, set(), "/v1/bulk"),
    ("/", PATH, False, set(), "/"),
    ("/v1/{resource}/batches/{delivery_key}", PATH, False, {"resource", "delivery_key"},
     "/v1/orders/batches/dk-01HZX"),
    ("/v1/x-{resource}", PATH, False, {"resource"}, "/v1/x-orders"),
    ("/v1/{resource}-{delivery_key}", PATH, False, {"resource", "delivery_key"},
     "/v1/orders-dk-01HZX"),
    ("/jobs/{receipt.status_url}", PATH, True, {"receipt.status_url"},
     "/jobs/..%2F..%2Fadmin"),
    ("/a/caf%C3%A9/{resource}", PATH, False, {"resource"}, "/a/caf%C3%A9/orders"),
    ("/a;v=1/b:c@d/$x/~u/{resource}", PATH, False, {"resource"}, "/a;v=1/b:c@d/$x/~u/orders"),
    ("/.well-known/x/..a/a../.../{resource}", PATH, False, {"resource"},
     "/.well-known/x/..a/a../.../orders"),
    ("/v1/items/", PATH, False, set(), "/v1/items/"),
    ("{scope.from}", QUERY, False, {"scope.from"}, "2024-01-01"),
    ("{scope.to}", QUERY, False, {"scope.to"}, "2024-02-01T00:00:00%2B00:00"),
    ("created:desc", QUERY, False, set(), "created:desc"),
    ("a&b=c+d%", QUERY, False, set(), "a%26b%3Dc%2Bd%25"),
    ("batch-{delivery_key}", QUERY, False, {"delivery_key"}, "batch-dk-01HZX"),
    ("{receipt.id}", QUERY, True, {"receipt.id"}, "job%2042/a"),
    ("", QUERY, False, set(), ""),
    ("text/csv; charset=utf-8", HEADER, False, set(), "text/csv; charset=utf-8"),
    ("dpone {receiver_mutation_key}", HEADER, False, {"receiver_mutation_key"}, "dpone rmk_7"),
    ("{receipt.id}", HEADER, True, {"receipt.id"}, "job 42/a"),
    ("{resource} from {scope.from}", MULTIPART, False, {"resource", "scope.from"},
     "orders from 2024-01-01"),
]


@pytest.mark.parametrize(("text", "context", "allow_receipt", "symbols", "rendered"), ACCEPTED)
def test_accepted_templates_parse_and_render(
    text: str, context: TemplateContext, allow_receipt: bool, symbols: set[str], rendered: str
) -> None:
    template = parse_template(text, context=context, allow_receipt=allow_receipt)
    assert template.source == text
    assert template.context is context
    assert template.symbols == frozenset(symbols)
    assert template.render(VALUES) == rendered


# (template, context, allow_receipt, code, column)
REJECTED = [
    # template.absolute_url
    ("http://evil.example/x", PATH, False, "template.absolute_url", 1),
    ("https:", PATH, False, "template.absolute_url", 1),
    ("//evil.example/x", PATH, False, "template.absolute_url", 1),
    ("mailto:a@b.example", PATH, False, "template.absolute_url", 1),
    ("v1/{resource}", PATH, False, "template.absolute_url", 1),
    ("{resource}/x", PATH, False, "template.absolute_url", 1),
    ("@evil.example/x", PATH, False, "template.absolute_url", 1),
    ("https://evil.example/cb", QUERY, False, "template.absolute_url", 1),
    ("mailto:x@y.example", QUERY, False, "template.absolute_url", 1),
    ("//evil.example", HEADER, False, "template.absolute_url", 1),
    ("custom+x://evil", MULTIPART, False, "template.absolute_url", 1),
    # template.traversal
    ("/a/../b", PATH, False, "template.traversal", 4),
    ("/..", PATH, False, "template.traversal", 2),
    ("/a/./b", PATH, False, "template.traversal", 4),
    ("/a/%2e%2e/b", PATH, False, "template.traversal", 4),
    ("/a/%2E./b", PATH, False, "template.traversal", 4),
    ("/a/.%2e", PATH, False, "template.traversal", 4),
    ("/a/%2E", PATH, False, "template.traversal", 4),
    ("/a/%252e%252e/b", PATH, False, "template.traversal", 4),
    ("/a/..;x=1/b", PATH, False, "template.traversal", 4),
    ("/a%2fb", PATH, False, "template.traversal", 3),
    ("/a%2Fb", PATH, False, "template.traversal", 3),
    ("/x/a%5Cb", PATH, False, "template.traversal", 5),
    ("/a/b%252f", PATH, False, "template.traversal", 5),
    ("/a\\b", PATH, False, "template.traversal", 3),
    ("/{resource}/..", PATH, False, "template.traversal", 13),
    # template.control_character
    ("/a\nb", PATH, False, "template.control_character", 3),
    ("/a b", PATH, False, "template.control_character", 3),
    ("/a\tb", PATH, False, "template.control_character", 3),
    ("/a\x7f", PATH, False, "template.control_character", 3),
    ("/{resource}\u202e", PATH, False, "template.control_character", 12),
    ("a b", QUERY, False, "template.control_character", 2),
    ("x\r\nSet-Cookie: y", HEADER, False, "template.control_character", 2),
    ("a\u00a0b", HEADER, False, "template.control_character", 2),
    ("x\x00", MULTIPART, False, "template.control_character", 2),
    ("/{re\nsource}", PATH, False, "template.control_character", 5),
    # template.unknown_symbol
    ("/{user.input}", PATH, False, "template.unknown_symbol", 2),
    ("/jobs/{receipt.id}", PATH, False, "template.unknown_symbol", 7),
    ("/{env.HOME}", PATH, False, "template.unknown_symbol", 2),
    ("/{receipt.ID}", PATH, True, "template.unknown_symbol", 2),
    ("/{receipt.}", PATH, True, "template.unknown_symbol", 2),
    ("/{receipt." + "a" * 65 + "}", PATH, True, "template.unknown_symbol", 2),
    ("{resource.__class__}", QUERY, False, "template.unknown_symbol", 1),
    ("{0}", HEADER, False, "template.unknown_symbol", 1),
    ("x-{scope}", MULTIPART, False, "template.unknown_symbol", 3),
    # template.nested
    ("/{{resource}}", PATH, False, "template.nested", 3),
    ("/{a{b}}", PATH, False, "template.nested", 4),
    ("/a}", PATH, False, "template.nested", 3),
    ("/a/{resource", PATH, False, "template.nested", 4),
    ("/a/{", PATH, False, "template.nested", 4),
    ("/${resource}", PATH, False, "template.nested", 2),
    ("{{ resource }}", PATH, False, "template.nested", 2),
    ("{% if x %}", HEADER, False, "template.nested", 2),
    ("{# note #}", HEADER, False, "template.nested", 2),
    ("{resource|upper}", QUERY, False, "template.nested", 10),
    ("{resource()}", QUERY, False, "template.nested", 10),
    ("{resource[0]}", QUERY, False, "template.nested", 10),
    ("{!r}", QUERY, False, "template.nested", 2),
    ("{resource!r}", HEADER, False, "template.nested", 10),
    ("{resource:>3}", HEADER, False, "template.nested", 10),
    ("}", MULTIPART, False, "template.nested", 1),
    # template.syntax
    ("/a/{}", PATH, False, "template.syntax", 4),
    ("", PATH, False, "template.syntax", 1),
    ("/a?b=1", PATH, False, "template.syntax", 3),
    ("/a#frag", PATH, False, "template.syntax", 3),
    ("/a%zz", PATH, False, "template.syntax", 3),
    ("/a%2", PATH, False, "template.syntax", 3),
    ("/a^b", PATH, False, "template.syntax", 3),
    ('/a"b', PATH, False, "template.syntax", 3),
    ("/caf\u00e9", PATH, False, "template.syntax", 5),
    ("/a/%C0%AE", PATH, False, "template.syntax", 4),
    ("/x{resource}y", PATH, False, "template.syntax", 3),
    ("/{resource}{delivery_key}", PATH, False, "template.syntax", 12),
    ("{ resource}", HEADER, False, "template.syntax", 2),
    ("{a/b}", QUERY, False, "template.syntax", 3),
    ("a\u00e9", QUERY, False, "template.syntax", 2),
    ("\u00e9t\u00e9", MULTIPART, False, "template.syntax", 1),
]


@pytest.mark.parametrize(("text", "context", "allow_receipt", "code", "column"), REJECTED)
def test_rejected_templates_report_code_and_column(
    text: str, context: TemplateContext, allow_receipt: bool, code: str, column: int
) -> None:
    with pytest.raises(DponeError) as caught:
        parse_template(text, context=context, allow_receipt=allow_receipt)
    assert (caught.value.code, caught.value.location and caught.value.location.column) == (
        code,
        column,
    )
    assert caught.value.message


def test_rejection_table_covers_every_template_code() -> None:
    codes = {code for _, _, _, code, _ in REJECTED}
    assert codes == {
        "template.absolute_url",
        "template.traversal",
        "template.control_character",
        "template.unknown_symbol",
        "template.nested",
        "template.syntax",
    }
    assert len(REJECTED) >= 25


def test_parts_and_canonical_form() -> None:
    template = parse_template("/v1/{resource}.csv", context=PATH)
    assert template.parts == (Literal("/v1/"), Placeholder("resource"), Literal(".csv"))
    canonical = template.canonical()
    assert canonical == {
        "schema": "dpone.template.v1",
        "context": "path",
        "parts": [{"literal": "/v1/"}, {"symbol": "resource"}, {"literal": ".csv"}],
    }
    assert json.loads(json.dumps(canonical)) == canonical


def test_canonical_form_distinguishes_context() -> None:
    as_query = parse_template("{resource}", context=QUERY).canonical()
    as_header = parse_template("{resource}", context=HEADER).canonical()
    assert as_query != as_header


def test_template_is_frozen() -> None:
    template = parse_template("/v1", context=PATH)
    with pytest.raises(AttributeError):
        template.source = "/v2"  # type: ignore[misc]


def test_context_accepts_its_string_value() -> None:
    template = parse_template("/v1", context=TemplateContext("path"))
    assert isinstance(template, Template)
    assert template.context is PATH


@pytest.mark.parametrize(
    ("text", "context", "value", "code"),
    [
        ("/jobs/{receipt.id}", PATH, "..", "template.traversal"),
        ("/jobs/{receipt.id}", PATH, ".", "template.traversal"),
        ("/jobs/{receipt.id}", PATH, "%2e%2e", "template.traversal"),
        ("/jobs/{receipt.id}", PATH, "\uff0e\uff0e", "template.traversal"),
        ("/jobs/{receipt.id}", PATH, "", "template.syntax"),
        ("/{receipt.id}/x", PATH, "", "template.syntax"),
        ("/jobs/{receipt.id}", PATH, "\ud800", "template.control_character"),
        ("{receipt.id}", HEADER, "a\r\nX-Injected: 1", "template.control_character"),
        ("{receipt.id}", HEADER, "tab\there", "template.control_character"),
        ("{receipt.id}", HEADER, "caf\u00e9", "template.syntax"),
        ("{receipt.id}", MULTIPART, "a\nb", "template.control_character"),
    ],
)
def test_render_refuses_unsafe_values(
    text: str, context: TemplateContext, value: str, code: str
) -> None:
    template = parse_template(text, context=context, allow_receipt=True)
    with pytest.raises(DponeError) as caught:
        template.render({"receipt.id": value})
    assert caught.value.code == code


@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        ("../x", "/jobs/..%2Fx"),
        ("a/b", "/jobs/a%2Fb"),
        ("..", None),
        ("...", "/jobs/..."),
        ("%2e", None),
        ("\u00fc", "/jobs/%C3%BC"),
        ("a?b#c", "/jobs/a%3Fb%23c"),
        ("//evil.example", "/jobs/%2F%2Fevil.example"),
    ],
)
def test_path_values_stay_inside_their_segment(value: str, rendered: str | None) -> None:
    template = parse_template("/jobs/{receipt.id}", context=PATH, allow_receipt=True)
    if rendered is None:
        with pytest.raises(DponeError):
            template.render({"receipt.id": value})
    else:
        assert template.render({"receipt.id": value}) == rendered


def test_multipart_values_may_be_unicode() -> None:
    template = parse_template("{resource}", context=MULTIPART)
    assert template.render({"resource": "caf\u00e9"}) == "caf\u00e9"


def test_render_without_a_value_is_an_unknown_symbol() -> None:
    template = parse_template("/v1/{resource}/{delivery_key}", context=PATH)
    with pytest.raises(DponeError) as caught:
        template.render({"resource": "orders"})
    assert caught.value.code == "template.unknown_symbol"
    assert caught.value.location is not None
    assert caught.value.location.column == 16
