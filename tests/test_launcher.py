"""The launcher process that starts a tournament's bots (wizard_referee.hosting.launcher):
no bot dies at birth while the runner's gRPC threads run, exits and signals are
reported, and no bot outlives its runner."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import trio

from wizard_arena.rules import Rules
from wizard_referee.hosting.launcher import open_launcher
from wizard_referee.hosting.launcher_child import dropped_line
from wizard_referee.referee.arena import ArenaConfig, serve_arena

from .conftest import ROOT
from .support import run_aio_bots, scaled

TRUE = shutil.which("true") or "/bin/true"
LINUX = sys.platform.startswith("linux")


@pytest.mark.e2e
def test_hundreds_of_launches_while_grpc_runs_never_crash(tmp_path: Path) -> None:
    """Forking the runner (its gRPC threads running) killed 4 to 12 of these
    400 starts of ``true`` with SIGABRT between fork and exec (three runs);
    through the launcher, 400 starts while games are played on the runner's
    own gRPC server all exit 0."""
    log = tmp_path / "true.log"
    stop = threading.Event()
    games: list[int] = []

    def play_games(address: str) -> None:  # gRPC client threads in this process too
        while not stop.is_set():
            results = asyncio.run(run_aio_bots(address, 3, prefix=f"g{len(games)}-"))
            games.append(len(results))

    async def main() -> list[int]:
        codes: list[int] = []
        async with open_launcher() as launcher, trio.open_nursery() as nursery:
            config = ArenaConfig.build(
                rules=Rules(players=3, hand_sizes=(1, 2)), move_time=scaled(2.0)
            )
            arena = await nursery.start(serve_arena, config)
            played = trio.Event()

            async def games_thread() -> None:
                await trio.to_thread.run_sync(play_games, arena.address)
                played.set()

            nursery.start_soon(games_thread)

            async def once() -> None:
                proc = await launcher.spawn([TRUE], dict(os.environ), log)
                codes.append(await proc.wait())

            for _ in range(50):
                async with trio.open_nursery() as batch:
                    for _ in range(8):
                        batch.start_soon(once)
            stop.set()
            await played.wait()  # its last game ends before the server stops
            nursery.cancel_scope.cancel()
        return codes

    codes = trio.run(main)
    assert Counter(codes) == {0: 400}
    assert games and log.read_text() == ""  # games were played during the launches


@pytest.mark.e2e
def test_exits_signals_and_a_missing_program_are_reported(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    env = dict(os.environ)

    async def main() -> None:
        async with open_launcher() as launcher:
            exits = await launcher.spawn(["sh", "-c", "echo hello; exit 3"], env, log)
            assert await exits.wait() == 3 and exits.poll() == 3
            sleeper = await launcher.spawn(["sleep", "30"], env, log, cwd=tmp_path)
            assert sleeper.poll() is None
            sleeper.terminate()
            assert await sleeper.wait() == -signal.SIGTERM
            sleeper.kill()  # ended: nothing is sent (its pid may be reused)
            with pytest.raises(OSError, match="No such file"):
                await launcher.spawn(["no-such-program-for-the-launcher"], env, log)
            last = await launcher.spawn(["sleep", "30"], env, log)
        # the end of the block stops what is still running
        assert last.returncode == -signal.SIGTERM

    trio.run(main)
    assert log.read_text() == "hello\n"


def test_a_bots_output_past_its_limit_is_dropped_with_one_line(tmp_path: Path) -> None:
    """A process writing without end (here 64 MB at 8 KB a write, then a
    last line on standard error) fills its log to the limit only: the rest
    is read and dropped, one line says so, and the process is not held up
    (it exits 0); stderr to a file of its own keeps its own limit. Every
    starter's bots go through this launcher (tournament, compare, ladder,
    Ray workers and check)."""
    log, err = tmp_path / "out.log", tmp_path / "err.log"
    flood = (
        "import os, sys\n"
        "for _ in range(8192): os.write(1, b'x' * 8191 + b'\\n')\n"
        "os.write(2, b'the end\\n')\n"
    )

    async def main() -> tuple[int, int]:
        async with open_launcher() as launcher:
            merged = await launcher.spawn([sys.executable, "-c", flood], {}, log, limit=100_000)
            split = await launcher.spawn(
                [sys.executable, "-c", flood], {}, tmp_path / "o2.log", limit=50_000, err=err
            )
            return await merged.wait(), await split.wait()

    assert trio.run(main) == (0, 0)
    data = log.read_bytes()
    line = b"\n--- wizard-arena: output past 100000 bytes dropped ---\n"
    assert data == ((b"x" * 8191 + b"\n") * 13)[:100_000] + line
    assert len((tmp_path / "o2.log").read_bytes()) == 50_000 + len(dropped_line(50_000))
    assert err.read_bytes() == b"the end\n"  # its own limit: not reached


_RUNNER = """
import sys, trio
from wizard_referee.hosting.launcher import open_launcher

async def main():
    async with open_launcher() as launcher:
        proc = await launcher.spawn(["sleep", "60"], {"PATH": "/usr/bin:/bin"}, sys.argv[1])
        print(launcher.pid, proc.pid, flush=True)
        await trio.sleep(60)

