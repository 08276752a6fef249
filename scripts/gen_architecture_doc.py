#!/usr/bin/env python3
"""Write the tables of rooms in docs/architecture.md from tests/rooms.py.

    python scripts/gen_architecture_doc.py           # rewrite the generated part
    python scripts/gen_architecture_doc.py --check   # exit 1 if it is out of date

One row a room (``ROOMS``): its modules, what lives there, what it may
import. tests/test_architecture.py checks every module's imports against
the rows, and that the doc shows them; only the part of the doc between the
BEGIN/END GENERATED markers is written, the rest is hand-written.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the doc is out of date")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    rooms = importlib.import_module("tests.rooms")
    doc: Path = rooms.DOC
    text = doc.read_text(encoding="utf-8")
    new: str = rooms.with_rooms_section(text)
    if args.check:
        if new != text:
            diff = difflib.unified_diff(
                text.splitlines(), new.splitlines(), "docs (now)", "docs (ROOMS)", lineterm=""
            )
            print("\n".join(diff))
            print(f"{doc.relative_to(ROOT)} is out of date: python scripts/gen_architecture_doc.py")
            return 1
        return 0
    doc.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
