"""Untrusted entrants (docs/untrusted-bots.md): under ``sandbox = "bwrap"`` a
hostile entrant's every escape fails while the tournament finishes; under
``sandbox = "none"`` the same attempts succeed (so this test can fail)."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import trio

from wizard_referee import sandbox
from wizard_referee.hosting.host import bot_game_id
from wizard_referee.sandbox.cgroups import hierarchy
from wizard_referee.sandbox.seccomp import filter_program as seccomp_program
from wizard_referee.tournament.config import TournamentConfig
from wizard_referee.tournament.runner import plan_games, run_tournament

from .conftest import NEEDS_SANDBOX
from .support import scaled
from .tournaments import SYSCALLS, TOURNEY, det_entrants, env_with_tests, seat_results, write_toml

BOT = [sys.executable, "-m", "wizard_arena.cli", "bot", "wizard_bots.random_bot:RandomBot"]
ARGS = ["--server", "{server}", "--token", "{token}", "--name", "{name}"]
HOSTILE = [sys.executable, "-m", "wizard_bots.misbehaving.hostile", *ARGS]
#: An organiser's variable that must not reach a confined bot.
PLANTED = ("WIZARD_ARENA_LADDER_STORE", "postgresql://org:SECRET@db.example/ladder")
MEMORY = 128 * 2**20
PROCESSES = 32


needs_sandbox = NEEDS_SANDBOX


def _marked(mark: str) -> list[int]:
    """Processes whose command line holds ``mark``."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if mark.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    out.append(int(pid))
            except OSError:
                pass
    return out


def _left_cgroups() -> list[Path]:
    _, parents = hierarchy()
    prefix = f"wizard-arena-{os.getpid()}-"
    return [p for folder in set(parents.values()) for p in folder.glob(prefix + "*")]


