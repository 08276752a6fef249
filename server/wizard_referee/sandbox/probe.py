"""Whether confinement works here, before anything depends on it: the tools
are installed, a cgroup can be made with the limits set, and a confined
start of a command succeeds. Every reason is one line a user can act on."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from wizard_referee.sandbox.bwrap import Confinement, confined_command, python_paths
from wizard_referee.sandbox.cgroups import Cgroup, Limits, SandboxError
from wizard_referee.sandbox.seccomp import seccomp_problem

__all__ = ["probe", "problems", "unreadable"]

WHAT = 'sandbox = "bwrap"'


def problems() -> list[str]:
    """Why confined starts cannot work on this machine (empty: they can)."""
    out = []
    if shutil.which("bwrap") is None:
        out.append(
            f"{WHAT} needs bubblewrap, which is not installed: install it (Debian and Ubuntu: "
            'apt-get install bubblewrap; Fedora: dnf install bubblewrap), or set sandbox = "none"'
        )
    if shutil.which("setpriv") is None:
        out.append(f"{WHAT} needs setpriv, which is not installed: install util-linux")
    seccomp = seccomp_problem()
    if seccomp is not None:
        out.append(f"{WHAT}: {seccomp}")
    try:
        group = Cgroup.create(f"wizard-arena-probe-{uuid.uuid4().hex[:8]}", Limits())
        group.remove()
    except SandboxError as e:
        out.append(f"{WHAT} cannot set the bots' limits: {e}")
    except OSError as e:
        out.append(f"{WHAT} cannot set the bots' limits: {e}")
    return out


def _others_can(mode: int) -> bool:
    if stat.S_ISDIR(mode):
        return mode & 0o005 == 0o005
    if stat.S_ISREG(mode):
        return bool(mode & 0o004)
    return True


def unreadable(paths: Iterable[Path], limit: int = 3, depth: int = 2) -> list[str]:
    """Up to ``limit`` files or folders under ``paths``, ``depth`` levels
    deep at most, that another uid cannot read (a confined start runs as one)."""
    out: list[str] = []
    for top in paths:
        for folder, dirs, files in os.walk(top):
            if len(Path(folder).relative_to(top).parts) >= depth:
                dirs[:] = []
            for name in [".", *dirs, *files]:
                path = os.path.join(folder, name) if name != "." else folder
                try:
                    mode = os.lstat(path).st_mode
                except OSError:
                    continue
                if not _others_can(mode):
                    out.append(path)
                    if len(out) >= limit:
                        return out
            dirs[:] = [d for d in dirs if _others_can(os.lstat(os.path.join(folder, d)).st_mode)]
    return out


def probe(
    confinement: Confinement,
    command: Sequence[str],
    env: Mapping[str, str],
    timeout: float = 30.0,
) -> str | None:
    """Start ``command`` confined (without its cgroup; :func:`problems`
    checks those) and wait for it: why it failed, or ``None``."""
    try:
        argv, clean = confined_command(command, env, confinement)
    except SandboxError as e:
        return str(e)
    try:
        proc = subprocess.run(
            argv, env=clean, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        return f"a confined test start ({' '.join(command)}) did not end within {timeout:g} s"
    except OSError as e:
        return f"a confined test start cannot run bwrap: {e.strerror or e}"
    if proc.returncode == 0:
        return None
    lines = [x for x in proc.stderr.decode(errors="replace").splitlines() if x.strip()]
    why = f"{lines[-1].strip()}" if lines else "no output"
    msg = f"a confined test start ({' '.join(command)}) failed with status {proc.returncode}: {why}"
    if os.geteuid() == 0:
        given = confinement.readable
        roots = list(python_paths() if given is None else given)
        bad = unreadable(roots, depth=1)
        if confinement.folder is not None:
            bad += unreadable([confinement.folder], depth=8)
        if bad:
            msg += (
                f"; uid {confinement.uid} cannot read {', '.join(bad)}: the files a bot "
                "needs must be world-readable (chmod -R o+rX)"
            )
    return msg
