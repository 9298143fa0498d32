"""A catalog page as GitHub-flavoured Markdown: every plain value escaped, code spans fenced
around any backticks they hold, table cells kept on one line."""

from __future__ import annotations

import re

from dpone.compiler.catalog._blocks import (
    INDEX,
    Block,
    Bullets,
    Code,
    Heading,
    Inline,
    Link,
    Page,
    Paragraph,
    Strong,
    Table,
    Text,
)

_SPACE = re.compile(r"\s+")
_SPECIAL = re.compile(r"([\\`*\[\]<>|#&!~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
_LEADING_MARKER = re.compile(r"^(\d+)([.)])|^([-+=])")
_BACKTICKS = re.compile(r"`+")


def _plain(value: str) -> str:
    """Literal text: whitespace collapsed (a value never breaks a line or a table), every
    character Markdown could read as markup escaped (an underscore inside a word cannot be, so
    ``job_status`` stays as it is)."""
    escaped = _SPECIAL.sub(r"\\\1", _SPACE.sub(" ", value))
    return _LEADING_MARKER.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[3]}", escaped)


def _code(value: str, in_table: bool) -> str:
    if not value:
        return "(empty)"
    value = _SPACE.sub(" ", value)
    if in_table:
        value = value.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(value)), default=0) + 1)
    padded = f" {value} " if value[0] in "` " or value[-1] in "` " else value
    return f"{fence}{padded}{fence}"


def page_address(target: str, current: str) -> str:
    """The relative Markdown address of page ``target`` from page ``current``: the index is
    ``README.md``, each profile page ``profiles/<ref>.md``."""
    if target == INDEX:
        return "README.md" if current == INDEX else "../README.md"
    return f"profiles/{target}.md" if current == INDEX else f"{target}.md"


def _inline(part: Inline, current: str, in_table: bool) -> str:
    if isinstance(part, Code):
        return _code(part.text, in_table)
    if isinstance(part, Strong):
        return f"**{_plain(part.text)}**"
    if isinstance(part, Link):
        return f"[{_plain(part.text)}]({page_address(part.page, current)})"
    return _plain(part)


def _line(text: Text, current: str, in_table: bool = False) -> str:
    return "".join(_inline(part, current, in_table) for part in text).strip()


def _block(block: Block, current: str) -> str:
    if isinstance(block, Heading):
        return "#" * block.level + " " + _line(block.text, current)
    if isinstance(block, Paragraph):
        return _line(block.text, current)
    if isinstance(block, Bullets):
        return "\n".join("- " + _line(item, current) for item in block.items)
    return _table(block, current)


def _table(block: Table, current: str) -> str:
    def cells(values: list[str]) -> str:
        return "| " + " | ".join(value or " " for value in values) + " |"

    lines = [cells([_plain(name) for name in block.header]),
             "|" + "|".join("---" for _ in block.header) + "|"]
    lines += [cells([_line(cell, current, in_table=True) for cell in line]) for line in block.rows]
    return "\n".join(lines)


def render_markdown(page: Page, comment: str) -> str:
    """``page`` as Markdown, opening with its title and the HTML comment ``comment``."""
    if "-->" in comment:
        raise ValueError("a page comment cannot close itself")
    parts = [f"# {_plain(page.title)}", f"<!-- {comment} -->"]
    parts += [_block(block, page.key) for block in page.blocks]
    return "\n\n".join(parts) + "\n"