@needs_sandbox
@pytest.mark.e2e
@pytest.mark.slow(seconds=4)
@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_a_hostile_entrant_is_confined_and_the_tournament_finishes(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    season = tmp_path / "season"
    for name in ("hostile", "a", "b"):
        (season / "entries" / name).mkdir(parents=True)
    secret = season / "entries" / "a" / "secret.txt"
    secret.write_text("a's code\n")
    outside = tmp_path / "outside.txt"
    own = season / "entries" / "hostile" / "written.txt"
    signalled = tmp_path / "signalled"
    monkeypatch.setenv("WIZARD_ORGANISER_SECRET", "s3cret")
    monkeypatch.setenv(*PLANTED)
    victim = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, sys, time\n"
            "signal.signal(signal.SIGUSR1, lambda *a: open(sys.argv[1], 'w').write('hit'))\n"
            "time.sleep(120)\n",
            str(signalled),
        ],
        env={**os.environ, "VICTIM_SECRET": "v"},
    )
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    mark = f"wizard-arena-detached-{uuid.uuid4().hex}"
    tournament = {
        "name": "hostile",
        "players": 3,
        "round_sizes": [1, 2, 3],
        "move_time": scaled(2.0),  # a margin on a busy machine: no bot here should time out
        "reconnect_window": 0,
        "connect_timeout": 30,
        "database": "results.sqlite",
        "bot_seed_secret": "hostile",  # known: the bot is told its game by its opaque id
        "sandbox": mode,
    }
    config_path = season / "season.toml"
    hostile_args = [
        *("--read", str(season / "results.sqlite")),
        *("--read", str(config_path)),
        *("--read", str(secret)),
        *("--read", "/etc/shadow"),  # root's alone: readable only as uid 0
        *("--write", str(outside)),
        *("--write", str(own)),
        *("--connect", f"127.0.0.1:{listener.getsockname()[1]}"),
        *("--signal", str(victim.pid)),
        *("--environ", str(victim.pid)),
        *("--env", "WIZARD_ORGANISER_SECRET"),
        *("--processes", str(PROCESSES + 8)),
        *("--detach", mark),
        *("--allocate", str(2 * MEMORY)),
    ]
    if mode == "bwrap":  # what a seccomp filter refuses, and its token in no command line
        hostile_args += [a for name in SYSCALLS for a in ("--syscall", name)]
        hostile_args += ["--key-write", "channel", "--env", PLANTED[0]]
        hostile_args += ["--cmdline", "WIZARD_ARENA_TOKEN"]
    # (its token from its environment: none in its command line)
    hostile_cmd = [a for a in HOSTILE if a not in ("--token", "{token}")]
    entrants: list[dict[str, Any]] = [
        {"name": n, "command": [*BOT, *ARGS, "--quiet"], "folder": f"entries/{n}"}
        for n in ("a", "b")
    ]
    entrants.insert(
        0,
        {
            "name": "hostile",
            "command": hostile_cmd + hostile_args,
            "folder": "entries/hostile",
            "memory_limit": MEMORY,
            "max_processes": PROCESSES,
        },
    )
    write_toml(config_path, tournament, entrants)
    config = TournamentConfig.from_toml(config_path)
    specs = plan_games(config)
    target = bot_game_id("hostile", specs[1].id)  # the id the bots are told
    entrants[0]["command"] = [*hostile_cmd, *hostile_args, "--in-game", target]
    config = TournamentConfig.from_toml(write_toml(config_path, tournament, entrants))
    stream = io.StringIO()
    started = time.monotonic()
    try:
        store = trio.run(functools.partial(run_tournament, config, progress_stream=stream))
        took = time.monotonic() - started
        accepted = []
        with contextlib.suppress(BlockingIOError):
            accepted.append(listener.accept()[0])
        left_behind = _marked(mark)
    finally:
        victim.kill()
        victim.wait()
        listener.close()
        for pid in _marked(mark):
            os.kill(pid, signal.SIGKILL)
    log = (season / "results.sqlite.logs" / "hostile-0.log").read_text()
    attempts = [line for line in log.splitlines() if line.startswith("HOSTILE ")]
    assert len([a for a in attempts if "trying" not in a]) >= 12, log
    # a detached process starts in the sandbox too: what counts is whether it is left behind
    attempts = [a for a in attempts if not a.startswith("HOSTILE detach ")]
    try:
        assert store.counts() == {"finished": len(specs)}
        faults = {
            name: [rec.fault_details[rec.names.index(name)] for rec in store.records_of(name)]
            for name in ("hostile", "a", "b")
        }
    finally:
        store.close()
    assert not any(faults["a"]) and not any(faults["b"]), faults  # the others do not notice
    note = "command entrants run unconfined"
    if mode == "none":
        assert all(a.endswith(": ok") or "trying" in a for a in attempts), attempts
        assert signalled.exists() and outside.exists() and own.exists()
        assert accepted and left_behind
        assert note in stream.getvalue()
        return
    denied = [a for a in attempts if "trying" not in a and ": denied (" in a]
    assert denied == [a for a in attempts if "trying" not in a], attempts
    for name in SYSCALLS:  # refused by the filter, whatever else would have stopped it
        assert f"HOSTILE syscall {name}: denied (PermissionError: [Errno 1] " in log, name
    assert "HOSTILE key-write channel: denied (PermissionError: [Errno 1] " in log
    assert f"HOSTILE env {PLANTED[0]}: denied (LookupError" in log
    assert "HOSTILE cmdline WIZARD_ARENA_TOKEN: denied (LookupError" in log
    assert f"HOSTILE allocate {2 * MEMORY}: trying" in attempts  # and never "ok": killed
    assert not signalled.exists() and not outside.exists() and not own.exists()
    assert not accepted and not left_behind
    assert note not in stream.getvalue()
    crashes = [f["crash"] for f in faults["hostile"] if "crash" in f]
    assert crashes == ["the bot's process was killed: out of memory: limit 128 MiB"], faults
    # and the runner's notice says it: "... exited with status 137, out of memory: ..."
    assert ", out of memory: limit 128 MiB (restart 1 of 5;" in stream.getvalue()
    assert not _left_cgroups()
    print(f"sandbox={mode}: {len(specs)} games in {took:.1f} s")


@needs_sandbox
def test_bad_sandbox_settings_stop_before_any_game_with_one_line(tmp_path: Path) -> None:
    entrants = [{"name": n, "command": [*BOT, *ARGS], "folder": f"bots/{n}"} for n in "abc"]
    config = TournamentConfig.from_toml(
        write_toml(tmp_path / "t.toml", {"players": 3, "sandbox": "bwrap"}, entrants)
    )
    from wizard_referee.tournament.runner import TournamentError

    with pytest.raises(TournamentError) as err:
        trio.run(run_tournament, config)
    assert "entrant 'a': folder" in str(err.value) and "does not exist" in str(err.value)
    assert not (tmp_path / "tournament.sqlite").exists()


def test_a_missing_bubblewrap_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    real = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda name, *a, **k: None if name == "bwrap" else real(name, *a, **k)
    )
    problems = sandbox.problems()
    assert problems and "apt-get install bubblewrap" in problems[0]


@needs_sandbox
def test_a_file_of_its_folder_the_entrants_uid_cannot_read_is_named(tmp_path: Path) -> None:
    entrants = [{"name": n, "command": [*BOT, *ARGS], "folder": f"bots/{n}"} for n in "abc"]
    for n in "abc":
        (tmp_path / "bots" / n).mkdir(parents=True)
    private = tmp_path / "bots" / "b" / "weights.bin"
    private.write_bytes(b"\0")
    private.chmod(0o600)
    config = TournamentConfig.from_toml(
        write_toml(tmp_path / "t.toml", {"players": 3, "sandbox": "bwrap"}, entrants)
    )
    from wizard_referee.tournament.runner import TournamentError

    with pytest.raises(TournamentError) as err:
        trio.run(run_tournament, config)
    assert str(err.value) == (
        f"entrant 'b': its uid {sandbox.UID_BASE + 1} cannot read {private}: make its "
        "folder world-readable (chmod -R o+rX)"
    )


