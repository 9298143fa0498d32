"""Property tests: rendered paths keep their shape; parsing fails only with catalog codes."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from hypothesis import given, settings
from hypothesis import strategies as st

from dpone.contracts import DponeError
from dpone.grammar import MISSING, TemplateContext, parse_pointer, parse_template

SYMBOLS = ["resource", "delivery_key", "receiver_mutation_key", "scope.from", "scope.to",
           "receipt.id", "receipt.job_status"]
# Literal path text: RFC 3986 pchar without '%', never a dot segment.
_LITERAL_ALPHABET = "abcXYZ019-._~!$&'()*+,;=:@"
literal_segments = st.text(alphabet=_LITERAL_ALPHABET, min_size=1, max_size=8).filter(
    lambda text: text.split(";", 1)[0] not in {".", ".."}
)
placeholders = st.sampled_from(SYMBOLS).map(lambda symbol: "{" + symbol + "}")
segments = st.one_of(
    literal_segments,
    placeholders,
    st.tuples(placeholders, literal_segments).map("".join),
    st.tuples(literal_segments, placeholders).map("".join),
    st.tuples(placeholders, literal_segments, placeholders).map("".join),
)
path_templates = (
    st.lists(segments, min_size=1, max_size=5)
    .map(lambda parts: "/" + "/".join(parts))
    .filter(lambda text: "${" not in text)
)

NASTY = ["", ".", "..", "/", "../x", "a/b", "%2e%2e", "%2F", "..%2f", "\\..", "//evil.example",
         "http://evil.example", "?q=1", "#f", "\uff0e\uff0e", "\u00e9", "\U0001f600", "%", "~"]
values = st.one_of(st.sampled_from(NASTY), st.text(max_size=12))


def _is_dot(segment: str) -> bool:
    decoded = segment
    for _ in range(4):
        if decoded.split(";", 1)[0] in {".", ".."}:
            return True
        decoded = unquote(decoded)
    return False


@settings(max_examples=200, deadline=None)
@given(template_text=path_templates, drawn=st.lists(values, min_size=len(SYMBOLS),
                                                    max_size=len(SYMBOLS)))
def test_rendered_paths_never_gain_segments_or_leave_the_authority(
    template_text: str, drawn: list[str]
) -> None:
    template = parse_template(template_text, context=TemplateContext.PATH, allow_receipt=True)
    try:
        rendered = template.render(dict(zip(SYMBOLS, drawn, strict=True)))
    except DponeError as error:
        assert error.code in {"template.traversal", "template.syntax"}
        return
    assert rendered.startswith("/")
    assert not rendered.startswith("//")
    assert rendered.count("/") == template_text.count("/")
    split = urlsplit(rendered)
    assert (split.scheme, split.netloc, split.query, split.fragment) == ("", "", "", "")
    assert not any(_is_dot(segment) for segment in rendered.split("/"))


@settings(max_examples=200, deadline=None)
@given(template_text=path_templates, value=st.text(alphabet="abcXYZ0189-_~", min_size=1))
def test_ordinary_values_always_render(template_text: str, value: str) -> None:
    template = parse_template(template_text, context=TemplateContext.PATH, allow_receipt=True)
    rendered = template.render(dict.fromkeys(SYMBOLS, value))
    assert rendered.count("/") == template_text.count("/")


_FRAGMENTS = ["/", "//", ".", "..", "{", "}", "{{", "}}", "$", "%", "%2e", "%2F", "%5c", "\\",
              "?", "#", " ", "\n", "\x7f", "|", ":", "!", "(", ")", "[0]", "http:", "a", "Z9",
              "resource", "receipt.", "receipt.id", "scope.from", "env.HOME", "\u00e9", "\u202e"]
template_like = st.one_of(st.text(max_size=30), st.lists(st.sampled_from(_FRAGMENTS),
                                                         max_size=12).map("".join))


@settings(max_examples=200, deadline=None)
@given(text=template_like, context=st.sampled_from(list(TemplateContext)),
       allow_receipt=st.booleans())
def test_arbitrary_text_parses_or_fails_with_a_template_code(
    text: str, context: TemplateContext, allow_receipt: bool
) -> None:
    try:
        template = parse_template(text, context=context, allow_receipt=allow_receipt)
    except DponeError as error:
        assert error.code.startswith("template.")
        assert error.location is not None
        assert error.location.column is not None
        assert 1 <= error.location.column <= max(len(text), 1)
        return
    rebuilt = "".join(
        getattr(part, "text", None) or "{" + getattr(part, "symbol", "") + "}"
        for part in template.parts
    )
    assert rebuilt == text
    assert template.source == text


pointer_tokens = st.lists(
    st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), max_size=6), max_size=6
)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


@settings(max_examples=200, deadline=None)
@given(tokens=pointer_tokens, leaf=st.integers())
def test_pointer_escaping_round_trips_and_resolves(tokens: list[str], leaf: int) -> None:
    pointer = parse_pointer("".join("/" + _escape(token) for token in tokens))
    assert pointer.tokens == tuple(tokens)
    document: Any = {"leaf": leaf}
    for token in reversed(tokens):
        document = {token: document, token + "~": "decoy"}
    assert pointer.resolve(document) == {"leaf": leaf}
    assert parse_pointer(pointer.source + "/absent~0").resolve(document) is MISSING


@settings(max_examples=200, deadline=None)
@given(indices=st.lists(st.integers(min_value=0, max_value=4), max_size=5), leaf=st.text())
def test_pointer_walks_arrays_by_canonical_index(indices: list[int], leaf: str) -> None:
    document: Any = leaf
    for index in reversed(indices):
        document = [None] * index + [document]
    pointer = parse_pointer("".join(f"/{index}" for index in indices))
    assert pointer.resolve(document) == leaf
    if indices:
        padded = parse_pointer("".join(f"/0{index}" for index in indices))
        assert padded.resolve(document) is MISSING
