"""The processes of a host's command entrants: checked before any game,
each start through :func:`~.bot_process.open_bot_process`,
restarted when they crash, and stopped at once, with the last lines of their
log, when they cannot start.

An instance that exits before it ever connected cannot start (no such
module, packages not installed, memory exhausted at import, a bad
argument): restarting it would only fail again, so it is not waited for.
That is its entrant's fault alone: its seats are played by the referee's
default action, recorded as ``crash`` with the reason ("never connected:
its process exited with status 1"), and every other game is played (a
comparison, whose two bots are one user's, stops with the reason instead).
An instance that connected and then exits has crashed: it is restarted (up
to :data:`MAX_RESTARTS` times) and its seat in the game it left is recorded
as ``crash``.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import trio

from wizard_referee.hosting.bot_process import open_bot_process
from wizard_referee.hosting.config import EntrantConfig
from wizard_referee.hosting.launcher import OUTPUT_LIMIT, LaunchedProcess, Launcher
from wizard_referee.referee.logs import open_private, shown
from wizard_referee.referee.record import GameRecord
from wizard_referee.sandbox import Confinement, SandboxError

__all__ = [
    "MAX_RESTARTS",
    "EntrantStartError",
    "Instance",
    "log_name",
    "log_tail",
    "make_instances",
    "preflight",
    "relabel_absent",
    "relabel_crashes",
    "settle_exits",
    "supervise",
]

#: Restarts per instance after crashes before the runner gives up on it.
MAX_RESTARTS = 5
#: Seconds to wait for a launched bot that disconnected to be seen exiting.
EXIT_SETTLE = 2.0
#: Lines of an instance's log shown when it cannot start: its first and last ones.
HEAD_LINES = 6
TAIL_LINES = 12
_MARK = "--- wizard-arena: "


def log_name(name: str, index: int) -> str:
    """The file name of instance ``index``'s log: the entrant's name (any
    text) with every character but letters, digits, ``-``, ``_`` and ``.``
    percent-encoded, so it names a file in the logs folder and nowhere else
    (``../x`` is ``..%2Fx-0.log``); a long name is cut and given a digest so
    two names never share a file.

    >>> log_name("h1", 0), log_name("../../escaped", 1), log_name("a/b", 0)
    ('h1-0.log', '..%2F..%2Fescaped-1.log', 'a%2Fb-0.log')
    """
    safe = quote(name, safe="-_.")
    if len(safe) > 120:
        digest = hashlib.sha256(name.encode()).hexdigest()[:16]
        safe = f"{safe[:100]}~{digest}"
    return f"{safe}-{index}.log"


class EntrantStartError(Exception):
    """An entrant's process cannot be started, or exited before it connected."""

    def __init__(self, entrant: str, message: str, fault: str = "") -> None:
        super().__init__(message)
        self.entrant = entrant
        self.fault = fault or message.splitlines()[0]
        """The fault in a few words, as its seats' records keep it
        ("never connected: its process exited with status 1")."""


@dataclass
class Instance:
    """One running copy of a command entrant (its own token and log)."""

    entrant: EntrantConfig
    index: int
    token: str
    restarts: int = 0
    log_path: Path | None = None
    proc: LaunchedProcess | None = None
    """The running process, once started."""
    connected: bool = False
    """Its bot has connected at least once (set by the runner)."""
    confinement: Confinement | None = None
    """How it runs confined, or ``None``: as this user."""
    exit_reason: str | None = None
    """The limit its last process exceeded ("out of memory: limit 512 MiB"),
    known once that process has exited (``None``: none, or unconfined)."""
    scope: trio.CancelScope | None = None
    """The cancel scope its supervision runs in, once started (the
    host's :meth:`~.host.GameHost.stop` cancels it)."""
    down: str | None = None
    """Why it runs no more, once its supervision gave up on it (it never
    connected, or crashed past :data:`MAX_RESTARTS`): the fault its
    entrant's seats record from then on."""


