"""Joining a Ray cluster, or starting Ray on this machine.

Without an address a Ray instance is started here with every core, its
daemons told to use 127.0.0.1, and token authentication on with a token of
its own for this run, passed to its daemons in the environment and never
written to ``~/.ray/auth_token`` (a token file there turns authentication
on for every later ``ray start --head`` on the machine, which the nodes of
a cluster must then share; see docs/ray.md).
With one (``auto``: the cluster ``ray start`` made on this machine;
``ray://HOST:10001``: Ray Client; ``HOST:PORT``: the head's GCS) this
process joins it as the coordinator, after checking that the address
answers (:func:`address_problem`, at most :data:`CONNECT_TIMEOUT` seconds),
so a wrong address is one line, not a hang. ``working_dir`` is sent to every worker
through Ray's ``runtime_env`` (the entrants' commands run in it); the
virtual environment, the version control folder and result databases are
left out (:data:`EXCLUDES`): every node must have the package and its
dependencies installed itself.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import ray

__all__ = [
    "CONNECT_TIMEOUT",
    "EXCLUDES",
    "LOOPBACK",
    "START_ATTEMPTS",
    "RayConnectError",
    "address_problem",
    "first_line",
    "init_ray",
    "open_ray",
    "runtime_env",
]

LOOPBACK = "127.0.0.1"

#: Seconds a cluster's address has to accept a connection.
CONNECT_TIMEOUT = 5.0

#: What to do where a cluster uses token authentication.
TOKEN_HELP = (
    "set RAY_AUTH_MODE=token for this command and give it the cluster's token "
    "('ray get-auth-token' on the head prints it; put it in ~/.ray/auth_token or "
    "RAY_AUTH_TOKEN); see docs/ray.md"
)


class RayConnectError(Exception):
    """This process could not start or join Ray (one line: why, and what to do)."""


#: Never sent to the workers with the working directory.
EXCLUDES = [
    ".venv",
    "venv",
    ".git",
    "__pycache__",
    "*.pyc",
    "*.sqlite",
    "*.sqlite-wal",
    "*.sqlite-shm",
    "*.sqlite.logs",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
]


def runtime_env(working_dir: str) -> dict[str, Any] | None:
    """The job's ``runtime_env``: ``working_dir`` (if any) and its excludes."""
    if not working_dir:
        return None
    return {"working_dir": working_dir, "excludes": list(EXCLUDES)}


def _on_loopback(address: str) -> bool:
    host = address.removeprefix("ray://").rsplit(":", 1)[0]
    return host in (LOOPBACK, "localhost")


def address_problem(address: str) -> str | None:
    """Why this process cannot join the Ray cluster at ``address`` (None: it
    answers, or there is no address and Ray starts here): a TCP connection
    to the address, ``auto`` resolved as Ray resolves it, within
    :data:`CONNECT_TIMEOUT` seconds."""
    if not address:
        return None
    target = address
    if address == "auto":
        try:
            from ray._private.services import canonicalize_bootstrap_address_or_die

            target = canonicalize_bootstrap_address_or_die("auto")
        except Exception as e:  # Ray's own words: ConnectionError, usually
            return (
                f"--ray-address auto: no Ray cluster was started on this machine "
                f"({first_line(e)}); start one with 'ray start --head', or leave out "
                "--ray-address to start Ray for this run"
            )
    host, sep, port = target.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        return (
            f"--ray-address {address!r}: give HOST:PORT (the head's GCS port, 6379 by "
            "default), ray://HOST:PORT (Ray Client, 10001 by default) or auto"
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT):
            pass
    except OSError as e:
        why = e.strerror or type(e).__name__
        shown = address if target == address else f"{address} ({target})"
        return (
            f"no Ray cluster answers at {shown}: {why} (waited at most "
            f"{CONNECT_TIMEOUT:g} s); start it with 'ray start --head' on that machine, or "
            "check the address"
        )
    return None


