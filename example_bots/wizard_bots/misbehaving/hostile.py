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
- ``--syscall NAME``: make a system call a sandbox should refuse (``keyctl``,
  ``add_key``, ``request_key``, ``ptrace``, ``bpf``, ``perf_event_open``,
  ``userfaultfd``, ``io_uring_setup``, ``mount``, ``unshare``, ``setns``,
  ``clone`` with ``CLONE_NEWUSER``), with arguments that work where it is allowed (or fail
  with another error than ``EPERM``);
- ``--key-write NAME`` and ``--key-read NAME``: leave a key in its uid's
  user keyring, and read one a run before left there (a channel between
  two runs of the same uid);
- ``--cmdline NAME``: find the value of its variable NAME (its token:
  ``WIZARD_ARENA_TOKEN``) in the command line of another process it can see
  (``/proc/N/cmdline``: the sandbox's own starter, pid 1);
- ``--flood BYTES``: write BYTES to its standard output at once;
- ``--allocate BYTES`` with ``--in-game GAME_ID``: at its first decision in
  that game, allocate and touch BYTES of memory (``allocate BYTES: trying``
  first, ``ok`` after; a memory limit kills it in between).

Then it plays legal random moves, like :class:`wizard_bots.random_bot.RandomBot`::

    python -m wizard_bots.misbehaving.hostile --server {server} \\
        --name {name} --read ../results.sqlite --connect 127.0.0.1:8080 ...
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import os
import signal
import socket
import sys
import tempfile
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


#: System call numbers (the C library has no wrapper for some).
_SYSCALLS = {
    "x86_64": {
        "keyctl": 250, "add_key": 248, "request_key": 249, "ptrace": 101, "bpf": 321,
        "perf_event_open": 298, "userfaultfd": 323, "mount": 165, "unshare": 272,
        "setns": 308, "clone": 56, "umount2": 166, "io_uring_setup": 425,
    },
    "aarch64": {
        "keyctl": 219, "add_key": 217, "request_key": 218, "ptrace": 117, "bpf": 280,
        "perf_event_open": 241, "userfaultfd": 282, "mount": 40, "unshare": 97,
        "setns": 268, "clone": 220, "umount2": 39, "io_uring_setup": 425,
    },
}  # fmt: skip
_CLONE_NEWUSER = 0x10000000
_MNT_DETACH = 2
_KEY_SPEC_USER_KEYRING = -4


def _call(name: str, *args: object) -> int:
    """System call ``name``; OSError with its errno when it fails."""
    libc = ctypes.CDLL(None, use_errno=True)
    number = _SYSCALLS[os.uname().machine][name]
    ret = int(libc.syscall(ctypes.c_long(number), *args))
    if ret == -1:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return ret


def _syscall(name: str) -> None:
    if name == "keyctl":  # KEYCTL_GET_KEYRING_ID of its user keyring
        _call(name, ctypes.c_long(0), ctypes.c_long(_KEY_SPEC_USER_KEYRING), ctypes.c_long(1))
    elif name == "add_key":
        _call(name, b"user", b"wizard-arena-probe", b"x", ctypes.c_size_t(1),
              ctypes.c_long(_KEY_SPEC_USER_KEYRING))  # fmt: skip
    elif name == "request_key":
        _call(name, b"user", b"wizard-arena-probe", None, ctypes.c_long(0))
    elif name == "ptrace":  # PTRACE_TRACEME
        _call(name, ctypes.c_long(0), ctypes.c_long(0), None, None)
    elif name in ("bpf", "perf_event_open"):  # a null attribute: EFAULT where allowed
        _call(name, ctypes.c_long(0), None, ctypes.c_long(0), ctypes.c_long(-1), ctypes.c_long(0))
    elif name == "userfaultfd":
        os.close(_call(name, ctypes.c_long(0)))
    elif name == "io_uring_setup":  # a ring of one entry
        params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
        os.close(_call(name, ctypes.c_uint(1), params))
    elif name == "mount":
        _mount_and_undo()
    elif name == "unshare":
        _call(name, ctypes.c_long(_CLONE_NEWUSER))
    elif name == "setns":  # a bad descriptor: EBADF where allowed
        _call(name, ctypes.c_long(-1), ctypes.c_long(0))
    elif name == "clone":  # a child in a new user namespace, which exits at once
        pid = _call(name, ctypes.c_long(_CLONE_NEWUSER | signal.SIGCHLD), None, None, None, None)
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    else:
        raise ValueError(f"no such attack: {name}")


def _mount_and_undo() -> None:
    """Mount a tmpfs on an empty folder of its own, and where that works
    (unconfined, as root) take it off again at once: the attempt proves the
    point without covering anything of the machine's (never a shared folder
    such as /tmp, which every other process would then lose)."""
    target = tempfile.mkdtemp(prefix="wizard-arena-mount-")
    try:
        _call("mount", b"none", target.encode(), b"tmpfs", ctypes.c_long(0), None)
        _call("umount2", target.encode(), ctypes.c_long(_MNT_DETACH))
    finally:
        os.rmdir(target)


def _key_write(name: str) -> None:
    _call("add_key", b"user", name.encode(), b"a message", ctypes.c_size_t(9),
          ctypes.c_long(_KEY_SPEC_USER_KEYRING))  # fmt: skip


def _key_read(name: str) -> None:
    key = _call("request_key", b"user", name.encode(), None, ctypes.c_long(0))
    buf = ctypes.create_string_buffer(64)  # KEYCTL_READ
    n = _call("keyctl", ctypes.c_long(11), ctypes.c_long(key), buf, ctypes.c_long(64))
    print(f"HOSTILE read the key {name}: {buf.raw[:n]!r}", flush=True)


def _cmdline(name: str) -> None:
    text = os.environ.get(name) or "(not set)"
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        return
            except OSError:
                continue
    raise LookupError(f"in no other process's command line ({errno.ENOENT})")


def _flood(n: str) -> None:
    left = int(n)
    chunk = b"x" * 65535 + b"\n"
    while left > 0:
        left -= os.write(1, chunk[:left])


ATTACKS = {
    "read": _read,
    "write": _write,
    "connect": _connect,
    "signal": lambda pid: os.kill(int(pid), signal.SIGUSR1),
    "environ": _environ,
    "env": _own_env,
    "processes": _processes,
    "detach": _detach,
    "syscall": _syscall,
    "key-write": _key_write,
    "key-read": _key_read,
    "cmdline": _cmdline,
    "flood": _flood,
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
        for target in getattr(args, kind.replace("-", "_")):
            attack(kind, target)
    bot = HostileBot(args.allocate, args.in_game)
    run_bot(bot, args.server, name=args.name, token=args.token)
    return 0


if __name__ == "__main__":
    sys.exit(main())