def _rel(path: Path | str) -> str:
    """``path`` relative to the current folder when it is below it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# -- before anything starts -------------------------------------------------------------


#: How a tournament's preflight message ends: what else the organiser can do.
FILE_REMEDY = "take the entrant out of the file"


def _program_problem(name: str, prog: str, workdir: str, remedy: str) -> str | None:
    if "{" in prog:
        return None  # replaced when started
    if "/" in prog:
        path = Path(workdir or ".") / prog
        if path.is_file() and os.access(path, os.X_OK):
            return None
        return (
            f"entrant {name!r}: program {prog} not found (or not executable) in {_rel(path.parent)}"
        )
    if shutil.which(prog) is not None:
        return None
    hint = "install Node.js 18 or later" if prog in ("node", "nodejs") else f"install {prog}"
    return f"entrant {name!r}: program {prog!r} not found on PATH: {hint}, or {remedy}"


def _node_problem(name: str, command: Sequence[str], workdir: str, remedy: str) -> str | None:
    """A Node.js script whose package has dependencies but no ``node_modules``."""
    script = next((a for a in command[1:] if not a.startswith("-")), None)
    if script is None or "{" in script:
        return None
    path = Path(workdir or ".") / script
    if not path.is_file():
        return f"entrant {name!r}: no script {script} in {_rel(Path(workdir or '.'))}"
    for folder in [path.parent, *path.parent.parents]:
        manifest = folder / "package.json"
        if not manifest.is_file():
            continue
        try:
            deps = json.loads(manifest.read_text(encoding="utf-8")).get("dependencies")
        except (OSError, ValueError, AttributeError):
            return None
        if not deps or any((f / "node_modules").is_dir() for f in [folder, *folder.parents]):
            return None
        verb = "ci" if (folder / "package-lock.json").is_file() else "install"
        return (
            f"entrant {name!r} needs its Node.js packages, which are not installed: run "
            f"`npm {verb} --prefix {_rel(folder)}` once (or {remedy})"
        )
    return None


def preflight(
    entrants: Sequence[EntrantConfig], workdir: str, remedy: str = FILE_REMEDY
) -> list[str]:
    """Why entrant commands could not start (program not found, a Node.js bot
    without its packages), before anything is created or started; each
    message ends with ``remedy``, what else its user can do."""
    problems = []
    for e in entrants:
        if e.command is None or (e.folder and not Path(e.folder).is_dir()):
            continue  # a folder that does not exist: confine.sandbox_problems
        folder = e.folder or workdir
        problem = _program_problem(e.name, e.command[0], folder, remedy)
        if problem is None and Path(e.command[0]).name in ("node", "nodejs"):
            problem = _node_problem(e.name, e.command, folder, remedy)
        if problem is not None:
            problems.append(problem)
    return problems


# -- running ----------------------------------------------------------------------------


def make_instances(
    entrants: Sequence[EntrantConfig], parallel: int
) -> tuple[list[Instance], dict[str, str]]:
    """``parallel`` instances of every command entrant, each with a fresh
    token; and the entrant's name by token (external bots' tokens too)."""
    instances: list[Instance] = []
    token_owner: dict[str, str] = {}
    for e in entrants:
        if e.command is None:
            if e.token is not None:  # (an external bot without one can never join)
                token_owner[e.token] = e.name
            continue
        for i in range(parallel):
            token = secrets.token_hex(16)  # hex: never starts with "-"
            instances.append(Instance(e, i, token))
            token_owner[token] = e.name
    return instances, token_owner


#: Never passed to a bot: a Ray cluster's token (a bot started by a Ray worker
#: would inherit it, and with it the right to run code on the cluster).
WITHHELD_ENV = frozenset({"RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"})


def command_line(inst: Instance, address: str) -> tuple[list[str], dict[str, str]]:
    """The instance's command with ``{server}``, ``{token}`` and ``{name}``
    replaced, and its environment."""
    assert inst.entrant.command is not None
    subst = {"{server}": address, "{token}": inst.token, "{name}": inst.entrant.name}
    cmd = []
    for part in inst.entrant.command:
        for k, v in subst.items():
            part = part.replace(k, v)
        cmd.append(part)
    env = dict(
        {k: v for k, v in os.environ.items() if k not in WITHHELD_ENV},
        WIZARD_ARENA_SERVER=address,
        WIZARD_ARENA_TOKEN=inst.token,
        WIZARD_ARENA_NAME=inst.entrant.name,
    )
    return cmd, env


def log_tail(path: Path, head: int = HEAD_LINES, tail: int = TAIL_LINES) -> list[str]:
    """What its latest process wrote to a log: every line if there are at
    most about ``head + tail``, else the first ``head`` (where Node.js names its
    error) and the last ``tail`` (where Python does)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = text.splitlines()
    for i in range(len(out) - 1, -1, -1):
        if out[i].startswith(_MARK) and " starting " in out[i]:  # (not "output past")
            out = out[i + 1 :]
            break
    out = [shown(line) for line in out if line.strip()]  # (for a terminal: no escapes)
    if len(out) <= head + tail + 3:  # (no gap of a line or two)
        return out
    return [*out[:head], f"... ({len(out) - head - tail} lines)", *out[-tail:]]


