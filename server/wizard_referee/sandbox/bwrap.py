"""The command line of a confined start: bubblewrap, then setpriv, then the
command.

bubblewrap (``bwrap``) gives the command namespaces of its own (PID, network,
IPC, UTS, cgroup where it can) and a filesystem made of read-only binds: the
system's files (``/usr``, ``/etc``), the Python environment (the prefixes,
``PYTHONPATH`` and what ``.pth`` files and editable installs point at), the
command's own folder, the folder of the referee's Unix socket, and a fresh
``/tmp`` (an in-memory tmpfs, made empty for each start, gone with it, counted
in its memory limit). A new PID namespace means that when the command ends,
the kernel ends every process it left, a detached one too.

The command runs under a seccomp filter (:mod:`.seccomp`: no keyrings,
ptrace, bpf, mounts or new namespaces...), and gets an environment of
:data:`ENV_ALLOWED` only, handed to bubblewrap as its own environment,
never on its command line (which ``ps`` shows, and ``/proc/1/cmdline`` in
the sandbox).

As root, bubblewrap runs without a user namespace (``--unshare-user --uid N``
would still run the command as the host's uid 0) and ``setpriv`` drops to the
start's own uid, with no supplementary groups, an empty bounding set, no
capabilities and ``no_new_privs``. Not as root, bubblewrap makes a user
namespace instead and the command keeps the organiser's uid (mapped).
"""

from __future__ import annotations

import glob
import math
import os
import shutil
import site
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wizard_referee.sandbox.cgroups import Limits
from wizard_referee.sandbox.seccomp import filter_file

__all__ = [
    "ENV_ALLOWED",
    "SANDBOXES",
    "SOCKET_DIR",
    "UID_BASE",
    "Confinement",
    "confined_command",
    "gpu_args",
    "python_paths",
    "share_gpus",
    "system_paths",
    "visible_gpus",
]