@needs_sandbox
def test_a_launched_process_is_held_to_its_cgroup_and_the_limit_named(tmp_path: Path) -> None:
    """The launcher puts the process in its group before its exec: a shell
    that starts 12 sleeping children under a limit of 8 is refused some."""
    from wizard_referee.hosting.launcher import open_launcher

    async def main() -> str | None:
        group = sandbox.Cgroup.create(f"wizard-arena-{os.getpid()}-t", sandbox.Limits(processes=8))
        try:
            async with open_launcher() as launcher:
                script = "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1 & done; wait"
                proc = await launcher.spawn(
                    ["sh", "-c", script],
                    {"PATH": os.environ["PATH"]},
                    tmp_path / "sh.log",
                    cgroup=group.procs_files,
                )
                await proc.wait()
            return group.exceeded()
        finally:
            while not group.remove():
                group.kill_all()
                await trio.sleep(0.01)

    assert trio.run(main) == "process limit 8"
    assert not _left_cgroups()


@needs_sandbox
def test_the_empty_groups_of_a_runner_killed_with_sigkill_are_swept() -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = sandbox.Cgroup.create(f"wizard-arena-{gone.pid}-0-1", sandbox.Limits())
    live = sandbox.Cgroup.create(f"wizard-arena-{os.getpid()}-sweep", sandbox.Limits())
    try:
        assert sandbox.sweep() >= len(set(dead.folders.values()))
        assert not any(f.exists() for f in dead.folders.values())
        assert all(f.exists() for f in live.folders.values())  # its starter runs
    finally:
        live.remove()
        dead.remove()


def test_the_sandbox_keys_are_checked_with_the_others() -> None:
    from wizard_referee.tournament.runner import TournamentError

    entrants = [{"name": n, "command": "x"} for n in "abc"]
    entrants[0].update(memory_limit="lots", max_processes=2, cpu_limit=0, folder=3)
    with pytest.raises(TournamentError) as err:
        TournamentConfig.from_dict(
            {"tournament": {"players": 3, "sandbox": "docker"}, "entrant": entrants}
        )
    assert str(err.value).splitlines()[1:] == [
        '  sandbox must be one of "none", "bwrap" (e.g. sandbox = "none"), not "docker"',
        "  entrant 'a': folder must be a folder, a string (e.g. folder = \"bots/a\")",
        "  entrant 'a': memory_limit must be a whole number, 16777216 or more "
        '(e.g. memory_limit = 536_870_912), not "lots"',
        "  entrant 'a': max_processes must be a whole number, 8 or more "
        "(e.g. max_processes = 64), not 2",
        "  entrant 'a': cpu_limit must be a number of CPUs, 0.01 or more "
        "(e.g. cpu_limit = 1.5), not 0",
    ]


@pytest.mark.parametrize(
    ("shared", "reached"),
    [
        (".", "the results store results.sqlite"),  # PYTHONPATH=. in the season's folder
        ("entries", "entrant 'a''s folder"),
        ("entries/b/lib", "entrant 'b''s folder"),  # within another entrant's folder
        ("results.sqlite.logs/extra", "the logs results.sqlite.logs/"),
    ],
)
def test_a_shared_path_that_reaches_what_no_entrant_may_read_is_refused(
    shared: str, reached: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder every confined entrant sees (PYTHONPATH, the Python
    environment) that holds the results store, the configuration, the logs
    or an entrant's folder, or is within one, is refused before any game in
    one line, as an entrant's folder holding the store is; a library
    folder of its own passes."""
    from wizard_referee.hosting.confine import sandbox_problems

    monkeypatch.chdir(tmp_path)
    for path in ("entries/a", "entries/b/lib", "results.sqlite.logs/extra", "lib"):
        (tmp_path / path).mkdir(parents=True)
    entrants = [{"name": n, "command": "x", "folder": f"entries/{n}"} for n in "ab"]
    tournament = {"players": 3, "sandbox": "bwrap", "executor": "ray"}
    tournament["database"] = "results.sqlite"
    config = TournamentConfig.from_toml(
        write_toml(tmp_path / "t.toml", tournament, [*entrants, {"name": "c", "token": "t"}])
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "lib"))
    assert sandbox_problems(config.hosting(), here=False) == []
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / shared))
    (line,) = sandbox_problems(config.hosting(), here=False)
    assert line == (
        f"{shared} (from PYTHONPATH, or the Python environment) is seen by every confined "
        f"entrant, and through it {reached}: take it out of PYTHONPATH, or keep the "
        "tournament's files and the entrants' folders apart from it"
    )


def test_a_folder_is_relative_to_the_file_and_ray_leaves_the_node_checks_to_its_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With executor ray the coordinator checks the folders alone: bubblewrap,
    cgroups and GPUs are each node's (its workers run node_problems)."""
    from wizard_referee.hosting.confine import sandbox_problems

    real = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda name, *a, **k: None if name == "bwrap" else real(name, *a, **k)
    )
    entrants = [{"name": n, "command": "x", "folder": f"bots/{n}"} for n in "abc"]
    for n in "abc":
        (tmp_path / "bots" / n).mkdir(parents=True)
    tournament = {"players": 3, "sandbox": "bwrap", "executor": "ray"}
    config = TournamentConfig.from_toml(write_toml(tmp_path / "t.toml", tournament, entrants))
    assert config.entrants[0].folder == str(tmp_path / "bots" / "a")
    assert config.entrants[0].limits == sandbox.Limits()  # the documented defaults
    # no bubblewrap on the coordinator: its nodes'
    assert sandbox_problems(config.hosting(), here=False) == []
    assert "needs bubblewrap" in sandbox_problems(config.hosting())[0]


