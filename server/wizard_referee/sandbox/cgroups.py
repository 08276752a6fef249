"""Limits from the kernel's cgroups: a child group under the runner's own,
with cgroup v1 (one hierarchy per controller, as mounted under
``/sys/fs/cgroup/memory``, ``.../pids``, ``.../cpu``) or v2 (one unified
hierarchy), whichever the host mounts for the memory, pids and cpu
controllers.

A confined start is put in its group before its exec (its starter writes
the child's pid to each of :attr:`Cgroup.procs_files`), so every process
and thread it starts is counted too. RLIMIT_NPROC (ignored for uid 0,
shared by every process of a uid) and RLIMIT_AS (which breaks the Node.js
and Go runtimes, which reserve address space they never use) are not used.

>>> size_text(512 * 2**20), size_text(2**30), size_text(1536 * 2**20), size_text(1000)
('512 MiB', '1 GiB', '1.5 GiB', '1000 bytes')
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CONTROLLERS",
    "OUTPUT_LIMIT",
    "Cgroup",
    "Limits",
    "SandboxError",
    "hierarchy",
    "size_text",
    "sweep",
]

#: The controllers a confined start needs.
CONTROLLERS = ("memory", "pids", "cpu")
#: The CPU quota's period, microseconds (the kernel's default).
CPU_PERIOD_US = 100_000


class SandboxError(Exception):
    """Confinement cannot be set up here (the message, one line, says why)."""


def size_text(n: int) -> str:
    """Bytes as a person writes them (MiB, GiB)."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20)):
        if n >= size:
            value = n / size
            return f"{value:g} {unit}" if value == round(value, 1) else f"{value:.1f} {unit}"
    return f"{n} bytes"


#: Bytes of output (standard output and error) a bot's log keeps per start
#: by default, confined or not: the rest is dropped, one line saying so.
OUTPUT_LIMIT = 10_000_000


