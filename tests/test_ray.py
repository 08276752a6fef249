"""Tournaments on a Ray cluster (executor = "ray"), end to end: a two-node
cluster simulated on this machine (``ray.cluster_utils.Cluster``, two nodes
of 1 CPU), real bot processes on each worker.

Ray's daemons bind every interface, so these tests run only inside a
network namespace that has loopback alone: run normally, this module starts
itself again in such a namespace (``scripts/in_netns.py``), in the
background at the start of the run, and its last test passes when the tests
inside passed. One cluster serves the whole module (starting Ray costs
seconds).

The bots are deterministic (their choices depend only on what they see),
so a tournament on the cluster must give exactly the results of a local
run, however its games are spread, lost and replayed; every test asserts
that no decision timed out (a loaded machine cannot pass for a result).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.runner import TournamentConfig, run_tournament

from .conftest import ROOT, needs
from .support import scaled, wait_for_finished_games
from .tournaments import SYSCALLS, entrant, seat_results, write_toml

pytestmark = pytest.mark.e2e

_spec = importlib.util.spec_from_file_location("in_netns", ROOT / "scripts" / "in_netns.py")
assert _spec is not None and _spec.loader is not None
netns = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(netns)


#: Runs the Ray tests' command (argv[3:]) for at most argv[2] seconds and
#: leaves its output and return code in the folder argv[1] ("returncode"
#: appears last, when it is done).
#: Ray's files go to a temporary folder of this run's own (RAY_TMPDIR, short:
#: Ray's socket paths must fit 107 bytes), never the machine's /tmp/ray, where
#: an address of "auto" or a bare ray.init() would find another run's cluster;
#: RAY_ADDRESS is not passed on.
_RUNNER = """
import os, pathlib, shutil, subprocess, sys, tempfile
d, limit = pathlib.Path(sys.argv[1]), float(sys.argv[2])
ray_tmp = tempfile.mkdtemp(prefix="wa-ray-", dir="/tmp")
env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
env["RAY_TMPDIR"] = ray_tmp
with open(d / "output", "w") as out:
    try:
        rc = str(subprocess.run(sys.argv[3:], stdout=out, stderr=subprocess.STDOUT,
                                env=env, timeout=limit).returncode)
    except subprocess.TimeoutExpired:
        rc = f"timed out after {limit:.0f} s"
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
(d / "returncode.part").write_text(rc)
(d / "returncode.part").rename(d / "returncode")
"""


if not netns.inside():

    def _run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
        """One folder for this pytest run, whichever xdist worker asks (each
        worker's base temp is a folder of the run's own)."""
        base = tmp_path_factory.getbasetemp()
        root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
        folder = root / "ray-in-netns"
        folder.mkdir(exist_ok=True)
        return folder

    def _start_once(folder: Path) -> None:
        """Start the Ray tests in a loopback-only namespace, in the background,
        unless this run has started them already."""
        try:
            os.close(os.open(folder / "started", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
        pytest_argv = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
        argv = netns.command([*pytest_argv, "-p", "no:hypothesispytest", __file__])
        subprocess.Popen(
            [sys.executable, "-c", _RUNNER, str(folder), str(scaled(900)), *argv],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    #: Ray's daemons bind every interface: its tests run only in a namespace
    #: with loopback alone, which root (or a user namespace) can make
    NETNS = needs("netns", (p := netns.problem()) and f"cannot keep Ray on loopback: {p}")

    @pytest.mark.early  # first in the run, so that Ray starts at once
    @NETNS
    def test_the_ray_tests_start_in_the_background(
        tmp_path_factory: pytest.TempPathFactory,
    ) -> None:
        """The Ray tests spend most of their 40-60 s waiting (on Ray's
        daemons starting, on games paced to be interrupted): they run beside
        the rest of the suite instead of holding a worker, and the last test
        of the run reports them."""
        folder = _run_folder(tmp_path_factory)
        _start_once(folder)
        assert (folder / "started").exists()

    @pytest.mark.late  # last in the run: by then they are done
    @NETNS
    def test_the_ray_tests_pass_in_a_loopback_only_network_namespace(
        tmp_path_factory: pytest.TempPathFactory,
    ) -> None:
        folder = _run_folder(tmp_path_factory)
        _start_once(folder)  # (run alone, or the starting test deselected)
        done = folder / "returncode"
        limit = scaled(960)
        deadline = time.monotonic() + limit
        while not done.exists():
            assert time.monotonic() < deadline, f"the Ray tests did not finish in {limit:.0f} s"
            time.sleep(0.2)
        output = (folder / "output").read_text()
        assert done.read_text() == "0", output[-12000:]
        assert " passed" in output and "skipped" not in output, output[-2000:]


def _section(db: Path, **kw: Any) -> dict[str, Any]:
    return {
        "name": "ray",
        # a table of 3 (three bot processes a worker, not four), two deals
        # of its 6 seat rotations: 12 games, as many as at a table of 4
        "players": 3,
        "deal_sets": 2,
        "round_sizes": [1, 3, 5],
        "move_time": scaled(5.0),  # generous: no decision may time out on a busy machine
        "connect_timeout": scaled(60.0),  # (and a worker twice that to be ready)
        "seed": 7,
        "bot_seed_secret": "ray tests",
        "database": str(db),
        **kw,
    }


def _entrants(delay: float = 0.0) -> list[dict[str, object]]:
    """Three deterministic bots; ``delay`` seconds a decision make a game last."""
    return [
        entrant(
            f"det-{i}",
            "tests.bots.det_bot:DeterministicBot",
            "--arg",
            f"salt=s{i}",
            "--arg",
            f"delay={delay}",
        )
        for i in range(3)
    ]


def _config(db: Path, delay: float = 0.0, **kw: Any) -> TournamentConfig:
    return TournamentConfig.from_dict(
        {"tournament": _section(db, **kw), "entrant": _entrants(delay)}
    )


def _records(db: Path) -> list[GameRecord]:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT record FROM games WHERE status = 'finished'").fetchall()
    return [GameRecord.from_json(r[0]) for r in rows]


def _no_faults(records: list[GameRecord]) -> None:
    faulted = {r.game_id: r.faults for r in records if any(r.faults)}
    assert not faulted, f"decisions faulted (timed out?) on a loaded machine: {faulted}"


if netns.inside():
    import ray
    from ray.cluster_utils import Cluster

    def _free_port() -> int:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return int(sock.getsockname()[1])

    #: The Ray Client server's port on the module's cluster (ray://).
    CLIENT_PORT = _free_port()

    def _start_cluster(attempts: int = 3) -> Any:
        """Ray gives a node a fixed 30 s to register with its GCS
        (ray/_private/node.py); on a machine busy with the rest of the suite
        it may take longer, so the cluster is started again (up to
        ``attempts`` times) before the tests give up."""
        for attempt in range(1, attempts + 1):
            c = None
            try:
                c = Cluster(
                    initialize_head=True,
                    head_node_args={
                        "num_cpus": 1,
                        "node_ip_address": "127.0.0.1",
                        "include_dashboard": False,
                        # two daemons these tests never use (~1.3 s of CPU to
                        # start): the autoscaler's monitor (the cluster is
                        # fixed) and the log monitor (log_to_driver is off)
                        "no_monitor": True,
                        "include_log_monitor": False,
                        # the Ray Client server (ray://), as 'ray start --head' starts it
                        "ray_client_server_port": CLIENT_PORT,
                    },
                )
                c.add_node(num_cpus=1, node_ip_address="127.0.0.1")
                c.wait_for_nodes()
            except Exception as e:
                if c is not None:
                    c.shutdown()
                if attempt == attempts or "timed out during startup" not in str(e):
                    raise
                print(f"Ray's cluster did not start (attempt {attempt}): {e}")
                continue
            return c
        raise AssertionError("unreachable")

    @pytest.fixture(scope="module")
    def cluster() -> Iterator[Any]:
        """Two nodes of 1 CPU on 127.0.0.1; this process is the coordinator."""
        path = os.environ.get("PYTHONPATH", "")
        os.environ["PYTHONPATH"] = str(ROOT) + (os.pathsep + path if path else "")  # tests.bots
        c = _start_cluster()
        ray.init(address=c.address, _node_ip_address="127.0.0.1", log_to_driver=False)
        try:
            yield c
        finally:
            ray.shutdown()
            c.shutdown()

    @pytest.fixture(scope="module")
    def reference(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Any, ...]]:
        """The seat results of the tournament played locally (one game at a
        time: three bot processes, not six; the results do not depend on it)."""
        db = tmp_path_factory.mktemp("local") / "local.sqlite"
        trio.run(run_tournament, _config(db)).close()
        _no_faults(_records(db))
        return seat_results(db)

    def test_ray_keeps_its_files_in_a_folder_of_the_runs_own(cluster: Any) -> None:
        """Not the machine's /tmp/ray, where "auto" would find other runs' clusters."""
        own = os.environ.get("RAY_TMPDIR", "")
        assert own.startswith("/tmp/wa-ray-"), own
        assert cluster.head_node.get_session_dir_path().startswith(own + "/")
        assert "RAY_ADDRESS" not in os.environ

    def test_a_two_node_tournament_gives_the_local_results(
        cluster: Any, reference: list[tuple[Any, ...]], tmp_path: Path
    ) -> None:
        db = tmp_path / "ray.sqlite"
        config = _config(db, executor="ray")  # workers: as many as the CPUs hold (2)
        trio.run(run_tournament, config).close()
        records = _records(db)
        _no_faults(records)
        assert seat_results(db) == reference  # same games, same seats, same results
        nodes = {r.tags["node"] for r in records}
        assert len(nodes) == 2, f"the games were not spread over both nodes: {nodes}"
        assert {r.tags["worker"] for r in records} == {0, 1}

    #: Tries of a Ray Client tournament whose per-client server did not start.
    CLIENT_ATTEMPTS = 3

    def _client_server_logs(cluster: Any) -> str:
        """The ends of Ray Client's per-client server logs on the head node,
        for a failure's message (the run's Ray folder goes when it ends)."""
        logs = Path(cluster.head_node.get_session_dir_path()) / "logs"
        tails = [
            f"\n--- {path.name}:\n" + path.read_text(errors="replace")[-1500:]
            for path in sorted(logs.glob("ray_client_server*.err"))
        ]
        return "".join(tails) or f"\n(no Ray Client server logs in {logs})"

    def test_a_tournament_through_ray_client(
        cluster: Any, reference: list[tuple[Any, ...]], tmp_path: Path
    ) -> None:
        """``--ray-address ray://HOST:PORT``: Ray Client hands back new reference
        objects for the same objects, so the coordinator matches them by value;
        it used to wait for a worker that had long been ready, for 120 s."""
        db = tmp_path / "client.sqlite"
        toml = write_toml(tmp_path / "c.toml", _section(db, executor="ray", workers=1), _entrants())
        address = f"ray://127.0.0.1:{CLIENT_PORT}"
        cmd = [sys.executable, "-m", "wizard_arena.cli", "tournament", str(toml), "--quiet"]
        for attempt in range(1, CLIENT_ATTEMPTS + 1):
            res = subprocess.run(
                [*cmd, "--ray-address", address],
                capture_output=True,
                text=True,
                timeout=scaled(240),
            )
            # Ray Client's proxy starts a server process for each client, which
            # a busy machine has seen fail to start ("Starting Ray client
            # server failed"): again, from a clean slate, after a pause
            if res.returncode == 0 or "Initialization failure from server" not in res.stderr:
                break
            assert not db.exists()
            print(f"Ray Client's server did not start (attempt {attempt}): {res.stderr[-300:]}")
            if attempt < CLIENT_ATTEMPTS:
                time.sleep(scaled(5))
        assert res.returncode == 0, res.stderr[-3000:] + _client_server_logs(cluster)
        assert seat_results(db) == reference
        _no_faults(_records(db))

    def test_a_comparison_on_the_cluster_gives_the_local_answer(
        cluster: Any, tmp_path: Path
    ) -> None:
        from wizard_arena.rules import Rules
        from wizard_referee.cluster.compare_play import play_compare
        from wizard_referee.compare.comparison import Progress, open_comparison
        from wizard_referee.compare.local_play import play_planned
        from wizard_referee.compare.plan import ComparePlan, parse_bot
        from wizard_referee.compare.stats import Design

        random_bot = parse_bot("wizard_bots.random_bot:RandomBot")
        plan = ComparePlan(
            parse_bot("wizard_bots.heuristic:HeuristicBot"),
            random_bot,
            (random_bot,) * 3,
            Rules(players=4, hand_sizes=(1, 3, 5)),
        )

        def opened(name: str) -> Any:
            return open_comparison(
                plan, tmp_path / name, 12, Design(), sequential=False, resume=False, secret="s"
            )

        on_ray = opened("ray.sqlite")
        play_compare(on_ray, Progress(on_ray))
        here = opened("here.sqlite")
        while (game := here.next_game()) is not None:
            here.add(game, play_planned(here.plan, game))
        assert on_ray.outcome().as_dict() == here.outcome().as_dict()
        assert on_ray.cs.n == 12
        # every game played by a worker of the cluster (which of the two: as they
        # came free; in-process games are quick, so one may take them all)
        nodes = {r.tags["node"] for r in _records(tmp_path / "ray.sqlite")}
        assert nodes and nodes <= {n.node_id[:12] for n in cluster.list_all_nodes()}, nodes

    def test_the_coordinator_killed_and_resumed(
        cluster: Any, reference: list[tuple[Any, ...]], tmp_path: Path
    ) -> None:
        # one worker (three bots, one Ray worker per run instead of twice that):
        # the coordinator's death and resumption are the point, not the spread
        toml = write_toml(
            tmp_path / "t.toml",
            _section(Path("k.sqlite"), executor="ray", ray_address=cluster.address, workers=1),
            _entrants(delay=0.01),
        )
        db = tmp_path / "k.sqlite"
        cmd = [sys.executable, "-m", "wizard_arena.cli", "tournament", str(toml), "--quiet"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        finished = wait_for_finished_games(db, 3, 180, proc)
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate()
        assert 3 <= finished < 12, f"the kill did not land mid-tournament: {err.decode()[-2000:]}"
        res = subprocess.run(
            [*cmd, "--resume", "--json"], capture_output=True, text=True, timeout=scaled(300)
        )
        assert res.returncode == 0, res.stderr[-3000:]
        assert seat_results(db) == reference  # every game once: the store refuses a second
        _no_faults(_records(db))
        assert all(r["games"] == 12 for r in json.loads(res.stdout))

    def test_ray_started_here_twice_keeps_no_token_and_joins_no_old_cluster(
        tmp_path: Path,
    ) -> None:
        """Without an address, Ray is started here (never the cluster 'ray
        start' last left its address for, which a bare ray.init() joins), with
        token authentication on and a token of its own that is written nowhere
        (~/.ray/auth_token would turn authentication on for every later 'ray
        start --head'); a second start in the same process gets a token of its
        own too (Ray caches the token it loaded: the second was refused)."""
        code = (
            "import ray\n"
            "from wizard_referee.cluster.connect import open_ray\n"
            "for k in range(2):\n"
            "    with open_ray(''):\n"
            "        print(ray.get(ray.remote(lambda: k).remote()), flush=True)\n"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_AUTH", "RAY_ADDRESS"))}
        env["HOME"] = str(tmp_path)
        res = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            capture_output=True,
            text=True,
            timeout=scaled(240),
        )
        assert res.returncode == 0, res.stderr[-3000:]
        assert res.stdout.split() == ["0", "1"]
        assert not (tmp_path / ".ray" / "auth_token").exists()

    def test_the_two_machine_steps_with_token_authentication(
        reference: list[tuple[Any, ...]], tmp_path: Path
    ) -> None:
        """docs/ray.md, "Step by step: a cluster of two machines", with
        token authentication on, as the docs say to run it: a token made on
        the head (``ray get-auth-token --generate``), shared with the other
        node, ``RAY_AUTH_MODE=token`` on every command. A tournament given the
        address without the mode is refused in one line that says what to do,
        before its database is created."""
        home = tmp_path / "home"  # both nodes' ~/.ray/auth_token: the token shared
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_AUTH", "RAY_ADDRESS"))}
        env["HOME"] = str(home)
        auth = {**env, "RAY_AUTH_MODE": "token"}
        ray_cli = str(Path(sys.executable).with_name("ray"))
        made = subprocess.run(
            [ray_cli, "get-auth-token", "--generate"],
            env=env, capture_output=True, text=True, timeout=scaled(120),
        )  # fmt: skip
        assert made.returncode == 0 and (home / ".ray" / "auth_token").exists(), made.stderr
        port = _free_port()
        common = ["--block", "--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
        nodes = [
            subprocess.Popen(
                [ray_cli, "start", "--head", f"--port={port}", "--include-dashboard=false",
                 f"--ray-client-server-port={_free_port()}",
                 f"--dashboard-agent-listen-port={_free_port()}", *common],
                env=auth, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        ]  # fmt: skip
        try:
            wait_until = time.monotonic() + 90
            while subprocess.run(
                [ray_cli, "status", f"--address=127.0.0.1:{port}"],
                env=auth, capture_output=True, timeout=scaled(60),
            ).returncode != 0:  # fmt: skip
                assert time.monotonic() < wait_until, "the head did not start in 90 s"
                time.sleep(1)
            nodes.append(
                subprocess.Popen(
                    [ray_cli, "start", f"--address=127.0.0.1:{port}",
                     f"--dashboard-agent-listen-port={_free_port()}", *common],
                    env=auth, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )
            )  # fmt: skip
            db = tmp_path / "auth.sqlite"
            toml = write_toml(tmp_path / "a.toml", _section(db, executor="ray"), _entrants())
            cmd = [sys.executable, "-m", "wizard_arena.cli", "tournament", str(toml), "--quiet",
                   "--ray-address", f"127.0.0.1:{port}"]  # fmt: skip
            refused = subprocess.run(
                cmd, env=env, capture_output=True, text=True, timeout=scaled(240)
            )
            assert refused.returncode == 2, refused.stderr[-3000:]
            assert refused.stderr.count("\n") == 1, refused.stderr[-3000:]
            assert "token authentication" in refused.stderr and "RAY_AUTH_MODE=token" in (
                refused.stderr
            )
            assert not db.exists()
            played = subprocess.run(
                cmd, env=auth, capture_output=True, text=True, timeout=scaled(240)
            )
            assert played.returncode == 0, played.stderr[-3000:]
            assert seat_results(db) == reference
            _no_faults(_records(db))
        finally:
            for proc in reversed(nodes):
                proc.terminate()
                try:
                    proc.wait(timeout=scaled(60))
                except subprocess.TimeoutExpired:
                    proc.kill()

    def test_a_hostile_entrant_is_confined_on_both_nodes(cluster: Any, tmp_path: Path) -> None:
        """``sandbox = "bwrap"`` with executor ray: each worker confines the
        entrants it starts, on each node (the checks run there); the hostile
        entrant's every escape fails on both, and the tournament finishes."""
        import socket

        from wizard_referee import sandbox

        if os.geteuid() != 0 or sandbox.problems():
            pytest.skip(f"confinement is tested as root: {sandbox.problems()}")
        db = tmp_path / "confined.sqlite"
        secret = tmp_path / "secret.txt"
        secret.write_text("the organiser's\n")
        listener = socket.create_server(("127.0.0.1", 0))
        listener.setblocking(False)
        hostile = {
            "name": "hostile",
            "command": [
                *(sys.executable, "-m", "wizard_bots.misbehaving.hostile"),
                *("--server", "{server}", "--token", "{token}", "--name", "{name}"),
                *("--read", str(db), "--read", str(secret), "--read", "/etc/shadow"),
                *("--write", str(tmp_path / "outside.txt")),
                *("--connect", f"127.0.0.1:{listener.getsockname()[1]}"),
                *("--processes", "40"),
                # what the seccomp filter refuses, on each node
                *[a for name in SYSCALLS for a in ("--syscall", name)],
                *("--key-write", "channel"),
            ],
            "max_processes": 32,
        }
        entrants = [*_entrants(delay=0.03)[:2], hostile]  # games of about a second
        config = TournamentConfig.from_dict(
            {
                "tournament": _section(db, executor="ray", workers=2, sandbox="bwrap"),
                "entrant": entrants,
            }
        )
        try:
            trio.run(run_tournament, config).close()
            with pytest.raises(BlockingIOError):
                listener.accept()
        finally:
            listener.close()
        records = _records(db)
        assert len(records) == 12
        assert len({r.tags["node"] for r in records}) == 2
        logs = sorted(Path(str(db) + ".logs").glob("worker-*/hostile-0.log"))
        assert len(logs) == 2, logs  # a confined instance on each worker
        for log in logs:
            attempts = [x for x in log.read_text().splitlines() if x.startswith("HOSTILE ")]
            assert len(attempts) == 6 + len(SYSCALLS) + 1, attempts
            assert all(": denied (" in a for a in attempts), attempts
            for name in SYSCALLS:
                assert (
                    f"HOSTILE syscall {name}: denied (PermissionError: [Errno 1] "
                    in attempts[6 + SYSCALLS.index(name)]
                )
        assert not (tmp_path / "outside.txt").exists()

    def test_a_node_lost_mid_tournament(
        cluster: Any, reference: list[tuple[Any, ...]], tmp_path: Path
    ) -> None:
        """The worker node is removed while its worker plays a game: that game
        is played again on the other node; nothing is written twice, no bot
        is charged a fault. (The last test: the cluster keeps one node.)"""
        node = next(n for n in cluster.list_all_nodes() if n is not cluster.head_node)
        db = tmp_path / "lost.sqlite"
        # games of about a second (36 decisions):
        config = _config(db, delay=0.03, executor="ray", workers=2)
        killer: list[threading.Thread] = []

        def remove_soon() -> None:
            time.sleep(0.3)  # the node's worker has started its next game
            cluster.remove_node(node)

        def on_record(record: GameRecord) -> None:
            if not killer and record.tags["node"] == node.node_id[:12]:
                killer.append(threading.Thread(target=remove_soon))
                killer[0].start()

        trio.run(lambda: run_tournament(config, on_record=on_record)).close()
        assert killer, "no game was played on the worker node"
        killer[0].join()
        records = _records(db)
        _no_faults(records)
        assert seat_results(db) == reference
        replayed = [r.game_id for r in records if r.tags.get("lost_attempts")]
        assert replayed, "no game was under way on the lost node"
        with sqlite3.connect(db) as con:
            counts = dict(con.execute("SELECT status, COUNT(*) FROM games GROUP BY status"))
        assert counts == {"finished": 12}


if netns.inside():  # Ray imported in the namespace's run only (it loads grpc)

    def test_a_node_without_bubblewrap_refuses_its_games_and_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A worker whose node cannot confine the entrants (no bubblewrap here)
        plays none of their games: its ready() names the node and says why,
        which the coordinator reports as the worker's start error; no bot starts."""
        import shutil

        from wizard_referee.cluster import workers

        real = shutil.which
        monkeypatch.setattr(
            shutil, "which", lambda name, *a, **k: None if name == "bwrap" else real(name, *a, **k)
        )
        monkeypatch.setattr(workers, "where", lambda: {"host": "node-b", "ip": "10.0.0.2"})
        config = _config(tmp_path / "t.sqlite", executor="ray", sandbox="bwrap")
        worker = workers.HostWorker(
            config.hosting(), config.name, "secret", 0, str(tmp_path / "logs"), ""
        )
        error = worker.ready()["error"]
        assert error.startswith(
            "node node-b (10.0.0.2) cannot confine the entrants, and plays none of their games: "
            'sandbox = "bwrap" needs bubblewrap, which is not installed'
        ), error
        assert not list((tmp_path / "logs").glob("worker-0/*-0.log"))  # no bot started
