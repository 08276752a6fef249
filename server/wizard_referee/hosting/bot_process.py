"""One start of a bot's process: the one way every part of the arena starts
a bot (a hosted entrant's instance, ``check``'s bot under test).

It goes through the launcher (:mod:`.launcher`: never forked from a gRPC
process), its output to a log kept to its limit, and, when a
:class:`~wizard_referee.sandbox.Confinement` is given, confined: bubblewrap's
argv and clean environment, in a cgroup of its own with the confinement's
limits, which the process enters before its exec. At the end of the block
the process is stopped if it still runs (SIGTERM, then SIGKILL), whatever
it left in its cgroup is killed, and the cgroup removed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from wizard_referee.hosting.launcher import OUTPUT_LIMIT, LaunchedProcess, Launcher
from wizard_referee.sandbox import Cgroup, Confinement, confined_command

__all__ = ["STOP_GRACE", "BotProcess", "open_bot_process"]

#: Seconds a bot is given to exit after SIGTERM before it is killed.
STOP_GRACE = 3.0

_starts = itertools.count(1)


@dataclass
class BotProcess:
    """A bot's running process (see :func:`open_bot_process`)."""

    proc: LaunchedProcess
    cgroup: Cgroup | None
    """Its cgroup, when confined."""

    @property
    def returncode(self) -> int | None:
        """Its exit status once it ended (negative: killed by that signal)."""
        return self.proc.returncode

    async def wait(self) -> int:
        """Its exit status, once it ends."""
        return await self.proc.wait()

    async def stop(self, grace: float = STOP_GRACE) -> bool:
        """Stop it if it still runs (SIGTERM, then SIGKILL after ``grace``
        seconds), even when cancelled; whether it was still running."""
        if self.proc.poll() is not None:
            return False
        self.proc.terminate()
        with trio.CancelScope(shield=True):
            with trio.move_on_after(grace):
                await self.proc.wait()
            if self.proc.poll() is None:
                self.proc.kill()
                await self.proc.wait()
        return True

    def exceeded(self) -> str | None:
        """The limit its confinement ended it for ("out of memory: limit
        512 MiB"; ``None``: none, or unconfined)."""
        return self.cgroup.exceeded() if self.cgroup is not None else None


@contextlib.asynccontextmanager
async def open_bot_process(
    launcher: Launcher,
    argv: Sequence[str],
    env: Mapping[str, str],
    log: Path,
    cwd: str = "",
    confinement: Confinement | None = None,
    *,
    limit: int = OUTPUT_LIMIT,
    err: Path | None = None,
) -> AsyncIterator[BotProcess]:
    """Start ``argv`` with ``env`` through ``launcher``, its output appended
    to ``log`` (standard error to ``err`` if given) up to ``limit`` bytes,
    in ``cwd`` (confined: where bubblewrap starts; the bot runs in the
    folder its confinement names). OSError when the program cannot be
    started, :class:`~wizard_referee.sandbox.SandboxError` when it cannot
    be confined."""
    cgroup: Cgroup | None = None
    if confinement is not None:
        cgroup = Cgroup.create(f"wizard-arena-{os.getpid()}-{next(_starts)}", confinement.limits)
    try:
        if confinement is not None:
            argv, env = confined_command(list(argv), dict(env), confinement)
        procs = cgroup.procs_files if cgroup is not None else ()
        proc = await launcher.spawn(argv, env, log, cwd, procs, limit=limit, err=err)
        bot = BotProcess(proc, cgroup)
        try:
            yield bot
        finally:
            await bot.stop()
    finally:
        if cgroup is not None:
            with trio.CancelScope(shield=True), trio.move_on_after(5):
                while True:
                    cgroup.kill_all()
                    if cgroup.remove():
                        break
                    await trio.sleep(0.01)