def test_a_folder_that_holds_the_results_store_is_refused(tmp_path: Path) -> None:
    from wizard_referee.hosting.confine import sandbox_problems

    entrants = [{"name": n, "command": "x", "folder": "."} for n in "abc"]
    config = TournamentConfig.from_toml(
        write_toml(tmp_path / "t.toml", {"players": 3, "sandbox": "bwrap"}, entrants)
    )
    assert sandbox_problems(config.hosting())[0] == (
        f"entrant 'a': its folder {tmp_path} holds the results store "
        f"{tmp_path / 'tournament.sqlite'}: give each entrant a folder of its own"
    )


@needs_sandbox
def test_a_cpu_quota_holds_a_busy_process_to_its_share(tmp_path: Path) -> None:
    """cpu_limit = 0.05: a process spinning for 1 s of wall time gets about
    0.05 s of CPU (the kernel's CFS quota), far less than what even a busy
    machine gives it (measured here at load 11 on 2 cores: 0.06 s confined,
    0.72 s unconfined)."""
    from wizard_referee.hosting.launcher import open_launcher

    spin = (
        "import time\n"
        "end = time.monotonic() + 1.0\n"
        "while time.monotonic() < end: pass\n"
        "print(time.process_time())\n"
    )

    async def main() -> float:
        group = sandbox.Cgroup.create(f"wizard-arena-{os.getpid()}-cpu", sandbox.Limits(cpus=0.05))
        try:
            async with open_launcher() as launcher:
                proc = await launcher.spawn(
                    [sys.executable, "-S", "-c", spin], {}, tmp_path / "spin.log",
                    cgroup=group.procs_files,
                )  # fmt: skip
                assert await proc.wait() == 0
        finally:
            while not group.remove():
                group.kill_all()
                await trio.sleep(0.01)
        return float((tmp_path / "spin.log").read_text().split()[-1])

    used = trio.run(main)
    assert used < 0.15, f"{used:.2f} s of CPU in 1 s under a quota of 0.05 CPU"


def test_a_probe_start_that_fails_says_why_in_one_line() -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    why = sandbox.probe(sandbox.Confinement(uid=sandbox.UID_BASE), ["false"], {})
    assert why is not None and "\n" not in why
    assert why.startswith("a confined test start (false) failed with status 1")


