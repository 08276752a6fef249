"""The executors' table: ``local`` needs no Ray; ``ray`` without Ray installed
is one line naming the extra; what ``ray`` refuses before anything starts;
what a Ray worker asks for."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

from wizard_referee.tournament.config_keys import TournamentError
from wizard_referee.tournament.executors import load_executor
from wizard_referee.tournament.runner import TournamentConfig, run_tournament

from .support import scaled


def _config(tmp_path: Path, entrants: list[dict[str, object]], **kw: object) -> TournamentConfig:
    section = {"players": 3, "database": str(tmp_path / "t.sqlite"), **kw}
    return TournamentConfig.from_dict({"tournament": section, "entrant": entrants})


def _without_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(sys.modules):
        if name == "ray" or name.startswith(("ray.", "wizard_referee.cluster")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray: ModuleNotFoundError


def test_without_ray_the_ray_executor_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without_ray(monkeypatch)
    assert load_executor("local").problems  # needs no Ray
    with pytest.raises(TournamentError) as e:
        load_executor("ray")
    assert str(e.value) == (
        "executor \"ray\" needs Ray, an optional extra: pip install 'wizard-arena[ray]'"
    )
    from wizard_arena.extras import MissingExtraError

    with pytest.raises(MissingExtraError, match=r"needs the \[ray\] extra.*wizard-arena\[ray\]"):
        import wizard_referee.cluster  # noqa: F401


def test_ray_refuses_external_entrants_before_anything_starts(tmp_path: Path) -> None:
    entrants: list[dict[str, object]] = [{"name": f"c{i}", "command": ["true"]} for i in range(2)]
    entrants.append({"name": "visitor", "token": "secret"})
    config = _config(tmp_path, entrants, executor="ray")
    with pytest.raises(TournamentError, match="entrant 'visitor' is an external bot"):
        trio.run(run_tournament, config)
    assert not (tmp_path / "t.sqlite").exists()


def test_a_ray_worker_asks_for_a_cpu_per_table_and_its_entrants_needs(tmp_path: Path) -> None:
    from wizard_referee.cluster.tournament_play import worker_resources

    entrants: list[dict[str, object]] = [
        {"name": "plain", "command": ["true"]},
        {"name": "neural", "command": ["true"], "num_cpus": 1, "num_gpus": 0.25, "memory": 1e9},
        {"name": "other", "command": ["true"]},
    ]
    config = _config(tmp_path, entrants, executor="ray", parallel=2)
    assert worker_resources(config) == {"num_cpus": 4.0, "num_gpus": 0.5, "memory": 2e9}
    plain = [entrants[0], entrants[2], {"name": "third", "command": ["true"]}]
    assert worker_resources(_config(tmp_path, plain)) == {"num_cpus": 1.0}
    with pytest.raises(TournamentError, match="num_gpus must be a number, 0 or more"):
        _config(tmp_path, [*plain, {"name": "x", "command": ["true"], "num_gpus": -1}])


def test_web_pages_beside_a_ray_tournament_are_refused_with_the_web_verb_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tables in progress are on the workers: --web names what to run instead."""
    from wizard_arena.cli import main
    from wizard_referee.referee import logs

    # (the process's logging is left alone: the command would point structlog at this
    # test's runner.log, closed, for every later test of the worker)
    monkeypatch.setattr(logs, "configure_logging", lambda *a, **k: None)

    toml = tmp_path / "t.toml"
    toml.write_text(
        '[tournament]\nplayers = 3\nexecutor = "ray"\ndatabase = "t.sqlite"\n'
        + "".join(f'[[entrant]]\nname = "c{i}"\ncommand = ["true"]\n' for i in range(3))
    )
    assert main(["tournament", str(toml), "--web", "0"]) == 2
    err = capsys.readouterr().err
    assert "--web shows the tables of the local executor's referee" in err
    assert "wizard-arena web --database" in err
    assert not (tmp_path / "t.sqlite").exists()


