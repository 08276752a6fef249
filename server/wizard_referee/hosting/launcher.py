"""Starting bot processes without forking the runner.

A tournament runner's process runs gRPC threads. Forking it (with a
``preexec_fn``, as the runner once did to make each bot die with it) copied
the process mid-flight: bots died between fork and exec with SIGABRT
(``ev_epoll1_linux.cc ... epoll_wait error: Bad file descriptor``) or SIGSEGV
(4 of 50 launches of the example tournament; 4 to 12 of 400 starts of
``true`` while games were played, the setting of tests/test_launcher.py), and
gRPC logged ``fork_posix.cc`` lines on every start.

So the runner starts one small **launcher** process first, from its main
thread and before its gRPC server starts: a fresh interpreter running
:mod:`.launcher_child` (standard library only, one thread, started with
``vfork``/``exec``, no code run between them). It receives spawn and signal
requests over a pipe, forks and execs the bots itself, makes each one die
with it, and reports every exit back. :func:`open_launcher` runs it for
the duration of a block; :meth:`Launcher.spawn` returns a
:class:`LaunchedProcess`, which answers ``poll``, ``wait``, ``terminate``
and ``kill`` like a :class:`subprocess.Popen`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import trio

from wizard_referee.hosting import launcher_child
from wizard_referee.sandbox import OUTPUT_LIMIT

__all__ = ["OUTPUT_LIMIT", "LaunchedProcess", "Launcher", "open_launcher"]


class LaunchedProcess:
    """A process started by the launcher (the launcher is its parent)."""

    def __init__(self, launcher: Launcher, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        """Exit status once it ended (negative: killed by that signal)."""
        self._launcher = launcher
        self._exited = trio.Event()

    def poll(self) -> int | None:
        return self.returncode

    async def wait(self) -> int:
        await self._exited.wait()
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        """Signal the process if it is still running (else nothing)."""
        if self.returncode is None:
            self._launcher._send({"op": "signal", "pid": self.pid, "sig": int(sig)})

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def _set_exited(self, returncode: int) -> None:
        self.returncode = returncode
        self._exited.set()


class Launcher:
    """The runner's side of the launcher process (use :func:`open_launcher`)."""

    def __init__(self) -> None:
        # from the calling (main) thread: the launcher follows this thread's end
        self._proc = subprocess.Popen(
            [sys.executable, "-I", launcher_child.__file__, str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in = self._proc.stdin
        self._out_fd = os.dup(self._proc.stdout.fileno())
        self._proc.stdout.close()
        self._next_id = 0
        self._pending: dict[int, tuple[trio.Event, list[LaunchedProcess | str]]] = {}
        self._running: dict[int, LaunchedProcess] = {}
        self._abandoned: set[int] = set()
        """Spawn requests given up on (no answer in time): killed if they start."""
        self._gone = trio.Event()
        self._reading = trio.CancelScope(shield=True)
        """The reader's scope: shielded, so that a cancelled block still hears
        its bots exit while it stops them; cancelled once the launcher is
        closed (or did not end in time)."""

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _send(self, msg: dict[str, Any]) -> None:
        if self._in.closed:
            return
        try:
            self._in.write((json.dumps(msg) + "\n").encode())
            self._in.flush()
        except BrokenPipeError:
            pass  # the launcher is gone; the reader reports it

    async def spawn(
        self,
        cmd: Sequence[str],
        env: Mapping[str, str],
        log: str | Path,
        cwd: str | Path = "",
        cgroup: Sequence[str] = (),
        *,
        limit: int = OUTPUT_LIMIT,
        err: str | Path | None = None,
        answer_timeout: float = 30.0,
    ) -> LaunchedProcess:
        """Start ``cmd`` with stdout and stderr appended to ``log`` (stderr to
        ``err`` if given), at most ``limit`` bytes to each (0: no limit; the
        rest dropped, one line saying so), in the cgroup whose
        ``cgroup.procs`` files are ``cgroup`` (if any) from before its exec.
        OSError when it cannot be started (no such program, a cgroup it
        cannot enter, ...), or when the launcher does not answer within
        ``answer_timeout`` seconds (a process it starts after that is killed
        at once: nothing else would ever stop it)."""
        if self._gone.is_set():
            raise OSError("the launcher process has ended")
        self._next_id += 1
        rid = self._next_id
        done = trio.Event()
        box: list[LaunchedProcess | str] = []
        self._pending[rid] = (done, box)
        self._send(
            {
                "op": "spawn",
                "id": rid,
                "cmd": list(cmd),
                "env": dict(env),
                "cwd": str(cwd),
                "log": str(log),
                "err": str(err) if err is not None else "",
                "limit": int(limit),
                "cgroup": list(cgroup),
            }
        )
        try:
            with trio.fail_after(answer_timeout):
                await done.wait()
        except trio.TooSlowError:
            self._abandoned.add(rid)
            raise OSError("the launcher process did not answer") from None
        finally:
            self._pending.pop(rid, None)
        if not box:
            raise OSError("the launcher process has ended")
        if isinstance(box[0], str):
            raise OSError(box[0])
        return box[0]

    def _dispatch(self, msg: dict[str, Any]) -> None:
        if msg.get("op") == "spawned":
            rid = int(msg["id"])
            entry = self._pending.get(rid)
            if entry is None and rid in self._abandoned:
                self._abandoned.discard(rid)
                if "pid" in msg:  # started after its caller gave up: no one would stop it
                    late = LaunchedProcess(self, int(msg["pid"]))
                    self._running[late.pid] = late
                    late.kill()
            elif entry is not None:
                if "error" in msg:
                    entry[1].append(str(msg["error"]))
                else:
                    # registered now: its exit may be the very next message
                    proc = LaunchedProcess(self, int(msg["pid"]))
                    self._running[proc.pid] = proc
                    entry[1].append(proc)
                entry[0].set()
        elif msg.get("op") == "exited":
            ended = self._running.pop(int(msg["pid"]), None)
            if ended is not None:
                ended._set_exited(int(msg["returncode"]))

    async def _read(self) -> None:
        stream = trio.lowlevel.FdStream(self._out_fd)
        buf = b""
        try:
            with self._reading:
                while True:
                    data = await stream.receive_some(65536)
                    if not data:
                        break
                    buf += data
                    *lines, buf = buf.split(b"\n")
                    for line in lines:
                        if line.strip():
                            self._dispatch(json.loads(line))
        finally:
            self._gone.set()
            for done, _ in self._pending.values():
                done.set()  # answered with "has ended"
            for proc in self._running.values():
                if proc.returncode is None:  # its parent is gone: so is it (SIGTERM)
                    proc._set_exited(-signal.SIGTERM)
            self._running.clear()
            with trio.CancelScope(shield=True):
                await stream.aclose()

    def _close(self) -> None:
        with contextlib.suppress(OSError):
            self._in.close()


@contextlib.asynccontextmanager
async def open_launcher(stop_timeout: float = 10.0) -> AsyncIterator[Launcher]:
    """Start the launcher process (call this before any gRPC server or client
    runs in the process, from the thread that runs trio) and stop it at the
    end of the block: then every process it started and still running gets
    SIGTERM, and SIGKILL 3 seconds later."""
    launcher = Launcher()
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(launcher._read)
            try:
                yield launcher
            finally:
                launcher._close()
                try:
                    with trio.CancelScope(shield=True), trio.move_on_after(stop_timeout):
                        await launcher._gone.wait()
                finally:
                    launcher._reading.cancel()
                    nursery.cancel_scope.cancel()
    finally:
        launcher._close()
        proc = launcher._proc
        with trio.CancelScope(shield=True), trio.move_on_after(stop_timeout):
            while proc.poll() is None:
                await trio.sleep(0.02)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
