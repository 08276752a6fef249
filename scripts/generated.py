"""Write a generated document, or check that it is current (``--check``).

Shared by the ``scripts/gen_*.py`` generators, so that each says the same
thing when its output is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_or_check(out: Path, text: str, *, check: bool, script: str) -> int:
    """Write *text* to *out*, or with *check* exit status 1 if they differ."""
    name = out.relative_to(ROOT)
    if check:
        current = out.read_text(encoding="utf-8") if out.exists() else ""
        if current != text:
            print(f"{name} is out of date: run python {script}", file=sys.stderr)
            return 1
        print(f"{name} is current")
        return 0
    out.write_text(text, encoding="utf-8")
    print(f"wrote {name}")
    return 0
