"""Fail when any module under the given roots has more than 400 lines of code.

A line of code is a line that is neither blank nor only a comment.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

CAP = 400
_NOT_CODE = re.compile(r"^\s*($|#)")


def code_lines(path: Path) -> int:
    return sum(1 for line in path.read_text("utf-8").splitlines() if not _NOT_CODE.match(line))


def main(roots: list[str]) -> int:
    over = [
        (path, count)
        for root in roots
        for path in sorted(Path(root).rglob("*.py"))
        if (count := code_lines(path)) > CAP
    ]
    for path, count in over:
        print(f"{path}: {count} lines of code (cap {CAP}); split it by concern")
    if not over:
        print(f"ok: every module under {', '.join(roots)} is within {CAP} lines of code")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["dpone"]))
