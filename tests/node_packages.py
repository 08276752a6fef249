"""The Node.js example bot for the tests, with its packages installed outside
the source tree.

``npm ci`` runs once per ``package-lock.json`` (and ``package.json``), in a
folder of the system's temporary folder named by their hash, under a file
lock so that pytest's workers share it (the first installs, the others wait;
about 5 s on two cores); a later run with the same lock file finds it there.
Each test gets a copy of the bot's own files (``bot.js``, ``package.json``)
laid out as in the repository, the .proto two folders up where ``bot.js``
looks for it, with a link to those packages: ``example_bots/node`` in the
source tree is never written to (a ``node_modules`` there would also sit in
the working tree that a wheel is built from).
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from .conftest import ROOT
from .support import scaled

NODE_DIR = ROOT / "example_bots" / "node"
PROTO = Path("proto") / "wizard_arena" / "v1" / "arena.proto"
NODE, NPM = shutil.which("node"), shutil.which("npm")


def node_packages() -> Path:
    """The ``node_modules`` of example_bots/node's lock file, installed once
    (``npm ci``) in the system's temporary folder."""
    assert NPM is not None
    manifests = [NODE_DIR / "package.json", NODE_DIR / "package-lock.json"]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in manifests)).hexdigest()[:16]
    cache = Path(tempfile.gettempdir()) / f"wizard-arena-node-packages-{digest}"
    cache.mkdir(exist_ok=True)
    ready = cache / "node_modules"
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not ready.is_dir():
            work = Path(tempfile.mkdtemp(dir=cache))
            for manifest in manifests:
                shutil.copy(manifest, work)
            proc = subprocess.run(
                [NPM, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=work,
                capture_output=True,
                text=True,
                timeout=scaled(300),
            )
            if proc.returncode != 0:
                shutil.rmtree(work, ignore_errors=True)
                raise AssertionError(f"npm ci failed:\n{proc.stdout}\n{proc.stderr}")
            (work / "node_modules").rename(ready)  # whole, or not at all
            shutil.rmtree(work)
    return ready


def node_bot_copy(dest: Path) -> Path:
    """example_bots/node as a clone has it after ``npm ci``, under ``dest``
    (``dest/example_bots/node``, the .proto at ``dest/proto``); its folder."""
    folder = dest / "example_bots" / "node"
    folder.mkdir(parents=True)
    for name in ("bot.js", "package.json", "package-lock.json"):
        shutil.copy(NODE_DIR / name, folder)
    (dest / PROTO).parent.mkdir(parents=True)
    shutil.copy(ROOT / PROTO, dest / PROTO)
    (folder / "node_modules").symlink_to(node_packages(), target_is_directory=True)
    return folder
