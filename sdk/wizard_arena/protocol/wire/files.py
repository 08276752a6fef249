"""The protocol's .proto source files, as shipped inside the package.

``scripts/gen_proto.py`` copies each ``proto/wizard_arena/vN/*.proto`` beside
the code generated from it (``wizard_arena/_generated/vN/``), and the wheel
ships them (package data), so an installed SDK can hand its exact protocol
to a bot in another language (``wizard-arena proto --out DIR``).

>>> sorted(proto_files())
['wizard_arena/v1/arena.proto']
>>> b"service WizardArena" in proto_files()["wizard_arena/v1/arena.proto"]
True
"""

from __future__ import annotations

from importlib import resources

__all__ = ["proto_files"]


def proto_files() -> dict[str, bytes]:
    """Each shipped .proto by its import path (``wizard_arena/v1/arena.proto``,
    the path its ``package`` line and ``protoc -I`` expect), with its bytes."""
    out: dict[str, bytes] = {}
    generated = resources.files("wizard_arena._generated")
    for version in sorted(generated.iterdir(), key=lambda t: t.name):
        if not (version.is_dir() and version.name.startswith("v")):
            continue
        for item in sorted(version.iterdir(), key=lambda t: t.name):
            if item.name.endswith(".proto"):
                out[f"wizard_arena/{version.name}/{item.name}"] = item.read_bytes()
    return out
