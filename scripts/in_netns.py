#!/usr/bin/env python3
"""Run a command in a network namespace of its own that has only loopback.

Ray's daemons bind every interface and reach each other over the host's
own address even when told to use 127.0.0.1, so everything that starts Ray
in the tests and benchmarks runs through this one helper::

    python scripts/in_netns.py python bench/bench_ray.py
    python scripts/in_netns.py python -m pytest tests/test_ray.py

It re-executes itself under ``unshare -n`` (root, or a user namespace
that allows it), brings ``lo`` up (``ip link set lo up``, or an ioctl when
``ip`` is missing), checks that ``lo`` is the only interface, sets
``WIZARD_ARENA_NETNS=1`` and execs the command. Tests import
:func:`inside` (are we in such a namespace?) and :func:`command` (the
command line that runs ARGV in one).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import struct
import subprocess
import sys

__all__ = ["ENV", "command", "inside", "lo_up", "problem"]

ENV = "WIZARD_ARENA_NETNS"
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


def inside() -> bool:
    """This process runs in a namespace whose only interface is loopback."""
    return os.environ.get(ENV) == "1" and [n for _, n in socket.if_nameindex()] == ["lo"]


def problem() -> str | None:
    """Why no such namespace can be made here (None: it can)."""
    if shutil.which("unshare") is None:
        return "the unshare command (util-linux) is not installed"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare -n is not permitted here ({probe.stderr.strip()}): run as root"
    return None


def command(argv: list[str]) -> list[str]:
    """The command line that runs ``argv`` in a loopback-only namespace."""
    return ["unshare", "-n", sys.executable, os.path.abspath(__file__), "--inside", *argv]


def lo_up() -> None:
    """Bring the loopback interface up."""
    ip = shutil.which("ip")
    if ip is not None:
        subprocess.run([ip, "link", "set", "lo", "up"], check=True)
        return
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), _SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s.fileno(), _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def main(argv: list[str]) -> int:
    if not argv or argv == ["--inside"]:
        print(f"usage: {sys.argv[0]} COMMAND [ARG ...]", file=sys.stderr)
        return 2
    if argv[0] != "--inside":
        why = problem()
        if why is not None:
            print(f"error: no loopback-only network namespace: {why}", file=sys.stderr)
            return 2
        os.execvp("unshare", command(argv))
    lo_up()
    names = [n for _, n in socket.if_nameindex()]
    if names != ["lo"]:
        print(f"error: the namespace has other interfaces: {names}", file=sys.stderr)
        return 2
    os.environ[ENV] = "1"
    os.execvp(argv[1], argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
