"""Why a server cannot listen on its address (a port in use, most often),
as one line a user can act on, found before gRPC starts (so that it logs
nothing of its own) or in the exception groups trio wraps errors in."""

from __future__ import annotations

import errno
import socket

import trio

from wizard_arena.cli.web_options import WebOptions

__all__ = [
    "SERVE_FIXES",
    "bind_problem",
    "leaves",
    "listen_problem",
    "serve_failure",
    "web_line",
    "web_problem",
]

#: How to choose another port, and another address, for ``wizard-arena serve``.
SERVE_FIXES = ("choose another port with --port N", "check --host (default 127.0.0.1)")


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, without trio's
    Cancelled (the consequence of another error, never its cause)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in leaves(e)]
    return [] if isinstance(exc, trio.Cancelled) else [exc]


def bind_problem(host: str, port: int) -> tuple[str, bool] | None:
    """Why a server cannot listen on ``host:port``, and whether it is because
    the port is in use (``None``: it could listen now)."""
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host  # [::]
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


def web_line(url: str) -> str:
    """The line naming a web server's address: the pages, or ``/metrics``
    alone (``--metrics-port``; its URL was printed as ``.../metrics/``, a
    redirect, under "web pages and metrics")."""
    if url.endswith("/metrics"):
        return f"metrics: {url}"
    return f"web pages and metrics: {url}/"


def web_problem(web: WebOptions, referee_port: int = 0) -> str | None:
    """Why the web pages cannot be served (the extra missing, a port in use,
    or the referee's ``referee_port`` given to them too), or None."""
    try:
        import wizard_referee.web  # noqa: F401
    except ImportError as e:
        return str(e)
    taken = {referee_port: "the referee's --port"} if referee_port else {}
    for port, flag in ((web.port, "--web"), (web.metrics_port, "--metrics-port")):
        if port:
            if port in taken:
                return f"{flag} {port}: {taken[port]} already takes that port: choose another"
            taken[port] = flag
            problem = listen_problem(
                web.host, port, f"choose another port with {flag} N", "check --web-host"
            )
            if problem is not None:
                return problem
    return None