def test_a_confined_command_line_binds_what_it_must_and_nothing_more(tmp_path: Path) -> None:
    from wizard_referee.sandbox.bwrap import SETPRIV_DROP

    folder, lib = tmp_path / "bot", tmp_path / "lib"
    folder.mkdir()
    lib.mkdir()
    env = {
        "PATH": "/usr/bin",
        "WIZARD_ARENA_TOKEN": "t0ken-value",
        "AWS_SECRET_ACCESS_KEY": "x",
        PLANTED[0]: PLANTED[1],
        "WIZARD_ARENA_GRPC_LISTENER": "event_engine",
    }
    confinement = sandbox.Confinement(
        uid=60005,
        folder=folder,
        socket_dir=tmp_path / "s",
        readable=(Path("/"), lib, tmp_path / "absent"),
    )
    argv, clean = sandbox.confined_command(["python", "bot.py"], env, confinement)
    assert clean == {
        "PATH": "/usr/bin",
        "WIZARD_ARENA_TOKEN": "t0ken-value",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
    }  # an allow-list: no organiser's variable, not even one of ours
    assert not [a for a in argv if "t0ken-value" in a or a == "--setenv"]  # never in argv
    seccomp = argv.index("--seccomp")
    assert argv[seccomp + 1] == "3" and argv[:3] == ["/bin/sh", "-c", 'exec "$@" 3<"$0"']
    assert Path(argv[3]).read_bytes() == seccomp_program()
    binds = [tuple(argv[i + 1 : i + 3]) for i, a in enumerate(argv) if a == "--ro-bind"]
    assert ("/", "/") not in binds  # never the whole filesystem
    assert (str(folder), str(folder)) in binds and (str(lib), str(lib)) in binds
    assert not [b for b in binds if "absent" in b[0]]
    assert (str(tmp_path / "s"), sandbox.SOCKET_DIR) in binds
    assert {"--unshare-pid", "--unshare-net", "--die-with-parent"} <= set(argv)
    assert argv[argv.index("--chdir") + 1] == str(folder)
    assert argv[-2:] == ["python", "bot.py"]
    if os.geteuid() == 0:  # bubblewrap without a user namespace, then setpriv to the uid
        assert "--unshare-user" not in argv
        drop = ["--reuid", "60005", "--regid", "60005", *SETPRIV_DROP, "--"]
        assert Path(argv[-len(drop) - 3]).name == "setpriv" and argv[-len(drop) - 2 : -2] == drop


