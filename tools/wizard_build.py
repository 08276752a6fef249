"""The build backend: setuptools' own (``setuptools.build_meta``), with one
addition to editable installs.

The project's packages live under three folders (``sdk/wizard_arena``,
``server/wizard_referee``, ``example_bots/wizard_bots``), so setuptools makes
an editable install (``pip install -e .``) work through an import hook (a
meta path finder) rather than a plain path entry. Python follows the hook;
static type checkers cannot run it: mypy then reports ``import-not-found``
for ``wizard_arena`` in a bot author's own project. So the editable wheel
also gets a plain ``.pth`` file naming the three folders, which mypy (and
pyright) read from site-packages; the hook stays, and does the same at run
time. Everything else (wheels, sdists, metadata) is setuptools' unchanged.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (the PEP 517 hooks)

ROOT = Path(__file__).resolve().parent.parent
SOURCE_ROOTS = ("sdk", "server", "example_bots")
PTH_NAME = "wizard_arena_source_roots.pth"


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, str | list[str]] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' editable wheel, plus :data:`PTH_NAME` (the source folders)."""
    name: str = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    add_static_pth(Path(wheel_directory) / name)
    return name


def add_static_pth(wheel: Path) -> None:
    """Add :data:`PTH_NAME` to ``wheel`` (and its line to the RECORD)."""
    content = "".join(f"{ROOT / d}\n" for d in SOURCE_ROOTS).encode()
    digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
    rewritten = wheel.with_name(wheel.name + ".tmp")
    deflated = zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(rewritten, "w", deflated) as out:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                out.writestr(PTH_NAME, content)
                data += f"{PTH_NAME},sha256={digest},{len(content)}\n".encode()
            out.writestr(info, data)
    rewritten.replace(wheel)
