"""What a host needs to play games: the rules, the referee's policy, the
entrants (a bot command to start, or an external bot's token) with their
confinement and limits, and how many instances of each to run.

A tournament's configuration makes one (``TournamentConfig.hosting()``); a
comparison, a ladder and a Ray worker make theirs the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from wizard_arena.rules import Rules
from wizard_referee.referee.policy import RefereePolicy
from wizard_referee.sandbox import OUTPUT_LIMIT, SANDBOXES, Limits

__all__ = ["EntrantConfig", "HostConfig", "HostError"]


class HostError(Exception):
    """The host cannot play: an entrant that cannot join, GPUs it cannot
    share out, a confinement this machine cannot give (one message a user
    reads)."""


@dataclass(frozen=True)
class EntrantConfig:
    """One entrant: a bot command the host starts, or an external bot that
    dials in with its token."""

    name: str
    command: tuple[str, ...] | None = None
    """Command line the host starts (``None`` for an external bot); ``{server}``,
    ``{token}`` and ``{name}`` in it are replaced."""
    token: str | None = None
    """An external bot's access token (command entrants get a fresh one)."""
    num_cpus: float = 0.0
    """CPUs one instance needs beyond its table's (a bot thinking on 4 threads: 3),
    asked of Ray by the worker that runs it (executor ``ray``)."""
    num_gpus: float = 0.0
    """GPUs one instance needs (executor ``ray``)."""
    memory: float = 0.0
    """Bytes of memory one instance needs (executor ``ray``)."""
    folder: str = ""
    """The entrant's own folder (from a file: relative to its folder), where its
    command runs; a confined entrant sees it read-only. Empty: ``workdir``
    (confined: none, it runs in its ``/tmp``)."""
    memory_limit: int = Limits.memory
    """Bytes of memory one confined instance may use (sandbox ``bwrap``)."""
    max_processes: int = Limits.processes
    """Processes and threads one confined instance may run at once."""
    cpu_limit: float = Limits.cpus
    """CPUs' worth of time one confined instance may use, as a quota."""

    @property
    def kind(self) -> str:
        return "command" if self.command is not None else "external"

    @property
    def limits(self) -> Limits:
        """What one confined instance may use."""
        return Limits(self.memory_limit, self.max_processes, float(self.cpu_limit))


@dataclass(frozen=True)
class HostConfig:
    """Everything :func:`~.host.open_host` needs: the games' rules and
    referee policy, the entrants and how they run."""

    entrants: tuple[EntrantConfig, ...]
    rules: Rules
    policy: RefereePolicy
    parallel: int = 1
    """Instances of each command entrant (tables played at once)."""
    sandbox: str = "none"
    """``none`` (command entrants run as this user) or ``bwrap`` (each confined:
    :mod:`wizard_referee.sandbox`)."""
    workdir: str = ""
    """Folder the command entrants run in, unless an entrant has its own."""
    output_limit: int = OUTPUT_LIMIT
    """Bytes of output each start of a command entrant may write to its log
    (0: no limit)."""
    connect_timeout: float = 60.0
    """Seconds an entrant has to connect; after that its seats are played
    by the referee's default action."""
    host: str = "127.0.0.1"
    port: int = 0
    """Where the referee listens (port 0: a free one)."""
    private: str = ""
    """The results store no confined entrant may see (a path, or a
    ``postgresql://`` URL), its logs beside it; empty: none."""

    def __post_init__(self) -> None:
        if self.sandbox not in SANDBOXES:
            raise ValueError(f"sandbox must be one of {', '.join(SANDBOXES)}, not {self.sandbox!r}")
        if self.parallel < 1:
            raise ValueError(f"parallel must be at least 1, not {self.parallel}")