@needs_sandbox
@pytest.mark.e2e
@pytest.mark.slow(seconds=10)
def test_confined_sigkill_and_resume_give_the_unconfined_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Confinement changes no result: a confined tournament killed with
    SIGKILL mid-way leaves no bot running, and resumed confined it stores
    exactly what the same tournament stores unconfined and uninterrupted."""
    from .support import wait_for_finished_games

    entrants = det_entrants(4)
    tourney = {**TOURNEY, "bot_seed_secret": "confined or not"}
    monkeypatch.setenv("PYTHONPATH", env_with_tests()["PYTHONPATH"])  # the bots import tests.bots
    plain = TournamentConfig.from_dict(
        {"tournament": {**tourney, "database": str(tmp_path / "a.sqlite")}, "entrant": entrants}
    )
    trio.run(run_tournament, plain).close()
    full = seat_results(tmp_path / "a.sqlite")

    toml = write_toml(
        tmp_path / "b.toml", {**tourney, "database": "b.sqlite", "sandbox": "bwrap"}, entrants
    )
    db = tmp_path / "b.sqlite"
    cmd = [sys.executable, "-m", "wizard_arena.cli", "tournament", str(toml), "--quiet"]
    proc = subprocess.Popen(
        cmd, env=env_with_tests(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    finished = wait_for_finished_games(db, 3, 120, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 3 <= finished < len(plan_games(plain)), "kill did not land mid-tournament"
    _, parents = hierarchy()
    groups = [g for p in set(parents.values()) for g in p.glob(f"wizard-arena-{proc.pid}-*")]
    assert groups  # the killed runner could not remove them ...
    deadline = time.monotonic() + 5
    while any((g / "cgroup.procs").read_text().strip() for g in groups):
        assert time.monotonic() < deadline, "a confined bot outlived its runner"
        time.sleep(0.05)  # ... but every process in them ends with it
    res = subprocess.run(
        [*cmd, "--resume"],
        env=env_with_tests(),
        capture_output=True,
        text=True,
        timeout=scaled(300),
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert seat_results(db) == full
    assert not any(g.exists() for g in groups)  # swept by the resumed run


def _hostile_attacks(tmp_path: Path, secret: Path, victim: int, port: int) -> list[str]:
    """The escape attempts of a hostile bot under compare or check: each must fail."""
    return [
        *("--read", str(secret)),
        *("--read", "/etc/shadow"),
        *("--write", str(tmp_path / "outside.txt")),
        *("--connect", f"127.0.0.1:{port}"),
        *("--signal", str(victim)),
        *("--environ", str(victim)),
        *("--env", "WIZARD_ORGANISER_SECRET"),
        *("--processes", str(PROCESSES + 8)),
        *[a for name in SYSCALLS for a in ("--syscall", name)],
        *("--key-write", "channel"),
        *("--env", PLANTED[0]),
    ]


@contextlib.contextmanager
def _victims(tmp_path: Path) -> Any:
    """A process to signal (it writes ``signalled`` when hit) and a loopback listener."""
    signalled = tmp_path / "signalled"
    victim = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, sys, time\n"
            "signal.signal(signal.SIGUSR1, lambda *a: open(sys.argv[1], 'w').write('hit'))\n"
            "time.sleep(120)\n",
            str(signalled),
        ],
        env={**os.environ, "VICTIM_SECRET": "v"},
    )
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    try:
        yield victim.pid, listener
    finally:
        victim.kill()
        victim.wait()
        listener.close()
    assert not signalled.exists()


def _all_denied(log: str, at_least: int) -> list[str]:
    attempts = [line for line in log.splitlines() if line.startswith("HOSTILE ")]
    done = [a for a in attempts if "trying" not in a]
    assert len(done) >= at_least, log
    assert all(": denied (" in a for a in done), done
    return attempts


@needs_sandbox
@pytest.mark.e2e
@pytest.mark.slow(seconds=4)
def test_a_hostile_bot_under_compare_is_confined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``compare --sandbox bwrap``: a hostile command bot (B) fails every
    escape, its memory kill in one game is recorded with the limit, and the
    comparison finishes; the bot given as a class (A) runs confined too."""
    from wizard_referee.tournament.store import ResultsStore

    (tmp_path / "a").mkdir()
    secret = tmp_path / "a" / "secret.txt"
    secret.write_text("a's code\n")
    monkeypatch.setenv("WIZARD_ORGANISER_SECRET", "s3cret")
    monkeypatch.setenv(*PLANTED)
    with _victims(tmp_path) as (victim, listener):
        attacks = _hostile_attacks(tmp_path, secret, victim, listener.getsockname()[1])
        attacks += ["--read", str(tmp_path / "compare.sqlite")]
        # the bots are told opaque game ids: d1-B's under the comparison's secret
        attacks += ["--allocate", str(2 * MEMORY), "--in-game", bot_game_id("c", "d1-B")]
        hostile = " ".join([*HOSTILE, *attacks])
        proc = subprocess.run(
            [
                *(sys.executable, "-m", "wizard_arena.cli", "compare"),
                *("wizard_bots.random_bot:RandomBot", hostile),
                *("--players", "3", "--round-sizes", "1,2,3", "--games", "4"),
                *("--opponent", "wizard_bots.random_bot:RandomBot", "--parallel", "1"),
                *("--move-time", f"{scaled(2):g}", "--sandbox", "bwrap", "--folder", "A=a"),
                *("--memory-limit", str(MEMORY), "--max-processes", str(PROCESSES)),
                *("--bot-seed-secret", "c", "--quiet"),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=scaled(120),
        )
        with contextlib.suppress(BlockingIOError):
            listener.accept()
            pytest.fail("the hostile bot reached a loopback listener")
    assert proc.returncode == 0, proc.stderr
    assert "4 games" in proc.stdout
    log = (tmp_path / "compare.sqlite.logs" / "B-0.log").read_text()
    attempts = _all_denied(log, 9 + len(SYSCALLS) + 2)
    assert f"HOSTILE allocate {2 * MEMORY}: trying" in attempts  # and never "ok": killed
    assert not (tmp_path / "outside.txt").exists()
    store = ResultsStore(tmp_path / "compare.sqlite", read_only=True)
    try:
        crashes = [
            rec.fault_details[rec.names.index("B")].get("crash") for rec in store.records_of("B")
        ]
    finally:
        store.close()
    assert [c for c in crashes if c] == [
        "the bot's process was killed: out of memory: limit 128 MiB"
    ], crashes


@needs_sandbox
def test_compare_refuses_a_folder_that_holds_its_database(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "wizard_arena.cli", "compare"),
            *("wizard_bots.random_bot:RandomBot", "wizard_bots.random_bot:RandomBot"),
            *("--sandbox", "bwrap", "--folder", "B=.", "--games", "4", "--quiet"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert proc.returncode == 2
    assert "error: bot 'B': its folder . holds the results store compare.sqlite" in proc.stderr
    assert not (tmp_path / "compare.sqlite").exists()


@needs_sandbox
@pytest.mark.e2e
def test_a_hostile_bot_under_check_is_confined_and_advised_about_its_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``check --sandbox bwrap``: the bot under test (a student's submission,
    checked before it is entered) fails every escape; killed for its memory
    limit in its second game, the check's advice names that limit."""
    folder = tmp_path / "submission"
    folder.mkdir()
    secret = tmp_path / "other-student.txt"
    secret.write_text("someone else's code\n")
    monkeypatch.setenv("WIZARD_ORGANISER_SECRET", "s3cret")
    monkeypatch.setenv(*PLANTED)
    with _victims(tmp_path) as (victim, listener):
        attacks = _hostile_attacks(tmp_path, secret, victim, listener.getsockname()[1])
        attacks += ["--write", str(folder / "written.txt")]
        attacks += ["--allocate", str(2 * MEMORY), "--in-game", "check-2"]
        # its report lines to stderr, whose last lines the check's report shows
        bot = [sys.executable, "-m", "wizard_bots.misbehaving.hostile", *ARGS, *attacks]
        hostile = f"sh -c {shlex.quote(' '.join(bot) + ' 1>&2')}"
        proc = subprocess.run(
            [
                *(sys.executable, "-m", "wizard_arena.cli", "check", "--command", hostile),
                *("--players", "3", "--games", "2", "--round-sizes", "1,2,3", "--json"),
                *("--sandbox", "bwrap", "--folder", str(folder)),
                *("--memory-limit", "128M", "--max-processes", str(PROCESSES)),
            ],
            capture_output=True,
            text=True,
            timeout=scaled(90),
        )
        with contextlib.suppress(BlockingIOError):
            listener.accept()
            pytest.fail("the hostile bot reached a loopback listener")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    tail = "\n".join(report["stderr_tail"])  # (its last lines: the first attempts may be cut)
    attempts = _all_denied(tail, 9)
    for name in SYSCALLS:
        assert f"HOSTILE syscall {name}: denied (PermissionError: [Errno 1] " in tail, name
    assert f"HOSTILE allocate {2 * MEMORY}: trying" in attempts  # and never "ok": killed
    (crash,) = [p for p in report["problems"] if p["code"] == "crash"]
    assert crash["detail"].startswith(
        "the bot's process was killed: out of memory: limit 128 MiB"
    ), crash
    assert crash["advice"].startswith(
        "your bot used more memory than its limit (out of memory: limit 128 MiB)"
    )
    assert not (tmp_path / "outside.txt").exists() and not (folder / "written.txt").exists()


FAKE_DEV = [
    "/dev/nvidia0",
    "/dev/nvidia1",
    "/dev/nvidia2",
    "/dev/nvidiactl",
    "/dev/nvidia-uvm",
    "/dev/nvidia-uvm-tools",
    "/dev/nvidia-caps",
]


def _dev_binds(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "--dev-bind"]


@pytest.mark.parametrize(
    ("visible", "asks", "expected"),
    [
        ("2", [1.0], [("2",)]),  # what Ray assigned the worker
        ("0,2", [1.0, 1.0], [("0",), ("2",)]),
        (None, [0.5, 0.5, 1.0, 0.0], [("0",), ("0",), ("1",), ()]),  # the /dev/nvidia* here
    ],
)
def test_an_entrant_gets_the_device_files_of_its_gpus_and_no_others(
    visible: str | None,
    asks: list[float],
    expected: list[tuple[str, ...]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No GPU here: what bubblewrap is given. Each instance's sandbox has
    /dev/nvidiaN of its own GPUs, the driver's shared files, and its
    CUDA_VISIBLE_DEVICES naming them; an instance without GPUs, none."""
    from wizard_referee.hosting.confine import instance_gpus
    from wizard_referee.sandbox import bwrap

    monkeypatch.setattr(bwrap.glob, "glob", lambda pattern: list(FAKE_DEV))
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    from wizard_referee.hosting import confine

    monkeypatch.setattr(confine.glob, "glob", lambda pattern: list(FAKE_DEV))
    shares = instance_gpus(asks)
    assert shares == expected
    shared = ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"]
    for own in shares:
        confinement = sandbox.Confinement(uid=sandbox.UID_BASE, gpus=own)
        argv, env = sandbox.confined_command(["true"], {"PATH": "/usr/bin"}, confinement)
        dev = argv.index("--dev")
        binds = _dev_binds(argv)
        assert binds == ([f"/dev/nvidia{g}" for g in own] + shared if own else [])
        assert all(argv.index(b) > dev for b in binds)  # into its fresh /dev
        assert "--setenv" not in argv  # its environment is bubblewrap's own
        assert env.get("CUDA_VISIBLE_DEVICES") == (",".join(own) if own else None)


def test_too_few_gpus_or_gpus_named_by_uuid_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from wizard_referee.hosting import confine

    monkeypatch.setattr(confine.glob, "glob", lambda pattern: [])
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert confine.instance_gpus([0.0, 0.0]) == [(), ()]
    with pytest.raises(ValueError, match="ask for 1 GPUs, and CUDA_VISIBLE_DEVICES gives 0"):
        confine.instance_gpus([1.0])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-5d3c")
    with pytest.raises(ValueError, match="by UUID"):
        confine.instance_gpus([1.0])
    with pytest.raises(ValueError, match="no /dev/nvidia3 here"):
        sandbox.gpu_args(["3"], FAKE_DEV)


@needs_sandbox
def test_the_keyring_is_no_channel_between_two_runs_of_a_uid() -> None:
    """Two confined starts of the same uid, one after the other (every
    ``check``, and the first entrant of every tournament, run as UID_BASE):
    the first cannot leave a key in its user keyring, the second cannot
    read one; and the filter holds for every start, through the launcher
    that starts every bot (tournament, compare, ladder, Ray workers, check)."""
    from wizard_referee.hosting.launcher import open_launcher

    confinement = sandbox.Confinement(uid=sandbox.UID_BASE)
    env = env_with_tests()
    runs = [["--key-write", "wizard-arena-channel"], ["--key-read", "wizard-arena-channel"]]

    async def main(log: Path) -> list[int]:
        codes = []
        async with open_launcher() as launcher:
            for attacks in runs:
                code = "from wizard_bots.misbehaving.hostile import attack; import sys\n"
                code += f"attack({attacks[0][2:]!r}, {attacks[1]!r})"
                argv, clean = sandbox.confined_command(
                    [sys.executable, "-c", code], env, confinement
                )
                proc = await launcher.spawn(argv, clean, log)
                codes.append(await proc.wait())
        return codes

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "runs.log"
        assert trio.run(main, log) == [0, 0]
        text = log.read_text()
    assert "HOSTILE key-write wizard-arena-channel: denied (PermissionError: [Errno 1] " in text
    assert "HOSTILE key-read wizard-arena-channel: denied (PermissionError: [Errno 1] " in text
    assert "a message" not in text, text


def test_the_seccomp_file_is_made_again_when_its_folder_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runner that lives for days (a ladder) keeps its filter in a
    temporary folder a /tmp cleaner may remove: the next start makes it
    again, and a folder it cannot make is a SandboxError (its entrant's
    fault, one line), never an OSError that ends the runner."""
    from wizard_referee.sandbox import seccomp

    if seccomp.seccomp_problem() is not None:
        pytest.skip(seccomp.seccomp_problem())
    monkeypatch.setattr(seccomp, "_folder", [])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    first = seccomp.filter_file()
    shutil.rmtree(first.parent)
    again = seccomp.filter_file()
    assert again.read_bytes() == seccomp_program() and again.parent != first.parent
    shutil.rmtree(again.parent)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "absent"))
    with pytest.raises(sandbox.SandboxError, match="the seccomp filter cannot be written"):
        seccomp.filter_file()


_WRITABLE_MOUNTS = """
import os, sys
tried, written = 0, []
for line in open("/proc/self/mountinfo"):
    fields = line.split()
    point = fields[4]
    if point in ("/", "/tmp") or point.startswith(("/proc", "/dev")):
        continue  # (its own: in memory)
    tried += 1
    try:
        with open(os.path.join(point, "probe"), "wb") as f:
            f.write(b"x")
        written.append(point)
    except OSError:
        pass
print("TRIED", tried, "WRITABLE", written, file=sys.stderr)
"""


@needs_sandbox
@pytest.mark.e2e
def test_a_command_bot_under_check_writes_no_folder_of_the_machine(tmp_path: Path) -> None:
    """``check --command`` under the sandbox binds no host folder writable
    (the folder of the SDK's report is for MODULE:CLASS bots alone): a bot
    writing there filled the organiser's disk past any output limit."""
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "probe.py").write_text(_WRITABLE_MOUNTS)
    folder.chmod(0o755)
    (folder / "probe.py").chmod(0o644)
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "wizard_arena.cli", "check"),
            *("--command", f"{sys.executable} probe.py", "--games", "1", "--json"),
            *("--sandbox", "bwrap", "--folder", str(folder), "--connect-timeout", "5"),
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )
    report = json.loads(proc.stdout)
    (line,) = [line for line in report["stderr_tail"] if line.startswith("TRIED ")]
    assert line.endswith(" WRITABLE []") and line != "TRIED 0 WRITABLE []", line


