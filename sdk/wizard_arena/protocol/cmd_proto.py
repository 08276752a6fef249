"""``wizard-arena proto``: write the protocol's .proto file(s) to a folder.

A bot in another language is built from ``arena.proto`` alone (with
``protoc``, or a library that loads it at run time, as the Node.js example
bot does). The installed package carries the exact file its own SDK and
referee speak; this verb writes it out as ``DIR/wizard_arena/v1/arena.proto``
(the layout its ``package wizard_arena.v1`` line expects: ``protoc -I DIR``),
and says so: ``wrote /abs/DIR/wizard_arena/v1/arena.proto`` for each file,
and, without ``--out``, that they went into the current folder.

Exit status: 0, or 1 when a file cannot be written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wizard_arena.protocol.wire.files import proto_files

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="the folder to write into (default: the current folder); the files go to "
        "DIR/wizard_arena/vN/*.proto",
    )


def run(args: argparse.Namespace) -> int:
    out = Path(args.out or ".").absolute()
    for rel, data in proto_files().items():
        target = out / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except OSError as e:
            print(f"wizard-arena proto: cannot write {target}: {e}", file=sys.stderr)
            return 1
        print(f"wrote {target}")
    if args.out is None:
        print(f"(into the current folder; --out DIR writes elsewhere; protoc -I {out})")
    return 0