trio.run(main)
"""


def _gone(pid: int) -> bool:
    """The process has ended (a zombie waiting for init counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


@pytest.mark.e2e
@pytest.mark.skipif(not LINUX, reason="die-with-parent (PR_SET_PDEATHSIG) is Linux only")
def test_bots_die_with_a_runner_killed_by_sigkill(tmp_path: Path) -> None:
    runner = subprocess.Popen(
        [sys.executable, "-c", _RUNNER, str(tmp_path / "sleep.log")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert runner.stdout is not None
    launcher_pid, bot_pid = map(int, runner.stdout.readline().split())
    assert not _gone(launcher_pid) and not _gone(bot_pid)
    runner.kill()
    runner.wait()
    deadline = time.monotonic() + 20
    while not (_gone(launcher_pid) and _gone(bot_pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(launcher_pid), "the launcher outlived its runner"
    assert _gone(bot_pid), "a bot outlived its runner"


def test_what_a_bot_wrote_is_shown_without_its_control_characters(tmp_path: Path) -> None:
    """The last lines of a bot's log (a tournament's "cannot start"
    message) and of its standard error (check's report) reach the
    organiser's terminal: an escape sequence a bot wrote (a new window
    title, a cleared screen, a right-to-left override) is shown as text,
    never sent to the terminal as it is."""
    from wizard_referee.check.report import CheckReport, Problem, format_report
    from wizard_referee.hosting.entrants import log_tail

    hostile = "\x1b]0;pwned\x07\x1b[2J\u202eevil\ttab \u00e9"
    shown = "\\x1b]0;pwned\\x07\\x1b[2J\\u202eevil\ttab \u00e9"
    log = tmp_path / "bot.log"
    log.write_text(f"--- wizard-arena: 2026 starting bot ---\n{hostile}\n")
    assert log_tail(log) == [shown]
    report = CheckReport("bot", 3, 1.0, 0, [], stderr_tail=[hostile])
    report.problems.append(Problem("crash", 1, "it crashed", "fix it"))
    text = format_report(report)
    assert f"  | {shown}\n" in text and "\x1b" not in text and "\u202e" not in text


@pytest.mark.e2e
def test_a_start_answered_after_its_caller_gave_up_is_killed(tmp_path: Path) -> None:
    """A spawn the launcher answers too late (its caller already told
    OSError) leaves no orphan running: the process is killed once it starts.
    The bot writes a line every 20 ms for a minute; its log stops growing."""
    log = tmp_path / "log"
    ticks = "while true; do echo tick; sleep 0.02; done"

    def size() -> int:
        return log.stat().st_size if log.exists() else 0

    async def main() -> tuple[int, int]:
        async with open_launcher() as launcher:
            with pytest.raises(OSError, match="did not answer"):
                await launcher.spawn(["sh", "-c", ticks], dict(os.environ), log, answer_timeout=0)
            await trio.sleep(scaled(1.0))
            before = size()
            await trio.sleep(0.5)
            return before, size()

    before, after = trio.run(main)
    assert before == after, f"the orphan kept writing: {before} -> {after} bytes"


@pytest.mark.e2e
def test_a_bot_process_is_stopped_at_the_end_of_its_block(tmp_path: Path) -> None:
    """open_bot_process: the bot's output to its log and standard error to
    its own file; a bot still running at the end of the block is stopped
    (SIGTERM; SIGKILL after the grace for one that ignores it), one that
    ended keeps its status."""
    from wizard_referee.hosting.bot_process import open_bot_process

    log, err = tmp_path / "out.log", tmp_path / "err.log"
    env = dict(os.environ)
    stubborn = "trap '' TERM; echo up; while true; do sleep 0.05; done"

    async def main() -> None:
        async with open_launcher() as launcher:
            async with open_bot_process(
                launcher, ["sh", "-c", "echo out; echo err >&2; exit 4"], env, log, err=err
            ) as bot:
                assert await bot.wait() == 4
                assert not await bot.stop()  # it had ended
            assert bot.returncode == 4
            async with open_bot_process(launcher, ["sleep", "30"], env, log) as sleeper:
                assert sleeper.returncode is None and sleeper.exceeded() is None
            assert sleeper.returncode == -signal.SIGTERM
            async with open_bot_process(launcher, ["sh", "-c", stubborn], env, log) as bot:
                with trio.fail_after(scaled(10)):
                    while "up" not in log.read_text():
                        await trio.sleep(0.01)
                assert await bot.stop(grace=0.2)
            assert bot.returncode == -signal.SIGKILL

    trio.run(main)
    assert log.read_text().startswith("out\n") and err.read_text() == "err\n"


@pytest.mark.e2e
def test_a_cancelled_block_still_hears_its_bots_stop(tmp_path: Path) -> None:
    """A block cancelled from outside (Ctrl-C in a tournament) stops its
    bots and ends: the launcher's reader outlives the cancellation, so
    each bot's stop hears its real exit (status 3, the bots' own answer to
    SIGTERM, not one made up when the reader ended). (With the reader
    cancelled too, every stop waited for an exit no one would read, and
    the tournament hung: here, until pytest-timeout.)"""
    from wizard_referee.hosting.bot_process import BotProcess, open_bot_process
    from wizard_referee.hosting.launcher import Launcher

    env = dict(os.environ)
    polite = "trap 'exit 3' TERM; echo up; while true; do sleep 0.05; done"
    stopped: list[BotProcess] = []

    async def bot(launcher: Launcher, task_status: trio.TaskStatus[None]) -> None:
        log = tmp_path / f"bot-{len(stopped)}.log"
        async with open_bot_process(launcher, ["sh", "-c", polite], env, log) as proc:
            stopped.append(proc)
            while "up" not in log.read_text():  # (its trap is set)
                await trio.sleep(0.01)
            task_status.started()
            await trio.sleep_forever()

    async def main() -> None:
        with trio.CancelScope() as block:
            async with open_launcher() as launcher, trio.open_nursery() as nursery:
                for _ in range(3):
                    await nursery.start(bot, launcher)
                block.cancel()

    trio.run(main)
    assert [p.returncode for p in stopped] == [3] * 3
