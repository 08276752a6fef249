"""A throwaway PostgreSQL cluster for the tests (and the store's bench).

Never Debian's default cluster: each pytest worker starts its own
(:class:`Cluster`; conftest.py's ``postgres_cluster`` fixture, started at
the first test that asks) with the server binaries of the newest PostgreSQL under
``/usr/lib/postgresql/*/bin`` (not on PATH; no version is assumed), in a
folder of its own under ``/tmp`` (pytest's base temp is 0700, closed to
another user), listening on a Unix socket in that folder alone
(``listen_addresses = ''``: no TCP port), with trust authentication for
the ``postgres`` role. As root, ``initdb`` refuses to run: the cluster is
made and run as the ``postgres`` user (``runuser``), which owns the
folder. Each test gets a database of its own (``postgres_url``), dropped
afterwards; ``database`` gives a test a new store on each backend. The
tests' clusters do not sync to disk (``fsync = off``): a test kills our
processes, never the server; the bench asks for a durable one.

Where PostgreSQL (or psycopg) is missing, :func:`problem` says so and the
tests marked ``NEEDS_POSTGRES`` (conftest.py) skip with it (fail where
``WIZARD_ARENA_REQUIRE`` names ``postgresql``: .ci/run installs Debian's
``postgresql`` package).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

__all__ = ["Cluster", "binaries", "problem"]

SEARCH = "/usr/lib/postgresql/*/bin"
USER = "postgres"


def _version(folder: Path) -> tuple[int, ...]:
    name = folder.parent.name
    return tuple(int(p) for p in name.split(".") if p.isdigit()) or (0,)


def binaries() -> Path | None:
    """The newest installed server's ``bin`` folder (initdb, pg_ctl, postgres)."""
    found = [
        p
        for p in Path("/").glob(SEARCH.lstrip("/"))
        if all((p / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres"))
    ]
    return max(found, key=_version) if found else None


def _as_root() -> bool:
    return os.geteuid() == 0


def problem() -> str | None:
    """Why no throwaway cluster can start here (None: one can)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'wizard-arena[postgres]')"
    if binaries() is None:
        return f"no PostgreSQL server binaries ({SEARCH}/initdb; Debian's postgresql package)"
    if _as_root():
        try:
            pwd.getpwnam(USER)
        except KeyError:
            return f"running as root, and there is no {USER} user to run initdb as"
        if shutil.which("runuser") is None:
            return f"running as root, and no runuser to run initdb as {USER}"
    return None


class Cluster:
    """A PostgreSQL cluster of our own in ``folder`` (a new one under /tmp by
    default), on a Unix socket there. ``durable``: the server's defaults
    (fsync, full page writes, synchronous commit), as a real store runs."""

    def __init__(self, *, durable: bool = False) -> None:
        bin_folder = binaries()
        assert bin_folder is not None, problem()
        self.bin = bin_folder
        self.folder = Path(tempfile.mkdtemp(prefix="wizard-arena-pg-", dir="/tmp"))
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self.durable = durable
        self._names = itertools.count()
        self.running = False

    def _as_owner(self, *argv: str) -> list[str]:
        return ["runuser", "-u", USER, "--", *argv] if _as_root() else list(argv)

    def _run(self, *argv: str) -> None:
        from .support import scaled  # (after conftest has set grpc up: support loads it)

        done = subprocess.run(
            self._as_owner(*argv), capture_output=True, text=True, timeout=scaled(120), check=False
        )
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}{log}")

    def start(self) -> Cluster:
        if _as_root():
            entry = pwd.getpwnam(USER)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
        self._run(
            str(self.bin / "initdb"),
            *("-D", str(self.data), "-U", USER, "-A", "trust", "-E", "UTF8"),
            *("--locale=C", "--no-sync"),
        )
        settings = {
            "listen_addresses": "''",
            "unix_socket_directories": f"'{self.folder}'",
            "shared_buffers": "'32MB'",
            "max_connections": "60",
        }
        if not self.durable:
            settings.update(fsync="off", full_page_writes="off", synchronous_commit="off")
        with (self.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.writelines(f"{k} = {v}\n" for k, v in settings.items())
        self._run(
            str(self.bin / "pg_ctl"), *("-D", str(self.data), "-l", str(self.log), "-w", "start")
        )
        self.running = True
        return self

    def pause(self) -> None:
        """Stop the server as a maintenance does (``-m fast``: every
        connection is closed), keeping its data, until :meth:`resume`."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start the server :meth:`pause` stopped."""
        self._run(
            str(self.bin / "pg_ctl"), *("-D", str(self.data), "-l", str(self.log), "-w", "start")
        )

    def url(self, database: str = "postgres") -> str:
        """A URL of ``database`` on this cluster (its socket, role postgres)."""
        return f"postgresql://{USER}@/{database}?host={quote(str(self.folder), safe='/')}"

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(sql)  # (our own names: no parameters)

    def create_database(self) -> tuple[str, str]:
        """A new, empty database: its name and URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        self._admin(f"CREATE DATABASE {name}")
        return name, self.url(name)

    def drop_database(self, name: str) -> None:
        self._admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        if self.running:
            with contextlib.suppress(RuntimeError):
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
            self.running = False
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
