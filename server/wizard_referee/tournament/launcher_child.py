"""The launcher process (see :mod:`.launcher`): run as a script by a fresh
interpreter (``python -I launcher_child.py PARENT_PID``), standard library
only, one thread.

It reads requests, one JSON object a line, on standard input:

- ``{"op": "spawn", "id": N, "cmd": [...], "env": {...}, "cwd": "...", "log": PATH,
  "cgroup": [FILE, ...]}``: start ``cmd`` with its output appended to ``log``,
  put in a cgroup before its exec (its pid written to each ``cgroup.procs``
  FILE, if any: a confined start, :mod:`wizard_referee.sandbox`); answers
  ``{"op": "spawned", "id": N, "pid": P}`` or ``{"op": "spawned", "id": N,
  "error": "..."}``.
- ``{"op": "signal", "pid": P, "sig": S}``: send a signal to a process it
  started that is still running (never to a reaped pid).

and writes ``{"op": "exited", "pid": P, "returncode": R}`` when a process
it started ends (``R < 0``: killed by signal ``-R``, as in subprocess).

Forking here is safe (no other thread holds a lock), so each child, before
its exec, asks Linux for SIGTERM when this process ends
(``PR_SET_PDEATHSIG``); this process asks the same for itself when the
runner ends, so no bot outlives its runner, even one killed with SIGKILL.
Each bot runs in a process group of its own: Ctrl-C in a terminal reaches
the runner (and this process, which ignores it), and the runner stops the
bots.
When standard input closes (the runner is done, or gone on any system) or
on SIGTERM, it sends SIGTERM to every process still running, SIGKILL after
3 seconds to any left, and exits.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from typing import Any

_PR_SET_PDEATHSIG = 1
_STOP_GRACE = 3.0


def die_with_parent() -> None:
    """On Linux: SIGTERM to this process when its parent thread ends."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))


def _child_setup(cgroup: tuple[str, ...] = ()) -> None:
    """In a bot's process, before its exec: it dies with the launcher, gets
    SIGINT again (the launcher ignores it; an ignored signal stays ignored
    across exec), and enters its cgroup (so all it starts is counted)."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    for procs in cgroup:
        with open(procs, "w", encoding="ascii") as f:
            f.write(str(os.getpid()))


class _Launcher:
    def __init__(self) -> None:
        self.children: dict[int, subprocess.Popen[bytes]] = {}

    def send(self, msg: dict[str, Any]) -> None:
        os.write(sys.stdout.fileno(), (json.dumps(msg) + "\n").encode())

    def handle(self, req: dict[str, Any]) -> None:
        if req.get("op") == "spawn":
            self.spawn(req)
        elif req.get("op") == "signal":
            proc = self.children.get(int(req["pid"]))
            if proc is not None and proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(int(req["sig"]))

    def spawn(self, req: dict[str, Any]) -> None:
        try:
            # a log it creates is private (0600), as the runner's own
            fd = os.open(req["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with open(fd, "ab") as out:
                proc = subprocess.Popen(
                    req["cmd"],
                    cwd=req.get("cwd") or None,
                    env=req["env"],
                    stdout=out,
                    stderr=out,
                    stdin=subprocess.DEVNULL,
                    process_group=0,  # Ctrl-C in a terminal is the runner's alone
                    # one thread here: safe
                    preexec_fn=functools.partial(_child_setup, tuple(req.get("cgroup", ()))),
                )
        except OSError as e:
            self.send({"op": "spawned", "id": req["id"], "error": e.strerror or str(e)})
            return
        except subprocess.SubprocessError as e:  # the cgroup could not be entered
            self.send({"op": "spawned", "id": req["id"], "error": str(e)})
            return
        self.children[proc.pid] = proc
        self.send({"op": "spawned", "id": req["id"], "pid": proc.pid})

    def reap(self) -> None:
        for pid, proc in list(self.children.items()):
            rc = proc.poll()
            if rc is not None:
                del self.children[pid]
                self.send({"op": "exited", "pid": pid, "returncode": rc})

    def stop_all(self) -> None:
        running = [p for p in self.children.values() if p.poll() is None]
        for p in running:
            with contextlib.suppress(ProcessLookupError):
                p.terminate()
        deadline = time.monotonic() + _STOP_GRACE
        for p in running:
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _serve(launcher: _Launcher) -> None:
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a no-op: the wakeup fd is the point
    stdin = sys.stdin.fileno()
    sel = selectors.DefaultSelector()
    sel.register(stdin, selectors.EVENT_READ)
    sel.register(wake_r, selectors.EVENT_READ)
    buf = b""
    while True:
        for key, _ in sel.select():
            if key.fd == wake_r:
                os.read(wake_r, 4096)
                continue
            data = os.read(stdin, 65536)
            if not data:
                return  # the runner closed its end, or is gone
            buf += data
            *lines, buf = buf.split(b"\n")
            for line in lines:
                if line.strip():
                    launcher.handle(json.loads(line))
        launcher.reap()


def main() -> int:
    parent = int(sys.argv[1])
    die_with_parent()
    if os.getppid() != parent:
        return 0  # the runner ended before we could ask to follow it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the runner's to handle

    def on_term(*_: Any) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, on_term)
    launcher = _Launcher()
    try:
        _serve(launcher)
    except BrokenPipeError:
        pass  # the runner is gone
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        launcher.stop_all()
        with contextlib.suppress(OSError):
            launcher.reap()
    return 0


if __name__ == "__main__":
    sys.exit(main())
