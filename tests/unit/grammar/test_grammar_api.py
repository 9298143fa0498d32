"""The public surface of dpone.grammar is pinned, and its grammars ship as .lark files."""

from __future__ import annotations

from pathlib import Path

import dpone.grammar


def test_public_names_are_pinned() -> None:
    assert sorted(dpone.grammar.__all__) == sorted(
        [
            "JsonPointer",
            "MISSING",
            "Placeholder",
            "Literal",
            "Template",
            "TemplateContext",
            "parse_pointer",
            "parse_template",
        ]
    )
    for name in dpone.grammar.__all__:
        assert getattr(dpone.grammar, name) is not None


def test_grammars_are_lark_files_next_to_their_loaders() -> None:
    package = Path(dpone.grammar.__file__).parent
    assert (package / "template.lark").is_file()
    assert (package / "pointer.lark").is_file()


def test_template_contexts() -> None:
    assert [context.value for context in dpone.grammar.TemplateContext] == [
        "path",
        "query",
        "header",
        "multipart_scalar",
    ]