@dataclass(frozen=True)
class Limits:
    """What one confined start may use."""

    memory: int = 1024 * 2**20
    """Bytes of memory (and no swap) for all its processes, its ``/tmp`` included."""
    processes: int = 64
    """Processes and threads at once, bubblewrap's two included."""
    cpus: float = 1.0
    """CPUs' worth of time, as a quota (1.5: one and a half cores)."""

    def describe(self) -> str:
        return f"memory {size_text(self.memory)}, {self.processes} processes, {self.cpus:g} CPU"


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(mount point, root, filesystem type, super options) of every cgroup mount."""
    out = []
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields, rest = left.split(), right.split()
            if len(fields) < 5 or len(rest) < 3 or rest[0] not in ("cgroup", "cgroup2"):
                continue
            point = fields[4].replace("\\040", " ")
            out.append((point, fields[3], rest[0], set(rest[2].split(","))))
    return out


def _own_groups() -> dict[str, str]:
    """This process's group by controller ("" for v2's unified one)."""
    out: dict[str, str] = {}
    with open("/proc/self/cgroup", encoding="utf-8") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                out[c] = path
    return out


def _below(point: str, root: str, path: str) -> Path:
    """The folder of group ``path`` in a hierarchy mounted at ``point`` (whose
    own root is ``root``: a container sees its part of the tree)."""
    if root != "/" and (path == root or path.startswith(root + "/")):
        path = path[len(root) :]
    return Path(point) / path.lstrip("/")


def hierarchy() -> tuple[int, dict[str, Path]]:
    """The cgroup version in use for :data:`CONTROLLERS` and, for each, the
    folder of this process's own group (v2: the same folder for all).
    SandboxError when they are not mounted."""
    try:
        mounts, own = _mounts(), _own_groups()
    except OSError as e:
        raise SandboxError(f"cannot read this process's cgroups: {e}") from None
    v1: dict[str, Path] = {}
    for point, root, kind, options in mounts:
        for c in CONTROLLERS:
            if kind == "cgroup" and c in options and c in own:
                v1[c] = _below(point, root, own[c])
    if len(v1) == len(CONTROLLERS):
        return 1, v1
    for point, root, kind, _ in mounts:
        if kind != "cgroup2" or "" not in own:
            continue
        folder = _below(point, root, own[""])
        try:
            available = (folder / "cgroup.controllers").read_text().split()
        except OSError:
            continue
        if folder.name == _runner_leaf():  # moved there by _enable_v2: its parent is ours
            folder = folder.parent
        if all(c in available for c in CONTROLLERS):
            return 2, dict.fromkeys(CONTROLLERS, folder)
    missing = [c for c in CONTROLLERS if c not in v1]
    raise SandboxError(
        "the kernel's cgroup controllers "
        + ", ".join(missing)
        + " are not mounted (neither as cgroup v1 nor in the v2 hierarchy of this process)"
    )


def _write(path: Path, value: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write(value)


def _counter(path: Path, key: str) -> int:
    """The value of ``key`` in a flat-keyed cgroup file (0 when absent)."""
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


class Cgroup:
    """One confined start's group (create it with :meth:`create`)."""

    def __init__(self, version: int, folders: dict[str, Path], limits: Limits) -> None:
        self.version = version
        self.folders = folders
        """The group's folder by controller (v2: one folder for all)."""
        self.limits = limits

    @property
    def procs_files(self) -> tuple[str, ...]:
        """Write a pid to each of these to put that process in the group."""
        return tuple(sorted({str(f / "cgroup.procs") for f in self.folders.values()}))

    def entering(self, argv: Sequence[str]) -> list[str]:
        """A command that puts itself in the group, then execs ``argv`` (for a
        starter that cannot run code between its fork and exec: a process
        with gRPC threads). ``/bin/sh`` writes its pid to each of
        :attr:`procs_files` and execs ``argv`` (same pid) only if it could."""
        files = self.procs_files
        quoted = " ".join(f'"${{{i}}}"' for i in range(1, len(files) + 1))
        script = f'echo $$ | tee {quoted} > /dev/null || exit 125; shift {len(files)}; exec "$@"'
        return ["/bin/sh", "-c", script, "sh", *files, *argv]

    @classmethod
    def create(cls, name: str, limits: Limits) -> Cgroup:
        """A new group ``name`` under this process's own, with ``limits`` set.
        SandboxError (one line) when it cannot be made."""
        version, parents = hierarchy()
        if version == 2:
            _enable_v2(parents["memory"])
        folders = {c: p / name for c, p in parents.items()}
        made: list[Path] = []
        try:
            for folder in sorted(set(folders.values())):
                folder.mkdir()
                made.append(folder)
            group = cls(version, folders, limits)
            group._set_limits()
        except OSError as e:
            for folder in made:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            hint = (
                ""
                if os.geteuid() == 0
                else ": run as root, or in a cgroup v2 group delegated to this user "
                "(systemd-run --user --scope -p Delegate=yes ...)"
            )
            raise SandboxError(
                f"cannot create the cgroup {e.filename or name}: {e.strerror or e}{hint}"
            ) from None
        return group

    def _set_limits(self) -> None:
        lim, f = self.limits, self.folders
        quota = max(1000, int(lim.cpus * CPU_PERIOD_US))
        if self.version == 1:
            _write(f["memory"] / "memory.limit_in_bytes", str(lim.memory))
            swap = f["memory"] / "memory.memsw.limit_in_bytes"
            if swap.exists():  # memory and swap together: no swap
                _write(swap, str(lim.memory))
            _write(f["pids"] / "pids.max", str(lim.processes))
            _write(f["cpu"] / "cpu.cfs_period_us", str(CPU_PERIOD_US))
            _write(f["cpu"] / "cpu.cfs_quota_us", str(quota))
        else:
            folder = f["memory"]
            _write(folder / "memory.max", str(lim.memory))
            if (folder / "memory.swap.max").exists():
                _write(folder / "memory.swap.max", "0")
            _write(folder / "pids.max", str(lim.processes))
            _write(folder / "cpu.max", f"{quota} {CPU_PERIOD_US}")

    def oom_kills(self) -> int:
        """Processes of the group the kernel killed for its memory limit."""
        folder = self.folders["memory"]
        if self.version == 1:
            return _counter(folder / "memory.oom_control", "oom_kill")
        return _counter(folder / "memory.events", "oom_kill")

    def pid_refusals(self) -> int:
        """Processes or threads the group could not start for its limit."""
        return _counter(self.folders["pids"] / "pids.events", "max")

    def exceeded(self) -> str | None:
        """Which limit was hit, as a fault's reason ("out of memory: limit
        512 MiB", "process limit 64"); ``None``: none."""
        if self.oom_kills():
            return f"out of memory: limit {size_text(self.limits.memory)}"
        if self.pid_refusals():
            return f"process limit {self.limits.processes}"
        return None

    def pids(self) -> set[int]:
        out: set[int] = set()
        for name in self.procs_files:
            with contextlib.suppress(OSError, ValueError):
                out.update(int(p) for p in Path(name).read_text().split())
        return out

    def kill_all(self) -> None:
        """SIGKILL to every process left in the group (a detached one too)."""
        kill = self.folders["memory"] / "cgroup.kill"
        if self.version == 2 and kill.exists():
            with contextlib.suppress(OSError):
                _write(kill, "1")
                return
        for _ in range(3):  # a process may fork while we read
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> bool:
        """Remove the group; False while processes are still leaving it (try again)."""
        done = True
        for folder in sorted(set(self.folders.values())):
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError as e:
                if e.errno != errno.EBUSY:
                    raise
                done = False
        return done


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def sweep(prefix: str = "wizard-arena-") -> int:
    """Remove the empty groups ``PREFIX<pid>-...`` that a starter killed with
    SIGKILL left behind (its pid no longer runs); how many. A group that
    still holds a process is left alone (rmdir refuses it)."""
    _, parents = hierarchy()
    removed = 0
    for folder in set(parents.values()):
        for child in folder.glob(prefix + "*"):
            pid = child.name[len(prefix) :].split("-", 1)[0]
            if not pid.isdigit() or _alive(int(pid)):
                continue
            with contextlib.suppress(OSError):
                child.rmdir()
                removed += 1
    return removed


