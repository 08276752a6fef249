"""Turning the errors a user can fix into one line each: the exceptions
inside trio's exception groups, and why a server cannot listen on its
address (a port in use, most often)."""

from __future__ import annotations

import errno
import socket
from typing import Any

import trio

from wizard_referee.tournament.config_keys import TournamentError
from wizard_referee.tournament.entrants import EntrantStartError

__all__ = [
    "SERVE_FIXES",
    "TOURNAMENT_FIXES",
    "bind_problem",
    "leaves",
    "listen_problem",
    "runner_error",
    "serve_failure",
]

#: How to choose another port, and another address, for each command.
SERVE_FIXES = ("choose another port with --port N", "check --host (default 127.0.0.1)")
TOURNAMENT_FIXES = (
    "set another port (port = N in [tournament], or --port N)",
    "check host in [tournament] (default 127.0.0.1)",
)


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, without trio's
    Cancelled (the consequence of another error, never its cause)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in leaves(e)]
    return [] if isinstance(exc, trio.Cancelled) else [exc]


def bind_problem(host: str, port: int) -> tuple[str, bool] | None:
    """Why a server cannot listen on ``host:port``, and whether it is because
    the port is in use (``None``: it could listen now)."""
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as e:
        return f"the host {host!r} is not known ({e.strerror})", False
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(address)
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    return "the port is in use (another wizard-arena serve or tournament?)", True
                return (e.strerror or str(e)).lower(), False
    return None


def listen_problem(host: str, port: int, port_fix: str, host_fix: str) -> str | None:
    """The one-line message for an address a server cannot listen on (checked
    before starting it, so that gRPC does not log its own lines), or None."""
    found = bind_problem(host, port)
    if found is None:
        return None
    why, in_use = found
    fix = f"{port_fix} (port 0 takes any free port)" if in_use else host_fix
    return f"cannot serve on {host}:{port}: {why}: {fix}"


def serve_failure(
    exc: BaseException, host: str, port: int, port_fix: str, host_fix: str
) -> str | None:
    """The one-line message for a server that could not start listening (an
    OSError anywhere in ``exc``), or ``None``. ``port_fix`` says how to choose
    another port (e.g. ``choose another port with --port N``), ``host_fix``
    another address."""
    failed = [e for e in leaves(exc) if isinstance(e, OSError)]
    if not failed:
        return None
    message = listen_problem(host, port, port_fix, host_fix)
    if message is None and "serve on" in str(failed[0]):
        message = f"{failed[0]}: {host_fix}"
    return message


def runner_error(group: BaseExceptionGroup[Any], host: str, port: int) -> BaseException:
    """trio's nurseries wrap errors in groups: surface a tournament runner's
    own errors (entrants that cannot start or connect, a port in use) as one
    TournamentError, and Ctrl-C as KeyboardInterrupt; anything else stays as
    it is."""
    errors = leaves(group)
    if any(isinstance(e, KeyboardInterrupt) for e in errors):
        return KeyboardInterrupt()  # Ctrl-C: the command says how to resume
    starts: dict[str, str] = {}
    for e in errors:
        if isinstance(e, EntrantStartError):
            starts.setdefault(e.entrant, str(e))  # one report per entrant
    if starts:
        return TournamentError("\n".join(starts.values()))
    if errors and all(isinstance(e, TournamentError) for e in errors):
        return errors[0]
    message = serve_failure(group, host, port, *TOURNAMENT_FIXES)
    return group if message is None else TournamentError(message)
