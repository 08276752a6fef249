"""The sandbox room: running a command someone else wrote confined, with
bubblewrap (namespaces, a filesystem of read-only binds), setpriv (an
unprivileged uid of its own, no capabilities, ``no_new_privs``) and the
kernel's cgroups (memory, processes, CPU quota), never anything hand-rolled
that those tools already do.

The interface is small, so that every place that starts a bot can use it:

- :class:`Limits` and :class:`Confinement`: what one confined start may use
  and see;
- :func:`confined_command`: the argv and environment of a confined start
  (``bwrap ... -- setpriv ... -- COMMAND``), from :mod:`.bwrap`, under the
  seccomp filter of :mod:`.seccomp`;
- :class:`Cgroup` (:mod:`.cgroups`): a child group under the runner's own,
  cgroup v1 or v2 (whichever the host mounts), with the limits set; its
  ``procs_files`` are what a starter writes the child's pid to before its
  exec, :meth:`Cgroup.exceeded` says which limit was hit ("out of memory:
  limit 512 MiB"), :meth:`Cgroup.kill_all` and :meth:`Cgroup.remove` leave
  nothing behind, and :func:`sweep` removes the empty groups of a starter
  that was killed with SIGKILL;
- :func:`share_gpus`, :func:`visible_gpus` and :func:`gpu_args`: an
  instance's GPUs, and the device files of those alone in its sandbox;
- :func:`problems` and :func:`probe` (:mod:`.probe`): whether confinement
  works here, each reason one line a user can act on.

May import: the standard library and libseccomp's binding ``pyseccomp``
(:mod:`.seccomp`) only (no trio, grpc or anything of ours), so that the
tournament, compare and check rooms and their processes can all use it.
"""

from wizard_referee.sandbox.bwrap import (
    ENV_ALLOWED,
    SANDBOXES,
    SOCKET_DIR,
    UID_BASE,
    Confinement,
    confined_command,
    gpu_args,
    python_paths,
    share_gpus,
    visible_gpus,
)
from wizard_referee.sandbox.cgroups import (
    OUTPUT_LIMIT,
    Cgroup,
    Limits,
    SandboxError,
    size_text,
    sweep,
)
from wizard_referee.sandbox.probe import probe, problems

__all__ = [
    "ENV_ALLOWED",
    "OUTPUT_LIMIT",
    "SANDBOXES",
    "SOCKET_DIR",
    "UID_BASE",
    "Cgroup",
    "Confinement",
    "Limits",
    "SandboxError",
    "confined_command",
    "gpu_args",
    "probe",
    "problems",
    "python_paths",
    "share_gpus",
    "size_text",
    "sweep",
    "visible_gpus",
]
