"""Soak test: hundreds of bots, some misbehaving, against one referee for a bounded time.

    python bench/bench_soak.py                         # 200 bots for 60 s
    python bench/bench_soak.py --bots 100 --seconds 20 --misbehaving 0.3

One ``wizard-arena serve`` subprocess (JSON log at level info: the bench
reads every ``decision``, ``fault``, ``game_over`` and ``refused`` event from
it) and a few worker subprocesses sharing the bots between them, so the
bots' CPU does not take the server's GIL. Most bots are example SDK bots
(random and heuristic, played by ``serve_bot`` under trio); a share
(``--misbehaving``) are the misbehaving kit's bots
(:mod:`wizard_bots.misbehaving`: the slow one is an SDK bot, the others raw
clients), spread evenly over its kinds and misbehaving at the kit's default
rates. Bots that are cut off or refused connect again.

After ``--seconds`` the workers stop their bots (cancelled mid-game: those
disconnects come after the window and are not counted) and exit; the bench
reports, over the window:

- games finished, decisions, faults by code, hellos refused, table errors;
- decision latency p50/p99/max as the referee recorded it (the ``ms`` of
  each ``decision`` event: from sending the request to receiving the
  answer), over answered decisions (not timeouts or defaults);
- the server's memory: VmRSS from ``/proc/PID/status`` when it is up
  (before any bot), at its peak, at the end of the window, and once the bots
  have gone.

Everything is on loopback, every loop is bounded, and the bench stops by
itself (workers and server are killed if they overrun their deadlines).
Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from wizard_bots.misbehaving import CLIENTS, KINDS, RawClient, SlowBot
from wizard_referee.stats import percentile

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_process import rss_kib, start_serve

SDK_KINDS = ("random", "heuristic")


# -- the server and what its log says ---------------------------------------------------------


@dataclass
class ServerLog:
    """Counts from the server's JSON log, while ``counting``."""

    counting: bool = False
    decisions: int = 0
    answered_ms: list[float] = field(default_factory=list)
    move_faults: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    faults_by_kind: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(bot kind, fault code): the kind is the bot's name up to its last '-'."""
    games: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    sessions: int = 0
    errors: list[str] = field(default_factory=list)
    other_lines: deque[str] = field(default_factory=lambda: deque(maxlen=20))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def line(self, text: str) -> None:
        try:
            ev = json.loads(text)
        except ValueError:
            self.other_lines.append(text.rstrip())
            return
        if not isinstance(ev, dict):
            return
        name = ev.get("event")
        with self.lock:
            if ev.get("level") in ("error", "critical") or name in (
                "table_failed",
                "table_aborted",
            ):
                self.errors.append(text.rstrip()[:500])
            if not self.counting:
                return
            if name == "decision":
                self.decisions += 1
                fault = ev.get("fault")
                if fault is None:
                    self.answered_ms.append(float(ev.get("ms", 0.0)))
                else:
                    self.move_faults[fault] += 1
            elif name == "fault":
                code = str(ev.get("code"))
                self.faults[code] += 1
                self.faults_by_kind[str(ev.get("bot", "?")).rpartition("-")[0], code] += 1
            elif name == "game_over":
                self.games += 1
            elif name == "refused":
                self.refused[str(ev.get("reason"))] += 1
            elif name == "session":
                self.sessions += 1


class Server:
    def __init__(self, players: int, move_time: float) -> None:
        argv = [
            sys.executable,
            "-m",
            "wizard_arena.cli",
            "serve",
            "--port",
            "0",
            "--players",
            str(players),
            "--move-time",
            str(move_time),
            "--log-level",
            "info",
            "--log-format",
            "json",
        ]
        self.log = ServerLog()
        try:
            self.proc, self.address = start_serve(argv, on_line=self.log.line)
        except RuntimeError:
            raise RuntimeError(
                "the server did not start: " + "\n".join(self.log.other_lines)
            ) from None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.line(line)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._reader.join(5)
        return code


class RssSampler:
    def __init__(self, pid: int, interval: float = 0.5) -> None:
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, rss_kib(self.pid))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


# -- the workers ------------------------------------------------------------------------------


def plan_bots(count: int, misbehaving: float, seed: int) -> list[tuple[str, str]]:
    """(kind, name) of each bot: the misbehaving share spread evenly over the kit's
    kinds, the rest alternately random and heuristic; shuffled."""
    bad = round(count * misbehaving)
    kinds = list(KINDS)
    plan = [(kinds[i % len(kinds)], f"{kinds[i % len(kinds)]}-{i}") for i in range(bad)]
    plan += [(SDK_KINDS[i % 2], f"{SDK_KINDS[i % 2]}-{i}") for i in range(count - bad)]
    random.Random(seed).shuffle(plan)
    return plan


def _sdk_bot(kind: str, seed: int) -> Any:
    if kind == "random":
        from wizard_bots.random_bot import RandomBot

        return RandomBot(seed=seed)
    if kind == "heuristic":
        from wizard_bots.heuristic import HeuristicBot

        return HeuristicBot()
    if kind == "slow":
        return SlowBot(seed=seed)
    raise ValueError(kind)