def first_line(e: BaseException) -> str:
    """An exception's first non-empty line (its type's name if none)."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    return lines[0] if lines else type(e).__name__


def _init_problem(address: str, e: BaseException, said: str) -> str:
    """One line for an exception of ``ray.init``; ``said``: what Ray's own
    code wrote to standard error meanwhile (its C++ core logs there)."""
    text = f"{type(e).__name__}: {e}\n{said}".lower()
    where = f"the Ray cluster at {address}" if address else "Ray on this machine"
    if "invalidauthtoken" in text or "unauthenticated" in text or "authentication" in text:
        return f"{where} refused this process: it uses token authentication; {TOKEN_HELP}"
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    if any("Traceback" in line for line in lines):
        # a traceback from the other side (Ray Client's server): its head, and
        # its last line, which says what went wrong
        lines = [lines[0].partition("Traceback")[0].strip(" :"), lines[-1]]
    said_lines = [line.strip() for line in said.splitlines() if " E " in line or "Error" in line]
    why = " ".join([x for x in (lines or [type(e).__name__])[:3] if x] + said_lines[-1:])
    return f"could not join {where}: {why[:400]}"


@contextlib.contextmanager
def _stderr_kept(sink: list[str]) -> Iterator[None]:
    """Standard error (the file descriptor: Ray's C++ core writes there, a line
    a second while it retries) kept aside for the block, its text appended
    to ``sink``."""
    sys.stderr.flush()
    with tempfile.TemporaryFile(mode="w+b") as kept:
        saved = os.dup(2)
        os.dup2(kept.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            kept.seek(0)
            sink.append(kept.read().decode("utf-8", "replace"))


@contextlib.contextmanager
def _run_token() -> Iterator[None]:
    """Token authentication for a Ray started by this process, with a token of
    its own in the environment (inherited by Ray's daemons and workers), not
    in ``~/.ray/auth_token``; the environment is restored afterwards. A
    setting of the user's (``RAY_AUTH_MODE``, ``RAY_AUTH_TOKEN``) is kept."""
    if any(os.environ.get(k) for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")):
        yield
        return
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    _reload_ray_config()
    try:
        yield
    finally:
        os.environ.pop("RAY_AUTH_MODE", None)
        os.environ.pop("RAY_AUTH_TOKEN", None)
        _reload_ray_config()


def _reload_ray_config() -> None:
    """Ray reads its authentication mode and token from the environment once,
    into a cached configuration and a cached token: read both again (as Ray
    does when it turns token authentication on itself), so that a second
    Ray started by this process uses its own token, not the first one's."""
    from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


#: Tries of starting Ray on this machine: its node has a fixed 30 s to
#: register with its GCS, which a busy machine can miss ("timed out during
#: startup"); nothing of a failed start is kept.
START_ATTEMPTS = 3


def init_ray(settings: dict[str, Any], address: str, attempts: int = START_ATTEMPTS) -> list[str]:
    """``ray.init(**settings)``, again after a start on this machine that
    timed out (``attempts`` in all); what Ray wrote to standard error."""
    for attempt in range(1, attempts + 1):
        said: list[str] = []
        try:
            with _stderr_kept(said):
                ray.init(**settings)
            return said
        except Exception as e:
            if address or attempt == attempts or "timed out during startup" not in str(e):
                raise RayConnectError(_init_problem(address, e, "".join(said))) from None
            with contextlib.suppress(Exception):
                ray.shutdown()
            sys.stderr.write(
                f"Ray did not start here in time (try {attempt} of {attempts}): starting it again\n"
            )
    raise AssertionError("unreachable")


@contextlib.contextmanager
def open_ray(address: str, working_dir: str = "") -> Iterator[None]:
    """Ray, joined or started, for the duration of the block (a Ray already
    initialised in this process, as in tests, is used as it is);
    :class:`RayConnectError` where it cannot be."""
    if ray.is_initialized():
        yield
        return
    settings: dict[str, Any] = {
        "log_to_driver": False,
        "runtime_env": runtime_env(working_dir),
        "configure_logging": False,
    }
    problem = address_problem(address)
    if problem:
        raise RayConnectError(problem)
    if not address:
        # "local": a new instance, even where 'ray start' left a cluster's address
        # in Ray's temporary folder (which a bare ray.init() would join)
        settings.update(
            address="local",
            num_cpus=os.cpu_count() or 1,
            include_dashboard=False,
            _node_ip_address=LOOPBACK,
        )
    else:
        settings["address"] = address
        if _on_loopback(address):
            settings["_node_ip_address"] = LOOPBACK
    with _run_token() if not address else contextlib.nullcontext():
        said = init_ray(settings, address)
        sys.stderr.write("".join(said))  # joined: Ray's words as they would have been
        try:
            yield
        finally:
            ray.shutdown()
