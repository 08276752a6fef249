"""Joining a Ray cluster, or starting Ray on this machine.

Without an address a Ray instance is started here with every core, its
daemons told to use 127.0.0.1. With one (``auto``: the cluster ``ray start``
made on this machine; ``ray://HOST:10001``; ``HOST:PORT``) this process
joins it as the coordinator. ``working_dir`` is sent to every worker
through Ray's ``runtime_env`` (the entrants' commands run in it); the
virtual environment, the version control folder and result databases are
left out (:data:`EXCLUDES`): every node must have the package and its
dependencies installed itself.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import ray

__all__ = ["EXCLUDES", "LOOPBACK", "open_ray", "runtime_env"]

LOOPBACK = "127.0.0.1"

#: Never sent to the workers with the working directory.
EXCLUDES = [
    ".venv",
    "venv",
    ".git",
    "__pycache__",
    "*.pyc",
    "*.sqlite",
    "*.sqlite-wal",
    "*.sqlite-shm",
    "*.sqlite.logs",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
]


def runtime_env(working_dir: str) -> dict[str, Any] | None:
    """The job's ``runtime_env``: ``working_dir`` (if any) and its excludes."""
    if not working_dir:
        return None
    return {"working_dir": working_dir, "excludes": list(EXCLUDES)}


def _on_loopback(address: str) -> bool:
    host = address.removeprefix("ray://").rsplit(":", 1)[0]
    return host in (LOOPBACK, "localhost")


@contextlib.contextmanager
def open_ray(address: str, working_dir: str = "") -> Iterator[None]:
    """Ray, joined or started, for the duration of the block (a Ray already
    initialised in this process, as in tests, is used as it is)."""
    if ray.is_initialized():
        yield
        return
    settings: dict[str, Any] = {
        "log_to_driver": False,
        "runtime_env": runtime_env(working_dir),
        "configure_logging": False,
    }
    if not address:
        settings.update(
            num_cpus=os.cpu_count() or 1, include_dashboard=False, _node_ip_address=LOOPBACK
        )
    else:
        settings["address"] = address
        if _on_loopback(address):
            settings["_node_ip_address"] = LOOPBACK
    ray.init(**settings)
    try:
        yield
    finally:
        ray.shutdown()