#: The first confined uid: entrant k (from 0) runs as ``UID_BASE + k``.
UID_BASE = 60001
#: Where the folder of the referee's Unix socket is seen in the sandbox.
SOCKET_DIR = "/run/wizard-arena"
#: The only variables of the starter's environment a confined command gets:
#: its own (where the referee is, its token, name and games) and the
#: system's basics; no other (an organiser's ``WIZARD_ARENA_LADDER_STORE``
#: or cloud keys never reach it). ``HOME`` and ``TMPDIR`` are ``/tmp``.
ENV_ALLOWED = (
    "WIZARD_ARENA_SERVER",
    "WIZARD_ARENA_TOKEN",
    "WIZARD_ARENA_NAME",
    "WIZARD_ARENA_GAMES",
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
    "PYTHONPATH",
    "PYTHONUNBUFFERED",
    "PYTHONHASHSEED",
)
#: What setpriv does to the command, as root.
SETPRIV_DROP = ("--clear-groups", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs")

#: How a bot started for others may run: as this user, or confined (bubblewrap).
SANDBOXES = ("none", "bwrap")


@dataclass(frozen=True)
class Confinement:
    """What one confined start sees and may use."""

    uid: int
    """Its own unprivileged uid (and gid), as root; not as root, unused."""
    folder: Path | None = None
    """Its own folder: read-only, and where it runs (``None``: it runs in ``/tmp``)."""
    socket_dir: Path | None = None
    """A host folder seen as :data:`SOCKET_DIR` (read-only): the referee's socket."""
    limits: Limits = field(default_factory=Limits)
    readable: tuple[Path, ...] | None = None
    """Other read-only folders; ``None``: :func:`python_paths`."""
    writable: tuple[Path, ...] = ()
    """Folders it may write, seen where they are (``check``: the folder of
    the SDK's report; a folder of their own, never one holding anything else)."""
    gpus: tuple[str, ...] = ()
    """Its GPUs, as CUDA_VISIBLE_DEVICES indices (:func:`share_gpus`): their
    device files, and none other, are bound into its ``/dev``
    (:func:`gpu_args`), and its CUDA_VISIBLE_DEVICES names them."""


#: The NVIDIA driver's device files every GPU user needs (beside /dev/nvidiaN).
GPU_SHARED = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset")


def share_gpus(asks: Sequence[float], visible: str | None) -> list[tuple[str, ...]]:
    """The GPUs of each instance, in order, from the devices a process was
    given (``visible``: its CUDA_VISIBLE_DEVICES, what Ray assigns an actor
    that reserves GPUs; ``None`` or empty: none). An instance asking for
    ``g`` GPUs gets the next ones; fractions share a device. ValueError when
    the asks exceed them, or a device is named by UUID.

    >>> share_gpus([1, 1], "2,3")
    [('2',), ('3',)]
    >>> share_gpus([0.5, 0.5, 1, 0], "0,1")
    [('0',), ('0',), ('1',), ()]
    >>> share_gpus([2], "0")
    Traceback (most recent call last):
    ...
    ValueError: the entrants ask for 2 GPUs, and CUDA_VISIBLE_DEVICES gives 1 ('0')
    """
    ids = [x.strip() for x in (visible or "").split(",") if x.strip()]
    named = [x for x in ids if not x.isdigit()]
    if named:
        raise ValueError(
            f"CUDA_VISIBLE_DEVICES names GPUs by UUID ({named[0]}): confinement binds "
            "/dev/nvidiaN files, so it needs their indices"
        )
    total = sum(asks)
    if total > len(ids) + 1e-9:
        raise ValueError(
            f"the entrants ask for {total:g} GPUs, and CUDA_VISIBLE_DEVICES gives "
            f"{len(ids)} ({visible or 'none'!r})"
        )
    out: list[tuple[str, ...]] = []
    used = 0.0
    for ask in asks:
        if ask <= 0:
            out.append(())
            continue
        first, last = math.floor(used + 1e-9), math.ceil(used + ask - 1e-9)
        out.append(tuple(ids[first:last]))
        used += ask
    return out


def visible_gpus(env: Mapping[str, str], present: Iterable[str]) -> str:
    """The GPUs a starter may hand out: its CUDA_VISIBLE_DEVICES when set
    (what Ray assigns a worker that reserves GPUs), else every
    ``/dev/nvidiaN`` among ``present``.

    >>> visible_gpus({}, ["/dev/nvidia1", "/dev/nvidiactl", "/dev/nvidia0"])
    '0,1'
    >>> visible_gpus({"CUDA_VISIBLE_DEVICES": "3"}, ["/dev/nvidia0"])
    '3'
    """
    if "CUDA_VISIBLE_DEVICES" in env:
        return env["CUDA_VISIBLE_DEVICES"]
    ids = [p.removeprefix("/dev/nvidia") for p in present]
    return ",".join(sorted((i for i in ids if i.isdigit()), key=int))


def gpu_args(gpus: Sequence[str], present: Iterable[str]) -> list[str]:
    """bubblewrap's arguments that bind GPUs ``gpus`` (indices) into a
    sandbox's ``/dev``: ``/dev/nvidiaN`` for each, and the driver's shared
    files among ``present`` (the ``/dev/nvidia*`` files there are); no other
    GPU's. ValueError for a GPU without its device file.

    >>> gpu_args(["1"], ["/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl", "/dev/nvidia-uvm"])
    ['--dev-bind', '/dev/nvidia1', '/dev/nvidia1', '--dev-bind', '/dev/nvidiactl', \
'/dev/nvidiactl', '--dev-bind', '/dev/nvidia-uvm', '/dev/nvidia-uvm']
    >>> gpu_args([], ["/dev/nvidia0", "/dev/nvidiactl"])
    []
    """
    if not gpus:
        return []
    there = set(present)
    files = [f"/dev/nvidia{g}" for g in gpus]
    missing = [f for f in files if f not in there]
    if missing:
        raise ValueError(f"GPU {missing[0].removeprefix('/dev/nvidia')}: no {missing[0]} here")
    files += [f for f in GPU_SHARED if f in there]
    args: list[str] = []
    for f in files:
        args += ["--dev-bind", f, f]
    return args


def _existing(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if not p:
            continue
        path = Path(os.path.abspath(p))
        if path.exists() and path not in out:
            out.append(path)
    return out


def _pth_folders(site_dir: Path) -> list[str]:
    """The folders ``.pth`` files and editable-install finders in ``site_dir`` add."""
    out: list[str] = []
    try:
        names = sorted(os.listdir(site_dir))
    except OSError:
        return out
    for name in names:
        finder = name.startswith("__editable__") and name.endswith("_finder.py")
        if not (name.endswith(".pth") or finder):
            continue
        path = site_dir / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if name.endswith(".pth"):
            out += [
                line.strip()
                for line in text.splitlines()
                if line.strip() and not line.startswith(("#", "import ", "import\t"))
            ]
        else:
            # setuptools' editable finder: MAPPING = {'pkg': '/path/to/pkg', ...}
            for line in text.splitlines():
                if line.startswith("MAPPING"):
                    out += [part for part in line.split("'")[3::4] if part.strip()]
    return out


def python_paths() -> list[Path]:
    """The Python environment of this interpreter: its prefixes, ``PYTHONPATH``,
    and every folder its site-packages' ``.pth`` files and editable installs
    point at (a bot run with the same interpreter imports what we do)."""
    exe = Path(sys.executable)
    candidates: list[str | Path] = [
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        exe.parent,
        exe.resolve().parent.parent,
    ]
    candidates += os.environ.get("PYTHONPATH", "").split(os.pathsep)
    sites = [*site.getsitepackages(), site.getusersitepackages()]
    for s in sites:
        candidates += _pth_folders(Path(s))
    return _existing(candidates)


def system_paths() -> list[Path]:
    """The system's files: ``/usr`` and ``/etc`` (and ``/bin``, ``/lib``... where
    they are not links into ``/usr``)."""
    out = [Path("/usr"), Path("/etc")]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / name
        if p.is_dir() and not p.is_symlink():
            out.append(p)
    return out


def _within(path: Path, others: Iterable[Path]) -> bool:
    return any(path == o or o in path.parents for o in others)


def _binds(readable: Sequence[Path], writable: Sequence[Path] = ()) -> list[str]:
    """``--ro-bind`` arguments for ``readable`` (nested ones once) and
    ``--bind`` for ``writable``, each mount point's folders made first with
    mode 0755 (bubblewrap makes them 0700 as root, and the confined uid could
    not reach the bind)."""
    args: list[str] = []
    bound: list[Path] = [*system_paths(), Path("/proc"), Path("/dev")]
    made: set[Path] = {Path("/tmp")}  # the start's own tmpfs, made before
    rw = set(writable)
    for path in sorted({*readable, *rw}, key=lambda p: (len(p.parts), str(p))):
        if path == Path("/") or (_within(path, bound) and path not in rw):
            continue  # never the whole filesystem (a PYTHONPATH of "/")
        for parent in reversed(path.parents):
            if parent == Path("/") or parent in made or _within(parent, bound):
                continue
            args += ["--perms", "0755", "--dir", str(parent)]
            made.add(parent)
        args += ["--bind" if path in rw else "--ro-bind", str(path), str(path)]
        bound.append(path)
    return args


def confined_command(
    command: Sequence[str], env: Mapping[str, str], confinement: Confinement
) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that start ``command`` confined (run it with
    the environment given, and no file descriptor beyond 0 to 2; put it in
    its :class:`~.cgroups.Cgroup` before its exec). ``env`` is the
    starter's: only :data:`ENV_ALLOWED` pass, as the environment the argv
    runs with (bubblewrap hands its own on), never as arguments.
    SandboxError when the seccomp filter cannot be built."""
    c = confinement
    kept = {k: v for k, v in env.items() if k in ENV_ALLOWED}
    kept.update(HOME="/tmp", TMPDIR="/tmp")
    if c.gpus:
        kept["CUDA_VISIBLE_DEVICES"] = ",".join(c.gpus)
    root = os.geteuid() == 0
    bpf = filter_file()
    argv = [
        # /bin/sh opens the seccomp filter as descriptor 3 for bubblewrap
        "/bin/sh",
        "-c",
        'exec "$@" 3<"$0"',
        str(bpf),
        shutil.which("bwrap") or "bwrap",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "wizard-arena",
        "--die-with-parent",
        "--new-session",
        "--seccomp",
        "3",
    ]
    if not root:
        argv += ["--unshare-user", "--cap-drop", "ALL"]
    for p in system_paths():
        argv += ["--ro-bind", str(p), str(p)]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / name
        if p.is_symlink():
            argv += ["--symlink", os.readlink(p), str(p)]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += gpu_args(c.gpus, glob.glob("/dev/nvidia*"))  # after --dev: into its fresh /dev
    argv += ["--perms", "1777", "--size", str(c.limits.memory), "--tmpfs", "/tmp"]
    readable = list(python_paths() if c.readable is None else c.readable)
    if c.folder is not None:
        readable.append(Path(os.path.abspath(c.folder)))
    argv += _binds(_existing(readable), _existing(c.writable))
    if c.socket_dir is not None:
        argv += ["--perms", "0755", "--dir", str(Path(SOCKET_DIR).parent)]
        argv += ["--ro-bind", str(c.socket_dir), SOCKET_DIR]
    argv += ["--chdir", str(os.path.abspath(c.folder)) if c.folder is not None else "/tmp", "--"]
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    if root:
        ids = ["--reuid", str(c.uid), "--regid", str(c.uid)]
        argv += [setpriv, *ids, *SETPRIV_DROP, "--"]
    else:
        argv += [setpriv, "--no-new-privs", "--"]
    argv += list(command)
    return argv, kept
