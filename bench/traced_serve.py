"""Run a server process with its garbage collections logged, for the tail
analysis of bench_server.py.

    python bench/traced_serve.py GC_LOG -m wizard_arena.cli serve ...
    python bench/traced_serve.py GC_LOG bench/floor_servers.py --mode table

runs the module (``-m``) or script as ``__main__`` with a :data:`gc.callbacks`
hook that records each collection: generation, start and end on
``time.monotonic()`` (CLOCK_MONOTONIC: the bots' clock too, so the two
processes' times compare) and objects collected. The log is written as JSON
to GC_LOG when the process exits (the bench stops servers with SIGINT).
The hook costs a list append per collection. With the environment variable
``WIZARD_BENCH_GC_CENSUS=1`` it also counts, before each full collection,
the objects the collection will scan by type (written to GC_LOG.census; this
takes time of its own, so it is for finding what the objects are, not for
timing).
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import runpy
import sys
import time
from collections import Counter
from typing import Any


def _census(now: float) -> dict[str, Any]:
    """What a full collection is about to scan: objects by type (not frozen)."""
    objects = gc.get_objects()
    kinds = Counter(type(o).__name__ for o in objects)
    return {"at": now, "objects": len(objects), "top": kinds.most_common(25)}


def main() -> None:
    log_path, target = sys.argv[1], sys.argv[2:]
    collections: list[tuple[int, float, float, int]] = []
    started = [0.0]

    census: list[dict[str, Any]] = []

    def hook(phase: str, info: dict[str, Any]) -> None:
        now = time.monotonic()
        if phase == "start":
            if census_wanted and info["generation"] == 2:
                census.append(_census(now))
                now = time.monotonic()  # (the census is not the collection's time)
            started[0] = now
        else:
            collections.append((info["generation"], started[0], now, info["collected"]))

    def dump() -> None:
        with open(log_path, "w", encoding="utf-8") as f:
            json.dump(collections, f)
        if census_wanted:
            with open(log_path + ".census", "w", encoding="utf-8") as f:
                json.dump(census, f, indent=1)

    census_wanted = bool(os.environ.get("WIZARD_BENCH_GC_CENSUS"))
    gc.callbacks.append(hook)
    atexit.register(dump)
    if target[0] == "-m":
        sys.argv = [target[1], *target[2:]]
        runpy.run_module(target[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = target
        runpy.run_path(target[0], run_name="__main__")


if __name__ == "__main__":
    main()