def test_a_worker_whose_entrants_cannot_start_plays_their_seats_as_faults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entrant that never connects on a worker costs only its own seats,
    as in a local run: the worker is ready, and its games are played by the
    default action, each seat recorded as ``crash`` ("never connected")."""
    from wizard_referee.cluster import workers
    from wizard_referee.cluster.workers import HostWorker
    from wizard_referee.tournament.store import GameSpec

    # (which Ray node this is: asking would start a Ray runtime, 18 s here)
    monkeypatch.setattr(workers, "where", lambda: {"host": "here"})

    entrants: list[dict[str, object]] = [{"name": f"c{i}", "command": ["false"]} for i in range(3)]
    config = _config(tmp_path, entrants, executor="ray", round_sizes=[1])
    worker = HostWorker(config.hosting(), config.name, "secret", 0, str(tmp_path / "logs"), "")
    info = worker.ready()
    assert "error" not in info, info
    record = worker.play(GameSpec("g0", 0, 0, 0, 0, "7", ("c0", "c1", "c2")), {})
    assert record.status == "finished"
    assert (
        record.fault_details == [{"crash": "never connected: its process exited with status 1"}] * 3
    )


# -- joining a cluster: one line within a bounded time, nothing written ---------------------


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("verb", ["tournament", "compare"])
def test_an_address_where_no_cluster_answers_is_one_line_and_writes_nothing(
    verb: str, tmp_path: Path
) -> None:
    """No Ray is started: the address is checked (a TCP connection, at most
    CONNECT_TIMEOUT seconds) before the results store is created. It used to
    hang (killed at 200 s), and ``auto`` with no cluster gave a 49-line
    traceback."""
    import subprocess
    import time

    from wizard_referee.cluster.connect import CONNECT_TIMEOUT

    db = tmp_path / "t.sqlite"
    bot = "wizard_bots.random_bot:RandomBot"
    if verb == "tournament":
        toml = tmp_path / "t.toml"
        toml.write_text(
            f'[tournament]\nplayers = 3\ndatabase = "{db}"\n'
            + "".join(
                f'\n[[entrant]]\nname = "r{i}"\ncommand = "python -m wizard_arena.cli bot {bot} '
                '--server {server} --token {token}"\n'
                for i in range(3)
            )
        )
        base = ["tournament", str(toml), "--executor", "ray"]
    else:
        base = ["compare", bot, bot, "--executor", "ray", "--database", str(db)]
    for address, said in (
        (f"127.0.0.1:{_closed_port()}", "no Ray cluster answers at 127.0.0.1:"),
        (f"ray://127.0.0.1:{_closed_port()}", "no Ray cluster answers at ray://127.0.0.1:"),
        ("auto", "no Ray cluster"),
        ("nonsense", "give HOST:PORT"),
    ):
        started = time.monotonic()
        res = subprocess.run(
            [sys.executable, "-m", "wizard_arena.cli", *base, "--ray-address", address],
            capture_output=True,
            text=True,
            timeout=scaled(120),
            cwd=tmp_path,
        )
        assert res.returncode == 2, res.stdout + res.stderr
        assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
        assert said in res.stderr, res.stderr
        assert not db.exists()
        assert time.monotonic() - started < 30 + CONNECT_TIMEOUT


def test_compare_on_ray_says_how_its_workers_play(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Ray workers play one game at a time each: --parallel (games at once on
    this machine) is refused with --executor ray, not silently ignored."""
    from .cli_here import cli_here

    bot = "wizard_bots.random_bot:RandomBot"
    ran = cli_here(
        ["compare", bot, bot, "--executor", "ray", "--parallel", "7"], capsys, monkeypatch, tmp_path
    )
    assert ran.returncode == 2
    assert "with --executor ray each Ray worker plays one game at a time" in ran.stderr
    assert not (tmp_path / "compare.sqlite").exists()
    helped = cli_here(["compare", "--help"], capsys, monkeypatch, tmp_path)
    text = " ".join(helped.stdout.split())
    assert "Ray workers, each playing one game at a time" in text


def test_the_coordinator_matches_object_refs_by_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray Client (ray://) hands back new reference objects for the same
    objects from ray.wait: a worker's ready signal and its games are found by
    equality, not identity (the coordinator waited 120 s for a worker that
    was ready, then gave up)."""
    from wizard_referee.cluster import coordinator as coord

    class Ref:
        def __init__(self, key: str) -> None:
            self.key = key

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Ref) and other.key == self.key

        def __hash__(self) -> int:
            return hash(self.key)

    values = {"ready": {"ip": "127.0.0.1", "node": "n" * 20}, "game": "the record"}
    monkeypatch.setattr(coord.ray, "get", lambda ref: values[ref.key])

    class Log:
        def info(self, *args: object, **kw: object) -> None:
            pass

    c: coord.Coordinator[str] = coord.Coordinator(
        lambda i: object(), lambda a, item: Ref("game"), str, 1, 1, print, Log()
    )
    worker = coord.Worker(0, object(), Ref("ready"))
    c.pool.append(worker)
    c._arrived(Ref("ready"), lambda *a: None)  # a copy, as Ray Client returns it
    assert worker.info == values["ready"]
    worker.running[Ref("game")] = "g1"
    got: list[object] = []
    c._arrived(Ref("game"), lambda item, record, w: got.append((item, record)))
    assert got == [("g1", "the record")] and not worker.running


def test_ray_started_here_again_after_its_node_timed_out(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ray gives a node it starts a fixed 30 s to register, which a busy
    machine can miss: starting Ray here is tried again (three times in all),
    joining a given address or any other failure is not."""
    pytest.importorskip("ray")
    from wizard_referee.cluster import connect

    timed_out = RuntimeError(
        "The current node timed out during startup. This could happen because some of "
        "the raylet failed to startup or the GCS has become overloaded."
    )
    calls: list[dict[str, object]] = []

    def failing(times: int, error: Exception) -> object:
        def init(**settings: object) -> None:
            calls.append(settings)
            if len(calls) <= times:
                raise error

        return init

    monkeypatch.setattr(connect.ray, "shutdown", lambda: None)
    monkeypatch.setattr(connect.ray, "init", failing(2, timed_out))
    connect.init_ray({"address": "local"}, "")
    assert len(calls) == 3
    err = capsys.readouterr().err
    assert "try 1 of 3" in err and "try 2 of 3" in err
    calls.clear()
    monkeypatch.setattr(connect.ray, "init", failing(3, timed_out))
    with pytest.raises(connect.RayConnectError, match="timed out during startup"):
        connect.init_ray({"address": "local"}, "")
    assert len(calls) == 3
    for address, error in (("10.0.0.9:6379", timed_out), ("", ValueError("bad settings"))):
        calls.clear()
        monkeypatch.setattr(connect.ray, "init", failing(1, error))
        with pytest.raises(connect.RayConnectError):
            connect.init_ray({"address": address or "local"}, address)
        assert len(calls) == 1, address
