"""Referee server over real gRPC on loopback: throughput, latency and CPU, against a floor.

    python bench/bench_server.py                      # both scenarios, arena and floors
    python bench/bench_server.py --scenario fast      # 16 bots, no think time
    python bench/bench_server.py --scenario think     # 256 bots thinking 100 ms each

Each run starts, per scenario and server kind, one server process and one
bots process (all bots of the scenario as grpc.aio clients in one asyncio
loop), so on a 2-core machine the server has a core of its own. Servers:

- ``arena``: the real ``wizard-arena serve`` (4 players, move time 5 s,
  ``--reseat-delay 0``: no pause between a table's games, as the floors
  have none; ``--log-level warning``: per-decision info lines are not
  written).
- ``floor-table``: a plain grpc.aio server with the same service, the same
  messages (a real mid-game DecisionRequest, CardPlayed events) and the same
  pattern per decision (one action in; the event to all 4 seats and the next
  request out; one decision in flight per table of 4) but no trio, no bridge,
  no rules: what the transport alone costs for this traffic.
- ``floor-bridge``: the ``floor-table`` traffic, with the table logic in
  trio on the main thread and every message crossing the referee's own
  bridge (:mod:`wizard_referee.referee.bridge`): the floor of the architecture the
  referee uses, before any rule is applied.
- ``floor-pingpong``: the same server answering every action at once with a
  DecisionRequest on the same stream (1 message in, 1 out; every bot has a
  decision in flight).

Figures, all measured by the bots over a window after a warm-up (one clock:
the bots share a process):

- decisions/s: DecisionRequests received in the window whose table had
  answered a previous one (one per decision made);
- cycle: from one DecisionRequest arriving at a table's bot to the next
  arriving at that table (any seat) = think time + added latency;
- added: from a bot sending its action to the next DecisionRequest of the
  table arriving = everything but the bot's think time (server work, both
  loopback hops, the client's gRPC receive path);
- server CPU/decision: user+system CPU time of the server process (all its
  threads, from /proc) over the window / decisions; client CPU is printed
  too, to show when the bots process, not the server, was the limit;
- server CPU by thread: the same per thread of the server process (main
  thread, other Python threads in start order, gRPC core's threads by name).

Linux only (reads /proc/PID/stat).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

import wizard_arena.protocol.wire as wire
from wizard_arena.protocol.messages import (
    ActionMsg,
    DecisionRequest,
    Hello,
)
from wizard_referee.stats import percentile

PLAYERS = 4
SCENARIOS = {
    # name: (bots, think seconds, warm-up seconds, window seconds)
    "fast": (16, 0.0, 3.0, 15.0),
    "think": (256, 0.1, 6.0, 20.0),
}
KINDS = ("arena", "floor-bridge", "floor-table", "floor-pingpong")
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def thread_cpu(pid: int) -> dict[str, float]:
    """User + system CPU seconds of each thread of process ``pid``, by name.

    The main thread is ``main``; other Python threads (named ``python`` by
    the OS) are numbered in start order (``python#1``, ...: in the referee
    the grpc-aio thread, then grpc's completion-queue poller); grpc's own
    threads (``event_engine``, ...) are summed per name."""
    out: dict[str, float] = {}
    tasks = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    python = 0
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                comm, rest = f.read().split(" (", 1)[1].rsplit(")", 1)
        except OSError:
            continue
        fields = rest.split()
        cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK
        if tid == pid:
            name = "main"
        elif comm.startswith("python"):
            python += 1
            name = f"python#{python}"
        else:
            name = comm
        out[name] = out.get(name, 0.0) + cpu
    return out


# -- canned messages of a real game (for the floor) ----------------------------------


@dataclass
class Stats:
    measuring: bool = False
    last_recv: dict[str, float] = field(default_factory=dict)
    last_send: dict[str, float] = field(default_factory=dict)
    cycles: list[float] = field(default_factory=list)
    added: list[float] = field(default_factory=list)
    thinks: list[float] = field(default_factory=list)
    decisions: int = 0
    welcomed: int = 0
    errors: list[str] = field(default_factory=list)

    def on_request(self, table: str, now: float) -> None:
        prev_recv = self.last_recv.get(table)
        prev_send = self.last_send.get(table)
        self.last_recv[table] = now
        if self.measuring and prev_recv is not None and prev_send is not None:
            self.decisions += 1
            self.cycles.append(now - prev_recv)
            self.added.append(now - prev_send)

    def on_send(self, table: str, received: float, now: float) -> None:
        self.last_send[table] = now
        if self.measuring:
            self.thinks.append(now - received)


async def run_bot(number: int, address: str, think: float, stats: Stats) -> None:
    rng = random.Random(number)
    out: deque[Any] = deque()
    ready = asyncio.Event()

    async def outgoing() -> AsyncIterator[Any]:
        yield wire.encode_bot(Hello(f"bench-{number}", sdk_name="bench"))
        while True:
            await ready.wait()
            ready.clear()
            while out:
                yield out.popleft()

    async def answer(raw: Any, received: float) -> None:
        msg = wire.decode_server(raw)
        assert isinstance(msg, DecisionRequest)
        action = rng.choice(msg.view.legal_actions)
        if think:
            await asyncio.sleep(think)
        now = time.perf_counter()
        stats.on_send(msg.game_id, received, now)
        out.append(wire.encode_bot(ActionMsg(msg.request_id, action)))
        ready.set()

    async with grpc.aio.insecure_channel(address) as channel:
        call = wire.stub(channel).Play(outgoing())
        tasks: set[asyncio.Task[None]] = set()
        try:
            async for raw in call:
                kind = raw.WhichOneof("message")
                if kind == "decision_request":
                    now = time.perf_counter()
                    stats.on_request(raw.decision_request.game_id, now)
                    if think:
                        task = asyncio.ensure_future(answer(raw, now))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                    else:
                        await answer(raw, now)
                elif kind == "welcome":
                    stats.welcomed += 1
        except grpc.aio.AioRpcError as e:
            if e.code() != grpc.StatusCode.CANCELLED:
                stats.errors.append(f"bot {number}: {e.code().name} {e.details()}")


async def run_bots(args: argparse.Namespace) -> dict[str, Any]:
    stats = Stats()
    tasks = [
        asyncio.ensure_future(run_bot(i, args.address, args.think, stats)) for i in range(args.bots)
    ]
    end = time.monotonic() + 30
    while stats.welcomed < args.bots and time.monotonic() < end:
        await asyncio.sleep(0.05)
    await asyncio.sleep(args.warmup)
    stats.measuring = True
    t0, s0, c0 = time.perf_counter(), proc_cpu(args.server_pid), time.process_time()
    th0 = thread_cpu(args.server_pid)
    await asyncio.sleep(args.window)
    t1, s1, c1 = time.perf_counter(), proc_cpu(args.server_pid), time.process_time()
    th1 = thread_cpu(args.server_pid)
    stats.measuring = False
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    elapsed = t1 - t0
    d = max(stats.decisions, 1)

    def pct(xs: list[float], q: float) -> float:
        return percentile(xs, q / 100) * 1000

    return {
        "bots": args.bots,
        "welcomed": stats.welcomed,
        "think_ms": args.think * 1000,
        "window_s": round(elapsed, 3),
        "decisions": stats.decisions,
        "decisions_per_s": stats.decisions / elapsed,
        "cycle_p50_ms": pct(stats.cycles, 50),
        "cycle_p99_ms": pct(stats.cycles, 99),
        "added_p50_ms": pct(stats.added, 50),
        "added_p99_ms": pct(stats.added, 99),
        "think_p50_ms": pct(stats.thinks, 50),
        "server_cpu_us_per_decision": (s1 - s0) / d * 1e6,
        "server_cpu_util": (s1 - s0) / elapsed,
        "client_cpu_util": (c1 - c0) / elapsed,
        "server_thread_cpu_us_per_decision": {
            name: round((cpu - th0.get(name, 0.0)) / d * 1e6)
            for name, cpu in sorted(th1.items())
            if cpu - th0.get(name, 0.0) > 0
        },
        "errors": stats.errors[:5],
    }


# -- the orchestrator ---------------------------------------------------------------------


class ServerProcess:
    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.lines: deque[str] = deque(maxlen=50)
        assert self.proc.stderr is not None
        self.address = ""
        for line in self.proc.stderr:
            self.lines.append(line.rstrip())
            if " serving on " in line:
                self.address = line.split(" serving on ", 1)[1].split()[0]
                break
        if not self.address:
            raise RuntimeError("server did not start:\n" + "\n".join(self.lines))
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip())

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def server_argv(kind: str) -> list[str]:
    if kind == "arena":
        return [
            sys.executable,
            "-m",
            "wizard_arena.cli",
            "serve",
            "--port",
            "0",
            "--players",
            str(PLAYERS),
            "--move-time",
            "5",
            "--seed",
            "1",
            "--reseat-delay",
            "0",
            "--log-level",
            "warning",
            "--log-format",
            "json",
        ]
    mode = kind.split("-", 1)[1]
    floors = str(Path(__file__).with_name("floor_servers.py"))
    return [sys.executable, floors, "--mode", mode, "--players", str(PLAYERS)]


def measure(kind: str, scenario: str) -> dict[str, Any]:
    bots, think, warmup, window = SCENARIOS[scenario]
    server = ServerProcess(server_argv(kind))
    try:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "bots",
                "--address",
                server.address,
                "--server-pid",
                str(server.proc.pid),
                "--bots",
                str(bots),
                "--think",
                str(think),
                "--warmup",
                str(warmup),
                "--window",
                str(window),
            ],
            capture_output=True,
            text=True,
            timeout=warmup + window + 120,
        )
    finally:
        server.stop()
    if out.returncode != 0:
        raise RuntimeError(f"bots process failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["kind"] = kind
    result["scenario"] = scenario
    result["loadavg_1m"] = os.getloadavg()[0]
    return result


def report(results: list[dict[str, Any]]) -> None:
    head = (
        f"{'scenario':<8} {'server':<15} {'bots':>5} {'think':>6} {'dec/s':>8} "
        f"{'cycle p50':>10} {'cycle p99':>10} {'added p50':>10} {'added p99':>10} "
        f"{'srv CPU/dec':>12} {'srv CPU':>8} {'bots CPU':>9}"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        print(
            f"{r['scenario']:<8} {r['kind']:<15} {r['bots']:>5} {r['think_ms']:>4.0f}ms "
            f"{r['decisions_per_s']:>8,.0f} {r['cycle_p50_ms']:>8.2f}ms "
            f"{r['cycle_p99_ms']:>8.2f}ms {r['added_p50_ms']:>8.2f}ms "
            f"{r['added_p99_ms']:>8.2f}ms {r['server_cpu_us_per_decision']:>10.0f}us "
            f"{r['server_cpu_util']:>7.0%} {r['client_cpu_util']:>8.0%}"
        )
        threads = ", ".join(
            f"{name} {us}" for name, us in r.get("server_thread_cpu_us_per_decision", {}).items()
        )
        if threads:
            print(f"    server CPU by thread, us/decision: {threads}")
        for e in r["errors"]:
            print(f"    error: {e}")
    by = {(r["scenario"], r["kind"]): r for r in results}
    print()
    for scenario in SCENARIOS:
        arena = by.get((scenario, "arena"))
        if arena is None:
            continue
        for floor in ("floor-bridge", "floor-table", "floor-pingpong"):
            f = by.get((scenario, floor))
            if f is not None:
                ratio = arena["decisions_per_s"] / f["decisions_per_s"]
                print(f"{scenario}: arena throughput = {ratio:.2f} x {floor}")
        print(
            f"{scenario}: arena added latency p99 = {arena['added_p99_ms']:.2f} ms, "
            f"server CPU {arena['server_cpu_us_per_decision']:.0f} us/decision"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="role")
    run = sub.add_parser("run", help="(default) run the scenarios and print the figures")
    for p in (ap, run):
        p.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
        p.add_argument("--kinds", default=",".join(KINDS), help="comma-separated server kinds")
        p.add_argument("--json", action="store_true", help="also print the raw results as JSON")
    bt = sub.add_parser("bots", help="(internal) run the bots and print JSON")
    bt.add_argument("--address", required=True)
    bt.add_argument("--server-pid", type=int, required=True)
    bt.add_argument("--bots", type=int, default=16)
    bt.add_argument("--think", type=float, default=0.0)
    bt.add_argument("--warmup", type=float, default=3.0)
    bt.add_argument("--window", type=float, default=10.0)
    args = ap.parse_args()
    if args.role == "bots":
        print(json.dumps(asyncio.run(run_bots(args))))
        return
    scenarios = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    kinds = [k for k in args.kinds.split(",") if k]
    print(
        f"bench_server: {time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()} cores, "
        f"python {sys.version.split()[0]}, grpcio {grpc.__version__}; "
        "arena runs with --log-level warning",
        flush=True,
    )
    results = []
    for scenario in scenarios:
        for kind in kinds:
            r = measure(kind, scenario)
            results.append(r)
            print(
                f"  {scenario:<6} {kind:<15} {r['decisions_per_s']:>8,.0f} decisions/s "
                f"(load average {r['loadavg_1m']:.1f} at the end)",
                flush=True,
            )
    print()
    report(results)
    if args.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
