"""A ``wizard-arena serve`` subprocess for the benches: started, its address
read from its standard error, its memory read from ``/proc``.

Imported by the benches beside it; nothing here measures.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import IO

__all__ = ["rss_kib", "start_serve"]


def rss_kib(pid: int) -> int:
    """VmRSS of process ``pid`` in KiB (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def start_serve(
    argv: list[str],
    *,
    stdout: int | IO[str] = subprocess.DEVNULL,
    on_line: Callable[[str], None] | None = None,
    within: float = 30.0,
) -> tuple[subprocess.Popen[str], str]:
    """Start ``argv`` (a command that runs a referee) and read its standard
    error until it names its address (``... serving on HOST:PORT``, a line
    for people, not a JSON log line): the process and the address. Each line
    read is given to ``on_line``. RuntimeError, with the last lines, when no
    address comes within ``within`` seconds of output (the process is killed)."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + within
    for line in proc.stderr:
        lines.append(line)
        if on_line is not None:
            on_line(line)
        if " serving on " in line and not line.startswith("{"):
            return proc, line.split(" serving on ", 1)[1].split()[0]
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise RuntimeError("the server did not start:\n" + "".join(lines[-20:]))