def _exit_text(returncode: int) -> str:
    if returncode < 0:
        import signal

        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


def start_failure(inst: Instance, returncode: int, workdir: str) -> str:
    """The message for an instance that ended before it connected."""
    assert inst.log_path is not None and inst.entrant.command is not None
    why = f" ({inst.exit_reason})" if inst.exit_reason else ""
    lines = [
        f"entrant {inst.entrant.name!r} cannot start: its process {_exit_text(returncode)}"
        f"{why} before it connected",
        f"  command (run in {_rel(Path(workdir or '.'))}): {' '.join(inst.entrant.command)}",
    ]
    shown = log_tail(inst.log_path)
    if shown:
        lines.append(f"  last lines of its log, {_rel(inst.log_path)}:")
        lines += [f"  | {line}" for line in shown]
    else:
        lines.append(f"  it wrote nothing to its log, {_rel(inst.log_path)}")
    return "\n".join(lines)


async def supervise(
    inst: Instance,
    address: str,
    launcher: Launcher,
    workdir: str,
    log: Any,
    refused: Callable[[str], bool],
    notice: Callable[[str], None] | None = None,
    output_limit: int = OUTPUT_LIMIT,
) -> None:
    """Run one instance of a command entrant; restart it when it crashes.
    EntrantStartError when it cannot be started or exits before it ever
    connected (unless the referee refused it: the runner reports that).
    ``notice`` is told, in one line a user reads, each time it exits;
    ``output_limit``: the bytes of its output each start's log keeps."""
    assert inst.entrant.command is not None and inst.log_path is not None
    name = inst.entrant.name
    workdir = inst.entrant.folder or workdir
    cmd, env = command_line(inst, address)
    while True:
        with open_private(inst.log_path) as out:
            out.write(
                f"{_MARK}{time.strftime('%Y-%m-%d %H:%M:%S')} starting {name} "
                f"(instance {inst.index}, restart {inst.restarts}) ---\n"
            )
        try:
            async with open_bot_process(
                launcher, cmd, env, inst.log_path, workdir, inst.confinement, limit=output_limit
            ) as bot:
                inst.proc = bot.proc
                returncode = await bot.wait()
                inst.exit_reason = bot.exceeded()
        except SandboxError as e:
            raise EntrantStartError(name, f"entrant {name!r}: {e}") from None
        except OSError as e:
            log.error("entrant_start_failed", entrant=name, error=str(e))
            raise EntrantStartError(
                name,
                f"entrant {name!r}: cannot start {cmd[0]!r}: {e}",
                f"never started: {cmd[0]!r}: {e}",
            ) from None
        if not inst.connected:
            if refused(inst.token):
                return
            log.error(
                "entrant_cannot_start",
                entrant=name,
                returncode=returncode,
                reason=inst.exit_reason,
                log=str(inst.log_path),
            )
            why = f" ({inst.exit_reason})" if inst.exit_reason else ""
            raise EntrantStartError(
                name,
                start_failure(inst, returncode, workdir),
                f"never connected: its process {_exit_text(returncode)}{why}",
            )
        inst.restarts += 1
        log.warning(
            "entrant_exited",
            entrant=name,
            instance=inst.index,
            returncode=returncode,
            restarts=inst.restarts,
            log=str(inst.log_path),
            reason=inst.exit_reason,
        )
        gave_up = inst.restarts > MAX_RESTARTS
        if notice is not None:
            then = (
                "not restarted again" if gave_up else f"restart {inst.restarts} of {MAX_RESTARTS}"
            )
            why = f", {inst.exit_reason}" if inst.exit_reason else ""
            notice(
                f"entrant {name!r} (instance {inst.index}) exited with status {returncode}"
                f"{why} ({then}; its games record the fault 'crash'); its log: {inst.log_path}"
            )
        if gave_up:
            log.error("entrant_gave_up", entrant=name, instance=inst.index)
            why = f" ({inst.exit_reason})" if inst.exit_reason else ""
            inst.down = (
                f"its process ended {inst.restarts} time(s) and is not restarted again; "
                f"the last {_exit_text(returncode)}{why}"
            )
            return
        await trio.sleep(min(0.5 * inst.restarts, 3.0))