#: keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING) through the 32-bit
#: entry (int 0x80, i386 number 288), as machine code Python calls.
_INT80_KEYCTL = """
import ctypes, mmap
code = bytes.fromhex("53b820010000bb00000000b9fcffffffcd805bc3")
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
print("int80", call(), flush=True)
"""
#: keyctl through the x32 entry (its number with bit 30 set).
_X32_KEYCTL = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print("x32", libc.syscall(ctypes.c_long(0x40000000 + 250), 0, -4, 0), flush=True)
"""


@needs_sandbox
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the x86_64 kernel's other entries")
@pytest.mark.parametrize("code", [_INT80_KEYCTL, _X32_KEYCTL], ids=["int80", "x32"])
def test_the_filter_holds_through_the_32_bit_and_x32_entries(code: str) -> None:
    """The filter is for x86_64 system calls: one made through the 32-bit
    (``int 0x80``) or x32 entry, whose numbers differ, never passes
    unchecked: it kills the process (libseccomp's wrong-architecture
    action), where unconfined it returns (the keyring's id)."""
    command = [sys.executable, "-c", code]
    free = subprocess.run(command, capture_output=True, text=True, timeout=60)
    argv, env = sandbox.confined_command(
        command, env_with_tests(), sandbox.Confinement(uid=sandbox.UID_BASE)
    )
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert free.returncode == 0, free  # (a key id, or ENOSYS from a kernel without x32)
    assert proc.returncode == 128 + signal.SIGSYS and not proc.stdout, (proc.stdout, proc.stderr)
