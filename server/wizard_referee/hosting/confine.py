"""Command entrants under ``sandbox = "bwrap"``: what the host asks of
the sandbox room (:mod:`wizard_referee.sandbox`). Each entrant runs as its
own uid (``UID_BASE`` + its place among the entrants, from 0), sees its own
folder, reaches the referee on a Unix socket only, and has its limits
(``memory_limit``, ``max_processes``, ``cpu_limit``) from a cgroup made for
each start of its process.

Before any game: :func:`sandbox_problems` (a folder that does not exist, a
folder holding the results store, a folder every entrant sees, from
``PYTHONPATH`` or the Python environment, that holds the store, the
configuration, the logs or an entrant's folder, bubblewrap missing, cgroups
that cannot be made, a probe start that fails), each one line.
"""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from wizard_referee.hosting.config import EntrantConfig, HostConfig
from wizard_referee.sandbox import (
    SOCKET_DIR,
    UID_BASE,
    Confinement,
    Limits,
    probe,
    problems,
    share_gpus,
    visible_gpus,
)
from wizard_referee.sandbox.bwrap import python_paths, system_paths
from wizard_referee.sandbox.probe import unreadable
from wizard_referee.storage import beside_store, is_url

__all__ = [
    "SOCKET_NAME",
    "confined_address",
    "confinement_for",
    "instance_gpus",
    "node_problems",
    "sandbox_problems",
    "shared_path_problems",
    "unconfined_note",
]

#: The referee's Unix socket, in a folder of its own (seen as SOCKET_DIR).
SOCKET_NAME = "referee.sock"


def _rel(path: str | Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def confined_address() -> str:
    """``{server}`` for a confined entrant: the referee's socket as it sees it."""
    return f"unix:{SOCKET_DIR}/{SOCKET_NAME}"


def entrant_uid(entrants: Sequence[EntrantConfig], entrant: EntrantConfig) -> int:
    """The uid a confined entrant runs as (one per entrant)."""
    return UID_BASE + [e.name for e in entrants].index(entrant.name)


def confinement_for(
    entrants: Sequence[EntrantConfig],
    entrant: EntrantConfig,
    socket_dir: Path,
    gpus: tuple[str, ...] = (),
) -> Confinement:
    """What an instance of ``entrant`` sees and may use (``gpus``: its GPUs)."""
    return Confinement(
        uid=entrant_uid(entrants, entrant),
        folder=Path(entrant.folder) if entrant.folder else None,
        socket_dir=socket_dir,
        limits=entrant.limits,
        gpus=gpus,
    )


def instance_gpus(asks: Sequence[float]) -> list[tuple[str, ...]]:
    """The GPUs of each instance (``asks``: each one's ``num_gpus``), from
    this process's CUDA_VISIBLE_DEVICES (a Ray worker's: what Ray assigned
    it) or else the ``/dev/nvidiaN`` files here. ValueError (one line) when
    there are too few."""
    if not any(a > 0 for a in asks):
        return [() for _ in asks]
    return share_gpus(asks, visible_gpus(os.environ, glob.glob("/dev/nvidia*")))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def sandbox_problems(config: HostConfig, *, here: bool = True) -> list[str]:
    """Why the command entrants cannot run as configured (each a line);
    ``here``: they run on this machine (else the node's own checks,
    :func:`node_problems`, are left to each node)."""
    commands = [e for e in config.entrants if e.command is not None]
    out = [
        f"entrant {e.name!r}: folder {_rel(e.folder)} does not exist"
        for e in commands
        if e.folder and not Path(e.folder).is_dir()
    ]
    if config.sandbox != "bwrap" or not commands or out:
        return out
    private = config.private
    database = None if not private or is_url(private) else Path(private).resolve()
    for e in commands:
        if database is not None and e.folder and _inside(database, Path(e.folder).resolve()):
            out.append(
                f"entrant {e.name!r}: its folder {_rel(e.folder)} holds the results store "
                f"{_rel(database)}: give each entrant a folder of its own"
            )
    out += shared_path_problems(config, python_paths())
    if not here:
        return out  # the rest is each node's: node_problems, on every Ray worker
    return out or node_problems(config)


def shared_path_problems(config: HostConfig, shared: Sequence[Path]) -> list[str]:
    """The folders every confined entrant sees (``shared``: ``PYTHONPATH``,
    the Python environment and what its ``.pth`` files add) that hold what
    no entrant may read: the results store, the logs, the configuration
    file's folder, or an entrant's own folder (each one line)."""
    # (what, its name, whether a folder within it is refused too)
    guarded: list[tuple[Path, str, bool]] = []
    if config.private and not is_url(config.private):
        store = Path(config.private).resolve()
        guarded += [(store, f"the results store {_rel(store)}", False)]
    if config.private:  # (beside the store; in the current folder for a PostgreSQL database)
        logs = beside_store(config.private, ".logs").resolve()
        guarded += [(logs, f"the logs {_rel(logs)}/", True)]
    if config.workdir:
        guarded.append((Path(config.workdir).resolve(), "the configuration's folder", False))
    for e in config.entrants:
        if e.command is not None and e.folder:
            guarded.append((Path(e.folder).resolve(), f"entrant {e.name!r}'s folder", True))
    out = []
    for path in shared:
        seen = Path(os.path.abspath(path)).resolve()
        if seen == Path("/") or any(_inside(seen, s) for s in system_paths()):
            continue  # bound anyway (the system's files), never the whole filesystem
        held = [
            what for p, what, within in guarded if _inside(p, seen) or (within and _inside(seen, p))
        ]
        if held:
            out.append(
                f"{_rel(seen)} (from PYTHONPATH, or the Python environment) is seen by every "
                f"confined entrant, and through it {held[0]}: take it out of PYTHONPATH, "
                "or keep the tournament's files and the entrants' folders apart from it"
            )
    return out


def node_problems(config: HostConfig) -> list[str]:
    """Why this machine cannot confine the command entrants (bubblewrap or
    setpriv missing, cgroups it cannot make, too few GPUs, a probe start
    that fails, a folder the entrants' uids cannot read), each one line: the
    local runner's checks before any game, and each Ray worker's on its node."""
    commands = [e for e in config.entrants if e.command is not None]
    out = problems()
    try:
        instance_gpus([e.num_gpus for e in commands for _ in range(config.parallel)])
    except ValueError as short:
        out.append(f'sandbox = "bwrap" binds each entrant\'s GPUs (num_gpus) alone: {short}')
    if out:
        return out
    check = [sys.executable, "-c", "import wizard_arena.client"]
    why = probe(Confinement(uid=UID_BASE, limits=Limits()), check, os.environ)
    if why:
        return [f'sandbox = "bwrap": {why}']
    for e in commands:
        if e.folder and os.geteuid() == 0:
            bad = unreadable([Path(e.folder)], depth=16)
            if bad:
                out.append(
                    f"entrant {e.name!r}: its uid {entrant_uid(config.entrants, e)} cannot "
                    f"read {', '.join(bad)}: make its folder world-readable (chmod -R o+rX)"
                )
    return out


def unconfined_note(config: HostConfig) -> str | None:
    """The line saying that command entrants run unconfined (``None``: none do)."""
    if config.sandbox != "none" or not any(e.command for e in config.entrants):
        return None
    return (
        "note: the command entrants run unconfined, as this user, with this machine's "
        'files, network and processes in reach (sandbox = "bwrap" confines them; '
        "docs/untrusted-bots.md)"
    )
