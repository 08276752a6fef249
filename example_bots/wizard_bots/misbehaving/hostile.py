"""A hostile entrant: a bot that attacks the machine it runs on, not the
protocol, to test a tournament's sandbox (``sandbox = "bwrap"``;
docs/untrusted-bots.md).

Before it connects it tries each attack it is given, and prints one line for
each on its standard output (its log), ``HOSTILE <attack> <target>: ok`` when
the attack worked or ``HOSTILE <attack> <target>: denied (<why>)``:

- ``--read PATH``: read a file (the results store, the configuration,
  another entrant's folder);
- ``--write PATH``: create or append to a file (outside its folder, or in its
  own folder);
- ``--connect HOST:PORT``: open a TCP connection (a loopback service);
- ``--signal PID``: send SIGUSR1 to another process;
- ``--environ PID``: read another process's environment
  (``/proc/PID/environ``);
- ``--env NAME``: find the variable NAME (the organiser's) in its own
  environment;
- ``--processes N``: start N processes that sleep, at once (then ends them);
- ``--detach MARK``: leave a detached process behind (double fork, a session
  of its own; ``MARK`` in its command line, so that it can be found);
- ``--allocate BYTES`` with ``--in-game GAME_ID``: at its first decision in
  that game, allocate and touch BYTES of memory (``allocate BYTES: trying``
  first, ``ok`` after; a memory limit kills it in between).

Then it plays legal random moves, like :class:`wizard_bots.random_bot.RandomBot`::

    python -m wizard_bots.misbehaving.hostile --server {server} \\
        --name {name} --read ../results.sqlite --connect 127.0.0.1:8080 ...
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import time
from collections.abc import Sequence

from wizard_arena import SeatView
from wizard_arena.bot import GameInfo
from wizard_arena.client import run_bot
from wizard_bots.random_bot import RandomBot

__all__ = ["HostileBot", "attack", "main"]


def _report(attack: str, target: object, error: BaseException | None = None) -> None:
    result = "ok" if error is None else f"denied ({type(error).__name__}: {error})"
    print(f"HOSTILE {attack} {target}: {result}", flush=True)


def _read(path: str) -> None:
    with open(path, "rb") as f:
        f.read(100)


def _write(path: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write("written by a hostile bot\n")


def _connect(address: str) -> None:
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=3):
        pass


def _environ(pid: str) -> None:
    with open(f"/proc/{pid}/environ", "rb") as f:
        if not f.read():
            raise PermissionError("empty")


def _own_env(name: str) -> None:
    if name not in os.environ:
        raise LookupError("not in its environment")


def _processes(n: str) -> None:
    children: list[int] = []
    try:
        for _ in range(int(n)):
            pid = os.fork()
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            children.append(pid)
    except OSError as e:
        raise OSError(f"only {len(children)} of {n} started: {e.strerror}") from None
    finally:
        for pid in children:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def _detach(mark: str) -> None:
    pid = os.fork()
    if pid == 0:  # the child: a session of its own, then the grandchild stays
        os.setsid()
        if os.fork() == 0:
            code = "import time; time.sleep(120)"
            os.execv(sys.executable, [sys.executable, "-c", code, mark])
        os._exit(0)
    os.waitpid(pid, 0)


ATTACKS = {
    "read": _read,
    "write": _write,
    "connect": _connect,
    "signal": lambda pid: os.kill(int(pid), signal.SIGUSR1),
    "environ": _environ,
    "env": _own_env,
    "processes": _processes,
    "detach": _detach,
}


def attack(kind: str, target: str) -> bool:
    """Try one attack and print what happened; True when it worked."""
    try:
        ATTACKS[kind](target)
    except Exception as e:
        _report(kind, target, e)
        return False
    _report(kind, target)
    return True


class HostileBot(RandomBot):
    """A random bot that allocates ``allocate`` bytes at its first decision
    in the game ``in_game``."""

    name = "hostile"

    def __init__(self, allocate: int = 0, in_game: str = "") -> None:
        super().__init__()
        self.allocate, self.in_game = allocate, in_game
        self.hoard: list[bytearray] = []
        self.game = ""

    def on_game_start(self, info: GameInfo) -> None:
        super().on_game_start(info)
        self.game = info.game_id

    def bid(self, view: SeatView) -> int:
        if self.allocate and self.game == self.in_game and not self.hoard:
            print(f"HOSTILE allocate {self.allocate}: trying", flush=True)
            for _ in range(0, self.allocate, 2**20):
                self.hoard.append(bytearray(b"\x01") * 2**20)  # touched: resident
            _report("allocate", self.allocate)
        return super().bid(view)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m wizard_bots.misbehaving.hostile")
    p.add_argument("--server", required=True)
    p.add_argument("--token", default=os.environ.get("WIZARD_ARENA_TOKEN"))
    p.add_argument("--name", default="hostile")
    for kind in ATTACKS:
        p.add_argument(f"--{kind}", action="append", default=[], metavar="TARGET")
    p.add_argument("--allocate", type=int, default=0, metavar="BYTES")
    p.add_argument("--in-game", default="", metavar="GAME_ID")
    args = p.parse_args(argv)
    for kind in ATTACKS:
        for target in getattr(args, kind):
            attack(kind, target)
    bot = HostileBot(args.allocate, args.in_game)
    run_bot(bot, args.server, name=args.name, token=args.token)
    return 0


if __name__ == "__main__":
    sys.exit(main())