async def _sdk_bots(server: str, bots: list[tuple[str, str]], seconds: float) -> Counter[str]:
    import trio

    from wizard_arena.client import ArenaError, serve_bot

    ended: Counter[str] = Counter()

    async def one(kind: str, name: str, seed: int) -> None:
        try:
            await serve_bot(_sdk_bot(kind, seed), server, name=name, reconnect_timeout=10.0)
            ended["server ended the stream"] += 1
        except ArenaError as e:
            ended[f"{type(e).__name__} {e.code}"] += 1

    async with trio.open_nursery() as nursery:
        for i, (kind, name) in enumerate(bots):
            nursery.start_soon(one, kind, name, i)
        await trio.sleep(seconds)
        nursery.cancel_scope.cancel()
    return ended


def worker(spec: dict[str, Any]) -> dict[str, Any]:
    """Run ``spec["bots"]`` against ``spec["server"]`` for ``spec["seconds"]``."""
    import trio

    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    logging.getLogger("wizard_arena.client").setLevel(logging.CRITICAL)
    server, seconds = spec["server"], float(spec["seconds"])
    bots = [tuple(b) for b in spec["bots"]]
    raw: list[RawClient] = []
    for i, (kind, name) in enumerate(bots):
        if kind in CLIENTS:
            raw.append(CLIENTS[kind](server, name, seed=spec["seed"] * 10_000 + i).start())
    sdk = [(k, n) for k, n in bots if k not in CLIENTS]
    ended = trio.run(partial(_sdk_bots, server, sdk, seconds))
    for c in raw:
        c.stop()
    summary: dict[str, Any] = {"sdk_ended": dict(ended), "kit": {}}
    for c in raw:
        try:
            r = c.join(10)
        except TimeoutError:
            summary.setdefault("stuck", []).append(c.name)
            continue
        k = summary["kit"].setdefault(
            r.kind, {"bots": 0, "games": 0, "left": 0, "refused": 0, "misbehaved": 0}
        )
        k["bots"] += 1
        k["games"] += r.games
        k["left"] += r.cut
        k["refused"] += r.refused
        k["misbehaved"] += r.misbehaved
    return summary


# -- the bench ------------------------------------------------------------------------------


def soak(args: argparse.Namespace) -> dict[str, Any]:
    server = Server(args.players, args.move_time)
    pid = server.proc.pid
    time.sleep(min(1.0, args.settle))
    rss_start = rss_kib(pid)
    sampler = RssSampler(pid)
    plan = plan_bots(args.bots, args.misbehaving, args.seed)
    shares = [plan[i :: args.workers] for i in range(args.workers)]
    tmp = tempfile.TemporaryDirectory(prefix="wizard-soak-")
    workers = []
    try:
        server.log.counting = True
        t0 = time.monotonic()
        cpu0 = _cpu(pid)
        for w, share in enumerate(shares):
            workers.append(_start_worker(w, share, server.address, args.seconds, Path(tmp.name)))
        time.sleep(args.seconds)
        server.log.counting = False
        elapsed = time.monotonic() - t0
        cpu1 = _cpu(pid)
        rss_end = rss_kib(pid)
        outs = [_collect_worker(proc, err) for proc, err in workers]
        time.sleep(args.settle)  # the server drops the last sessions and their tables
        rss_after = rss_kib(pid)
        sampler.stop()
        code = server.stop()
        worker_logs = {
            p.name: p.read_text(errors="replace")[-2000:]
            for p in Path(tmp.name).glob("worker-*.log")
            if p.stat().st_size
        }
    finally:
        for proc, _ in workers:
            if proc.poll() is None:
                proc.kill()
        if server.proc.poll() is None:
            server.proc.kill()
        tmp.cleanup()
    window = {"elapsed": elapsed, "cpu": cpu1 - cpu0, "rss": (rss_start, rss_end, rss_after)}
    return _summary(args, plan, server.log, outs, window, sampler.peak, code, worker_logs)


def _start_worker(
    w: int, share: list[tuple[str, str]], address: str, seconds: float, folder: Path
) -> tuple[subprocess.Popen[str], Any]:
    """Worker process ``w`` playing ``share`` of the bots (its stderr to a file)."""
    spec = {"server": address, "seconds": seconds, "bots": share, "seed": w}
    err = open(folder / f"worker-{w}.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, __file__, "--worker", json.dumps(spec)],
        stdout=subprocess.PIPE,
        stderr=err,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    return proc, err


def _collect_worker(proc: subprocess.Popen[str], err: Any) -> dict[str, Any]:
    """A worker's JSON result (or why there is none)."""
    try:
        out, _ = proc.communicate(timeout=60)
        return json.loads(out) if out.strip() else {"error": proc.returncode}
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"error": "killed after 60 s"}
    finally:
        err.close()