def _runner_leaf() -> str:
    return f"wizard-arena-{os.getpid()}-runner"


def _enable_v2(parent: Path) -> None:
    """Make the controllers available to the child groups of ``parent`` (v2).
    A v2 group with processes cannot give its children controllers: when
    this process is the only one in ``parent`` (a scope of its own, e.g.
    ``systemd-run --scope -p Delegate=yes``), it moves to a leaf group of
    its own first."""
    enabled = (parent / "cgroup.subtree_control").read_text().split()
    wanted = [c for c in CONTROLLERS if c not in enabled]
    if not wanted:
        return
    control = " ".join(f"+{c}" for c in wanted)
    try:
        try:
            _write(parent / "cgroup.subtree_control", control)
        except OSError as e:
            procs = (parent / "cgroup.procs").read_text().split()
            if e.errno != errno.EBUSY or procs != [str(os.getpid())]:
                raise
            leaf = parent / _runner_leaf()
            leaf.mkdir(exist_ok=True)
            _write(leaf / "cgroup.procs", str(os.getpid()))
            _write(parent / "cgroup.subtree_control", control)
    except OSError as e:
        raise SandboxError(
            f"cannot enable the {', '.join(wanted)} controllers for child groups of {parent} "
            f"({e.strerror or e}): run the tournament in a cgroup of its own that it may "
            "manage, e.g. systemd-run --scope -p Delegate=yes wizard-arena tournament ... "
            "(as root) or systemd-run --user --scope -p Delegate=yes ..."
        ) from None
