"""The seccomp filter of every confined start: the system calls a bot never
needs and that would reach past its sandbox, refused with ``EPERM``.

bubblewrap loads it (``--seccomp FD``) last, after it has made the
sandbox's namespaces and just before it runs the command, so the command
and all it starts run under it. The program is built with libseccomp,
through its Python binding ``pyseccomp`` (the ``server`` extra), for this
machine's architecture.

Refused:

- the kernel's keyrings (``keyctl``, ``add_key``, ``request_key``): a user
  keyring outlives a run and is shared by every process of a uid, so two
  bots of the same uid, in two events, could talk through it;
- another process's memory and registers (``ptrace``,
  ``process_vm_readv``, ``process_vm_writev``), eBPF (``bpf``), the
  performance counters (``perf_event_open``), ``userfaultfd``, and
  ``io_uring`` (``io_uring_setup``, ``io_uring_enter``,
  ``io_uring_register``: a large kernel surface no bot needs, which other
  sandboxes turn off too);
- filesystems (``mount``, ``umount2``, ``pivot_root``, ``fsopen``,
  ``fsmount``, ``fsconfig``, ``fspick``, ``move_mount``, ``open_tree``,
  ``mount_setattr``) and ``chroot``;
- new namespaces: ``unshare``, ``setns``, ``clone`` with any ``CLONE_NEW*``
  flag (a plain ``clone``, a thread or a ``fork``, is allowed), and
  ``clone3``, whose flags a filter cannot read: it fails with ``ENOSYS``,
  and the C library falls back to ``clone``, which the filter checks;
- kernel modules, ``kexec``, ``reboot``, ``swapon``/``swapoff``, ``acct``,
  ``iopl``/``ioperm``, ``open_by_handle_at``, ``name_to_handle_at``.
"""

from __future__ import annotations

import atexit
import errno
import functools
import os
import shutil
import tempfile
from pathlib import Path

from wizard_referee.sandbox.cgroups import SandboxError

__all__ = ["DENIED", "NAMESPACE_FLAGS", "filter_file", "filter_program", "seccomp_problem"]

#: The system calls refused with EPERM whatever their arguments.
DENIED = (
    "keyctl",
    "add_key",
    "request_key",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "unshare",
    "setns",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "iopl",
    "ioperm",
    "open_by_handle_at",
    "name_to_handle_at",
)

#: ``clone``'s flags that make a namespace (CLONE_NEWNS ... CLONE_NEWTIME).
NAMESPACE_FLAGS = {
    "CLONE_NEWTIME": 0x00000080,
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}


@functools.cache
def filter_program() -> bytes:
    """The BPF program (what ``bwrap --seccomp`` reads). SandboxError (one
    line) when libseccomp or its binding is missing."""
    try:
        import pyseccomp as sc  # type: ignore[import-untyped]
    except ImportError:
        raise SandboxError(
            "the seccomp filter needs libseccomp's Python binding: "
            "pip install 'wizard-arena[server]' (pyseccomp)"
        ) from None
    try:
        f = sc.SyscallFilter(sc.ALLOW)
        for name in DENIED:
            with _unknown_skipped(name):
                f.add_rule(sc.ERRNO(errno.EPERM), name)
        for flag in NAMESPACE_FLAGS.values():
            f.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        with _unknown_skipped("clone3"):
            f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        with tempfile.TemporaryFile() as out:
            f.export_bpf(out)
            out.seek(0)
            return out.read()
    except (OSError, RuntimeError, AttributeError) as e:
        raise SandboxError(
            f"the seccomp filter cannot be built (libseccomp2 installed?): {e}"
        ) from None


class _unknown_skipped:
    """A system call this libseccomp does not know (an older one): skipped."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, value: object, tb: object) -> bool:
        return isinstance(value, OSError) and value.errno == errno.EINVAL


_folder: list[Path] = []


def filter_file() -> Path:
    """A file holding :func:`filter_program`, in a folder of this process's
    own (mode 0700, removed at exit; made again if it is gone, as a /tmp
    cleaner may do to a runner that lives for days): what a confined start
    opens as its ``--seccomp`` descriptor. SandboxError (one line) when it
    cannot be written."""
    program = filter_program()
    try:
        if not _folder or not _folder[-1].is_dir():
            folder = Path(tempfile.mkdtemp(prefix="wizard-arena-seccomp-"))
            atexit.register(shutil.rmtree, folder, True)
            _folder.append(folder)
        path = _folder[-1] / "filter.bpf"
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            with os.fdopen(fd, "wb") as out:
                out.write(program)
            os.replace(tmp, path)
    except OSError as e:
        raise SandboxError(f"the seccomp filter cannot be written: {e}") from None
    return path


def seccomp_problem() -> str | None:
    """Why the filter cannot be built here (one line), or None."""
    try:
        filter_program()
    except SandboxError as e:
        return str(e)
    return None