def _summary(
    args: argparse.Namespace,
    plan: list[tuple[str, str]],
    log: ServerLog,
    outs: list[dict[str, Any]],
    window: dict[str, Any],
    peak: int,
    code: int | None,
    worker_logs: dict[str, str],
) -> dict[str, Any]:
    """The soak's figures, from the server's log and the workers' results."""
    elapsed = window["elapsed"]
    rss_start, rss_end, rss_after = window["rss"]
    kit: dict[str, Counter[str]] = {}
    sdk_ended: Counter[str] = Counter()
    for o in outs:
        sdk_ended.update(o.get("sdk_ended", {}))
        kinds: dict[str, dict[str, int]] = o.get("kit", {})
        for kind, k in kinds.items():
            kit.setdefault(kind, Counter()).update(k)
    ms = log.answered_ms
    return {
        "bots": args.bots,
        "misbehaving_bots": sum(1 for k, _ in plan if k in KINDS),
        "workers": args.workers,
        "players": args.players,
        "move_time": args.move_time,
        "window_s": round(elapsed, 1),
        "games_finished": log.games,
        "decisions": log.decisions,
        "decisions_per_s": round(log.decisions / elapsed, 1),
        "faults": dict(log.faults.most_common()),
        "faults_by_bot_kind": {
            kind: {c: n for (k, c), n in sorted(log.faults_by_kind.items()) if k == kind}
            for kind in sorted({k for k, _ in log.faults_by_kind})
        },
        "defaulted_moves": dict(log.move_faults.most_common()),
        "hellos_refused": dict(log.refused),
        "sessions": log.sessions,
        "latency_ms": {
            "p50": round(percentile(ms, 0.5), 2),
            "p99": round(percentile(ms, 0.99), 2),
            "max": round(max(ms), 2) if ms else math.nan,
        },
        "server_cpu_util": round(window["cpu"] / elapsed, 2),
        "rss_mib": {
            "start": round(rss_start / 1024, 1),
            "peak": round(max(peak, rss_end) / 1024, 1),
            "end_of_window": round(rss_end / 1024, 1),
            "after_bots_left": round(rss_after / 1024, 1),
        },
        "server_errors": log.errors[:5],
        "server_exit": code,
        "kit": {k: dict(v) for k, v in sorted(kit.items())},
        "sdk_bots_ended": dict(sdk_ended),
        "worker_problems": [o for o in outs if "error" in o or o.get("stuck")],
        "worker_logs": worker_logs,
        "load_average": os.getloadavg(),
    }


def _cpu(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def format_result(r: dict[str, Any]) -> str:
    lat, rss = r["latency_ms"], r["rss_mib"]
    faults = ", ".join(f"{k} {v}" for k, v in r["faults"].items()) or "none"
    kit = "; ".join(
        f"{k}: {v['bots']} bots, {v['games']} games, {v['left']} left, "
        f"{v['refused']} refused, misbehaved {v['misbehaved']}"
        for k, v in r["kit"].items()
    )
    lines = [
        f"bots {r['bots']} ({r['misbehaving_bots']} misbehaving) in {r['workers']} workers; "
        f"tables of {r['players']}, move time {r['move_time']:g} s; window {r['window_s']} s",
        f"games finished {r['games_finished']}; decisions {r['decisions']} "
        f"({r['decisions_per_s']}/s); sessions {r['sessions']}; "
        f"server CPU {r['server_cpu_util']:.0%} of a core",
        f"faults: {faults}",
        "faults by bot kind: "
        + "; ".join(
            f"{k}: " + ", ".join(f"{c} {n}" for c, n in v.items())
            for k, v in r["faults_by_bot_kind"].items()
        ),
        f"defaulted moves: {r['defaulted_moves']}; hellos refused: {r['hellos_refused']}",
        f"decision latency (answered): p50 {lat['p50']} ms, p99 {lat['p99']} ms, "
        f"max {lat['max']} ms",
        f"server RSS MiB: start {rss['start']}, peak {rss['peak']}, end of window "
        f"{rss['end_of_window']}, after the bots left {rss['after_bots_left']}",
        f"server errors: {len(r['server_errors'])}; server exit status {r['server_exit']}",
        f"kit (bots' own counts, including after the window): {kit}",
        f"SDK bots ended: {r['sdk_bots_ended'] or 'all cancelled at the end'}",
        "load average: " + " ".join(f"{x:.2f}" for x in r["load_average"]),
    ]
    if r["worker_problems"]:
        lines.append(f"worker problems: {r['worker_problems']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--bots", type=int, default=200)
    p.add_argument("--seconds", type=float, default=60.0, help="the window (default 60)")
    p.add_argument("--workers", type=int, default=3, help="bot processes (default 3)")
    p.add_argument(
        "--misbehaving", type=float, default=0.15, help="share of misbehaving bots (default 0.15)"
    )
    p.add_argument("--players", type=int, default=4, choices=range(3, 7))
    p.add_argument("--move-time", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--settle",
        type=float,
        default=3.0,
        help="seconds for the server to drop the last sessions before the last RSS sample "
        "(default 3; the first sample waits min(1, SETTLE) after the server is up)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    if args.bots < 1 or args.workers < 1 or args.seconds <= 0 or args.settle < 0:
        p.error("--bots, --workers and --seconds must be positive, --settle not negative")
    result = soak(args)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(format_result(result))
        for name, text in result["worker_logs"].items():
            print(f"--- {name} (tail) ---\n{text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
