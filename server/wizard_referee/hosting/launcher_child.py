"""The launcher process (see :mod:`.launcher`): run as a script by a fresh
interpreter (``python -I launcher_child.py PARENT_PID``), standard library
only, one thread.

It reads requests, one JSON object a line, on standard input:

- ``{"op": "spawn", "id": N, "cmd": [...], "env": {...}, "cwd": "...", "log": PATH,
  "err": PATH, "limit": BYTES, "cgroup": [FILE, ...]}``: start ``cmd`` with its
  output appended to ``log`` (its standard error to ``err`` if given), at most
  ``limit`` bytes of it (0: no limit; the rest is read and dropped, and one
  line says so), put in a cgroup before its exec (its pid written to each
  ``cgroup.procs`` FILE, if any: a confined start, :mod:`wizard_referee.sandbox`); answers
  ``{"op": "spawned", "id": N, "pid": P}`` or ``{"op": "spawned", "id": N,
  "error": "..."}``.
- ``{"op": "signal", "pid": P, "sig": S}``: send a signal to a process it
  started that is still running (never to a reaped pid).

and writes ``{"op": "exited", "pid": P, "returncode": R}`` when a process
it started ends (``R < 0``: killed by signal ``-R``, as in subprocess), once
what it wrote before it ended is in its log.

A process writes into a pipe this process reads (never into its log file
itself), so a bot cannot fill a disk: past its limit its output is dropped.

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
_CHUNK = 65536


def dropped_line(limit: int) -> bytes:
    """The one line a log gets when its process's output passes ``limit``."""
    return f"\n--- wizard-arena: output past {limit} bytes dropped ---\n".encode()


class _Sink:
    """Where one pipe of a process goes: its log file, up to the limit."""

    def __init__(self, path: str, limit: int) -> None:
        # a log it creates is private (0600), as the runner's own
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.file = open(fd, "ab", buffering=0)  # noqa: SIM115
        self.limit = limit
        self.written = 0
        self.dropped = False

    def take(self, data: bytes) -> None:
        if self.limit <= 0:
            self.file.write(data)
            return
        room = self.limit - self.written
        if room > 0:
            self.file.write(data[:room])
            self.written += min(room, len(data))
        if len(data) > room and not self.dropped:
            self.dropped = True
            self.file.write(dropped_line(self.limit))


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
        self.pipes: dict[int, _Sink] = {}
        """Each process's pipe (read end) and its sink, until its end of file."""
        self.of: dict[int, list[int]] = {}
        """The pipes of each running process."""
        self.sel: selectors.BaseSelector | None = None

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
        limit = int(req.get("limit", 0))
        paths = [req["log"]] + ([req["err"]] if req.get("err") else [])
        ends: list[tuple[int, int]] = []
        sinks: list[_Sink] = []
        try:
            for path in paths:
                sinks.append(_Sink(path, limit))
                r, w = os.pipe()
                ends.append((r, w))
            out_w = ends[0][1]
            err_w = ends[-1][1]
            proc = subprocess.Popen(
                req["cmd"],
                cwd=req.get("cwd") or None,
                env=req["env"],
                stdout=out_w,
                stderr=err_w,
                stdin=subprocess.DEVNULL,
                process_group=0,  # Ctrl-C in a terminal is the runner's alone
                # one thread here: safe
                preexec_fn=functools.partial(_child_setup, tuple(req.get("cgroup", ()))),
            )
        except (OSError, subprocess.SubprocessError) as e:
            for r, w in ends:
                os.close(r)
                os.close(w)
            for sink in sinks:
                sink.file.close()
            # OSError: no such program...; SubprocessError: the cgroup could not be entered
            error = (e.strerror or str(e)) if isinstance(e, OSError) else str(e)
            self.send({"op": "spawned", "id": req["id"], "error": error})
            return
        self.of[proc.pid] = []
        for (r, w), sink in zip(ends, sinks, strict=True):
            os.close(w)
            os.set_blocking(r, False)
            self.pipes[r] = sink
            self.of[proc.pid].append(r)
            if self.sel is not None:
                self.sel.register(r, selectors.EVENT_READ)
        self.children[proc.pid] = proc
        self.send({"op": "spawned", "id": req["id"], "pid": proc.pid})

    def drain(self, fd: int) -> None:
        """Read what the pipe holds now into its sink; close it at its end."""
        sink = self.pipes.get(fd)
        if sink is None:
            return
        while True:
            try:
                data = os.read(fd, _CHUNK)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                if self.sel is not None:
                    with contextlib.suppress(KeyError, ValueError):
                        self.sel.unregister(fd)
                os.close(fd)
                sink.file.close()
                del self.pipes[fd]
                return
            sink.take(data)

    def reap(self) -> None:
        for pid, proc in list(self.children.items()):
            rc = proc.poll()
            if rc is not None:
                del self.children[pid]
                for fd in self.of.pop(pid, ()):
                    self.drain(fd)  # what it wrote before it ended (a child of its may go on)
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
    sel = launcher.sel = selectors.DefaultSelector()
    sel.register(stdin, selectors.EVENT_READ)
    sel.register(wake_r, selectors.EVENT_READ)
    buf = b""
    while True:
        for key, _ in sel.select():
            if key.fd == wake_r:
                os.read(wake_r, 4096)
                continue
            if key.fd in launcher.pipes:
                launcher.drain(key.fd)
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