# -- after a game -----------------------------------------------------------------------


async def settle_exits(
    record: GameRecord, insts: Sequence[Instance | None], exits: Sequence[int]
) -> None:
    """A launched bot's process that dropped its connection may still be
    exiting when its game ends (its socket closes before it is reaped): give
    it a moment, so that :func:`relabel_crashes` sees it has exited."""
    for seat, (inst, before) in enumerate(zip(insts, exits, strict=True)):
        if inst is None or "disconnect" not in record.faults[seat]:
            continue
        # until its supervisor has seen the exit (and read the limit it hit, if any)
        with trio.move_on_after(EXIT_SETTLE):
            while inst.restarts == before and inst.proc is not None:
                await trio.sleep(0.02)


def relabel_crashes(record: GameRecord, insts: Sequence[Any], exits: Sequence[int]) -> None:
    """A seat played by a bot process the runner launched, faulted
    ``disconnect`` while that process exited during the game (it was
    restarted since the game began, or is not running now): the fault is
    recorded as ``crash`` instead (in the record; the bots' GameOver said
    ``disconnect``)."""
    for seat, (inst, before) in enumerate(zip(insts, exits, strict=True)):
        if inst is None or "disconnect" not in record.faults[seat]:
            continue
        proc = inst.proc
        if inst.restarts == before and (proc is None or proc.poll() is None):
            continue
        faults, details = record.faults[seat], record.fault_details[seat]
        faults["crash"] = faults.get("crash", 0) + faults.pop("disconnect")
        detail = details.pop("disconnect", "")
        reason = getattr(inst, "exit_reason", None)
        if reason:  # a confined bot killed for a limit it exceeded
            details["crash"] = f"the bot's process was killed: {reason}"
        else:
            details.setdefault("crash", f"the bot's process exited ({detail})" if detail else "")
        for rnd in record.rounds:
            for mv in rnd.moves:
                if mv.seat == seat and mv.fault == "disconnect":
                    mv.fault = "crash"


def relabel_absent(record: GameRecord, names: Sequence[str], down: Mapping[str, str]) -> None:
    """The seats no bot played because their entrant runs no more (``names``:
    each absent seat's entrant, "" for the others; ``down``: why, by name:
    it never connected, or crashed past its restarts) are faulted ``crash``
    with that reason (once a game), and the referee's moves for them too."""
    for seat, name in enumerate(names):
        why = down.get(name)
        if why is None:
            continue
        record.faults[seat].pop("disconnect", None)
        record.fault_details[seat].pop("disconnect", None)
        record.add_fault(seat, "crash", why)
        for rnd in record.rounds:
            for mv in rnd.moves:
                if mv.seat == seat:
                    mv.fault = "crash"
