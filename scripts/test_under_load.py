#!/usr/bin/env python3
"""Run the test suite on a busy machine: the README's test command beside a
CPU load generator, then the result and the load it saw.

    python scripts/test_under_load.py                    # load 4 x the cores
    python scripts/test_under_load.py --load-per-core 2 --warmup 0
    python scripts/test_under_load.py -- python -m pytest tests/test_server.py -n 2

The load is ``load-per-core x cores`` processes that only spin (so the
machine's load average settles near that figure, plus what the tests add);
they start ``--warmup`` seconds before the command, as on a machine that was
busy already, and are stopped when it ends. Without a command after ``--``
it runs the README's second command's test part (``python -m pytest -n auto``).
The tests see nothing of this: no setting tells them the machine is busy
(they stretch their deadlines by the load average they measure,
tests/support.py ``time_factor``).

It prints the command's last line (pytest's summary), its exit status, the
wall time, and the 1-minute load average seen (least, mean, most, sampled
every few seconds); its own exit status is the command's.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: A busy process: spins until it is stopped.
SPIN = "while True: pass"


def readme_test_command() -> list[str]:
    """The test part of the README's second command (after its last ``&&``)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", readme, re.S)
    if block is None:
        raise SystemExit("test_under_load: the README has no sh block")
    lines = [line for line in block.group(1).splitlines() if "pytest" in line]
    if not lines:
        raise SystemExit("test_under_load: the README's first sh block runs no pytest")
    command = shlex.split(lines[0].rsplit("&&", 1)[-1])
    return [sys.executable if command[0] in ("python", "python3") else command[0], *command[1:]]


def activated() -> dict[str, str]:
    """This environment as the README's ``. .venv/bin/activate`` leaves it:
    the folder of this Python's scripts (``wizard-arena``) first on PATH."""
    env = dict(os.environ)
    scripts = str(Path(sys.executable).parent)
    if env.get("PATH", "").split(os.pathsep)[0] != scripts:
        env["PATH"] = scripts + os.pathsep + env.get("PATH", "")
    if sys.prefix != sys.base_prefix:
        env["VIRTUAL_ENV"] = sys.prefix
    return env


def cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class LoadSamples:
    """The 1-minute load average, sampled every ``every`` seconds in a thread."""

    def __init__(self, every: float = 5.0) -> None:
        self.every = every
        self.seen: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            self.seen.append(os.getloadavg()[0])
            if self._stop.wait(self.every):
                return

    def __enter__(self) -> LoadSamples:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> str:
        if not self.seen:
            return "no samples"
        mean = sum(self.seen) / len(self.seen)
        return f"least {min(self.seen):.1f}, mean {mean:.1f}, most {max(self.seen):.1f}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="test_under_load.py",
        description="Run the tests beside a CPU load generator; print the result and the load.",
    )
    parser.add_argument(
        "--load-per-core",
        type=float,
        default=4.0,
        help="busy processes per core (default 4: a load average of about 4 x the cores)",
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=30.0,
        help="seconds of load before the command starts (default 30)",
    )
    parser.add_argument("command", nargs="*", help="the command (default: the README's tests)")
    args = parser.parse_args(argv)
    if args.load_per_core < 0 or args.warmup < 0:
        parser.error("--load-per-core and --warmup must be 0 or more")
    command = args.command or readme_test_command()
    n = round(args.load_per_core * cores())
    print(f"load: {n} busy processes on {cores()} cores; then: {shlex.join(command)}", flush=True)
    busy: list[subprocess.Popen[bytes]] = []
    start = time.monotonic()
    try:
        with LoadSamples() as samples:
            busy = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(n)]
            time.sleep(args.warmup)
            started = time.monotonic()
            proc = subprocess.Popen(
                command,
                cwd=ROOT,
                env=activated(),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            last = ""
            assert proc.stdout is not None
            for line in proc.stdout:
                sys.stdout.write(line)
                if line.strip():
                    last = line.strip()
            code = proc.wait()
            took = time.monotonic() - started
    finally:
        for p in busy:
            p.send_signal(signal.SIGKILL)
        for p in busy:
            p.wait()
    print(f"result: {last}")
    print(f"exit status {code} after {took:.0f} s (load started {started - start:.0f} s before)")
    print(f"load average (1 min) seen: {samples.summary()} on {cores()} cores")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
