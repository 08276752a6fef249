"""Referee server over real gRPC on loopback: throughput, latency and CPU, against a floor.

    python bench/bench_server.py                      # 3 sets: both scenarios, arena and floors
    python bench/bench_server.py --sets 1 --scenario fast   # 16 bots, no think time
    python bench/bench_server.py --scenario think     # 256 bots thinking 100 ms each
    python bench/bench_server.py --kinds arena-lean,floor-table --sets 5

It ends with a SUMMARY: the ratios the targets are set in (docs/performance.md),
per set and as the median of the sets, with the machine's load average.
Within a set the servers run one after the other (alternated), so that a
change of load hits every kind alike.

Each run starts, per scenario and server kind, one server process and one
bots process (all bots of the scenario as grpc.aio clients in one asyncio
loop), so on a 2-core machine the server has a core of its own. Servers:

- ``arena``: the real ``wizard-arena serve`` (4 players, move time 5 s,
  ``--reseat-delay 0``: no pause between a table's games, as the floors
  have none; ``--log-level warning``: per-decision info lines are not
  written), its bots on every event (``Hello.event_stream`` unset, as v1.0).
- ``arena-lean``: the same server, its bots on the lean stream
  (``EVENT_STREAM_LEAN``, protocol v1.1: about one message per decision).
- ``arena-lean-probes`` (only with ``--kinds``): ``arena-lean`` with bots
  that also ask for clock probes (``Hello.clock_probes``, protocol v1.2, as
  the Python SDK's bots do) and answer each at once: what the network
  credit's probes cost per decision.
- ``floor-table``: a plain grpc.aio server with the same service, the same
  messages (a real mid-game DecisionRequest, CardPlayed events) and the same
  pattern per decision (one action in; the event to all 4 seats and the next
  request out; one decision in flight per table of 4) but no trio, no bridge,
  no rules: what the transport alone costs for this traffic.
- ``floor-bridge``: the ``floor-table`` traffic, with the table logic in
  trio on the main thread and every message crossing the referee's own
  bridge (:mod:`wizard_referee.referee.bridge`), on the referee's transport
  settings (grpc core's listener, :mod:`wizard_referee.referee.grpc_setup`):
  the floor of the architecture the referee uses, before any rule is applied.
- ``floor-pingpong``: the same server answering every action at once with a
  DecisionRequest on the same stream (1 message in, 1 out; every bot has a
  decision in flight).
- ``floor-table-lean`` and ``floor-bridge-lean`` (only with ``--kinds``):
  ``floor-table`` and ``floor-bridge`` with the lean stream's traffic, the
  next request alone and no event (1 message in, 1 out, one decision in
  flight per table): what the transport, and the architecture, cost for
  the traffic ``arena-lean`` has, before any rule.

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
  thread, other Python threads in start order, gRPC core's threads by name);
- msgs/dec: messages the bots received per decision;
- the tail (arena kinds and floor-table): every server runs under
  ``traced_serve.py``, which logs its garbage collections on the bots'
  clock; the decisions at or above p99 are split into those whose action
  waited through a full (generation 2) collection, those that start a new
  round at their table (the round's scoring, deal and bid requests), and
  the rest; and p99 is shown again without the decisions that waited
  through a full collection (``server_report.py``).

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
import tempfile
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
    ClockProbeReply,
    DecisionRequest,
    EventStream,
    Hello,
)
from wizard_referee.stats import percentile

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_report import report, summary, tail  # (beside this file)

PLAYERS = 4
SCENARIOS = {
    # name: (bots, think seconds, warm-up seconds, window seconds)
    "fast": (16, 0.0, 3.0, 15.0),
    "think": (256, 0.1, 6.0, 20.0),
}
KINDS = (
    "arena-lean",
    "arena",
    "arena-lean-probes",
    "floor-bridge",
    "floor-table",
    "floor-pingpong",
    "floor-table-lean",
    "floor-bridge-lean",
)
#: What a run measures by default: what the targets need (the think
#: scenario's ping-pong and both scenarios' floor-bridge only with --kinds).
DEFAULT_KINDS = {
    "fast": ("arena-lean", "arena", "floor-table", "floor-pingpong"),
    "think": ("arena-lean", "arena", "floor-table"),
}
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
    messages: int = 0
    """Messages the bots received in the window."""
    rounds: dict[str, int] = field(default_factory=dict)
    spans: list[tuple[float, float, bool]] = field(default_factory=list)
    """Each decision in the window: (action sent, next request received, whether
    that request is the first of a new round at its table)."""
    errors: list[str] = field(default_factory=list)

    def on_request(self, table: str, now: float, round_no: int) -> None:
        prev_recv = self.last_recv.get(table)
        prev_send = self.last_send.get(table)
        self.last_recv[table] = now
        new_round = self.rounds.get(table, round_no) != round_no
        self.rounds[table] = round_no
        if self.measuring and prev_recv is not None and prev_send is not None:
            self.decisions += 1
            self.cycles.append(now - prev_recv)
            self.added.append(now - prev_send)
            self.spans.append((prev_send, now, new_round))

    def on_send(self, table: str, received: float, now: float) -> None:
        self.last_send[table] = now
        if self.measuring:
            self.thinks.append(now - received)


async def run_bot(
    number: int, address: str, think: float, stats: Stats, events: EventStream, probes: bool
) -> None:
    rng = random.Random(number)
    out: deque[Any] = deque()
    ready = asyncio.Event()

    async def outgoing() -> AsyncIterator[Any]:
        hello = Hello(f"bench-{number}", sdk_name="bench", event_stream=events, clock_probes=probes)
        yield wire.encode_bot(hello)
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
        now = time.monotonic()
        stats.on_send(msg.game_id, received, now)
        out.append(wire.encode_bot(ActionMsg(msg.request_id, action)))
        ready.set()

    async with grpc.aio.insecure_channel(address) as channel:
        call = wire.stub(channel).Play(outgoing())
        tasks: set[asyncio.Task[None]] = set()
        try:
            async for raw in call:
                if stats.measuring:
                    stats.messages += 1
                kind = raw.WhichOneof("message")
                if kind == "decision_request":
                    now = time.monotonic()
                    request = raw.decision_request
                    stats.on_request(request.game_id, now, request.view.round)
                    if think:
                        task = asyncio.ensure_future(answer(raw, now))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                    else:
                        await answer(raw, now)
                elif kind == "clock_probe":  # answered at once, as the SDK does
                    out.append(wire.encode_bot(ClockProbeReply(raw.clock_probe.id)))
                    ready.set()
                elif kind == "welcome":
                    stats.welcomed += 1
        except grpc.aio.AioRpcError as e:
            if e.code() != grpc.StatusCode.CANCELLED:
                stats.errors.append(f"bot {number}: {e.code().name} {e.details()}")


async def run_bots(args: argparse.Namespace) -> dict[str, Any]:
    stats = Stats()
    events = EventStream(args.events)
    tasks = [
        asyncio.ensure_future(
            run_bot(i, args.address, args.think, stats, events, args.clock_probes)
        )
        for i in range(args.bots)
    ]
    end = time.monotonic() + 30
    while stats.welcomed < args.bots and time.monotonic() < end:
        await asyncio.sleep(0.05)
    await asyncio.sleep(args.warmup)
    stats.measuring = True
    t0, s0, c0 = time.monotonic(), proc_cpu(args.server_pid), time.process_time()
    th0 = thread_cpu(args.server_pid)
    await asyncio.sleep(args.window)
    t1, s1, c1 = time.monotonic(), proc_cpu(args.server_pid), time.process_time()
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
        "messages_per_decision": stats.messages / d,
        "window": [t0, t1],
        "spans": [[round(a, 6), round(b, 6), r] for a, b, r in stats.spans],
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


def server_argv(kind: str, gc_log: str | None = None) -> list[str]:
    """The server's command line; with ``gc_log``, under traced_serve.py
    (its collections logged to that file)."""
    here = Path(__file__).resolve().parent
    if kind in ("arena", "arena-lean", "arena-lean-probes"):
        target = [
            "-m",
            "wizard_arena.cli",
            "serve",
            *["--port", "0", "--players", str(PLAYERS), "--move-time", "5", "--seed", "1"],
            *["--reseat-delay", "0", "--log-level", "warning", "--log-format", "json"],
        ]
    else:
        mode = kind.split("-")[1]
        target = [str(here / "floor_servers.py"), "--mode", mode, "--players", str(PLAYERS)]
        if kind.endswith("-lean"):
            target.append("--lean")
    if gc_log is None:
        return [sys.executable, *target]
    return [sys.executable, str(here / "traced_serve.py"), gc_log, *target]


def measure(kind: str, scenario: str) -> dict[str, Any]:
    bots, think, warmup, window = SCENARIOS[scenario]
    with tempfile.TemporaryDirectory() as tmp:
        gc_log = str(Path(tmp) / "gc.json")
        server = ServerProcess(server_argv(kind, gc_log))
        load_before = os.getloadavg()[0]
        try:
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "bots",
                    *["--address", server.address, "--server-pid", str(server.proc.pid)],
                    *["--bots", str(bots), "--think", str(think)],
                    *["--warmup", str(warmup), "--window", str(window)],
                    *["--events", "lean" if "-lean" in kind else "all"],
                    *(["--clock-probes"] if kind.endswith("-probes") else []),
                ],
                capture_output=True,
                text=True,
                timeout=warmup + window + 120,
            )
        finally:
            server.stop()
        collections = json.loads(Path(gc_log).read_text()) if Path(gc_log).exists() else []
    if out.returncode != 0:
        raise RuntimeError(f"bots process failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["kind"] = kind
    result["scenario"] = scenario
    result["loadavg_1m"] = os.getloadavg()[0]
    result["loadavg_1m_before"] = load_before
    spans = result.pop("spans")
    result["tail"] = tail(spans, collections, result["window"], result["added_p99_ms"])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="role")
    run = sub.add_parser("run", help="(default) run the scenarios and print the figures")
    for p in (ap, run):
        p.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
        p.add_argument(
            "--kinds",
            help=f"comma-separated server kinds, of {', '.join(KINDS)} (default: what the "
            "targets need: fast "
            + ",".join(DEFAULT_KINDS["fast"])
            + "; think "
            + ",".join(DEFAULT_KINDS["think"])
            + ")",
        )
        p.add_argument("--sets", type=int, default=3, help="sets of runs (default 3)")
        p.add_argument("--json", metavar="FILE", help="also write the raw results as JSON")
    bt = sub.add_parser("bots", help="(internal) run the bots and print JSON")
    bt.add_argument("--address", required=True)
    bt.add_argument("--server-pid", type=int, required=True)
    bt.add_argument("--bots", type=int, default=16)
    bt.add_argument("--think", type=float, default=0.0)
    bt.add_argument("--warmup", type=float, default=3.0)
    bt.add_argument("--window", type=float, default=10.0)
    bt.add_argument("--events", choices=["all", "lean"], default="all")
    bt.add_argument("--clock-probes", action="store_true", help="ask for clock probes (v1.2)")
    args = ap.parse_args()
    if args.role == "bots":
        print(json.dumps(asyncio.run(run_bots(args))))
        return
    scenarios = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    chosen = [k for k in (args.kinds or "").split(",") if k]
    unknown = [k for k in chosen if k not in KINDS]
    if unknown:
        ap.error(f"unknown server kind(s) {', '.join(unknown)}: choose among {', '.join(KINDS)}")
    print(
        f"bench_server: {time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()} cores, "
        f"python {sys.version.split()[0]}, grpcio {grpc.__version__}; {args.sets} set(s); "
        f"load average at the start {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    sets: list[list[dict[str, Any]]] = []
    for number in range(1, args.sets + 1):
        results = []
        for scenario in scenarios:
            for kind in chosen or DEFAULT_KINDS[scenario]:
                r = measure(kind, scenario)
                r["set"] = number
                results.append(r)
                print(
                    f"  set {number} {scenario:<6} {kind:<15} {r['decisions_per_s']:>8,.0f} "
                    f"decisions/s, added p99 {r['added_p99_ms']:.1f} ms (load average "
                    f"{r['loadavg_1m_before']:.1f} before, {r['loadavg_1m']:.1f} after)",
                    flush=True,
                )
        sets.append(results)
    print()
    for results in sets:
        report(results)
    summary(sets)
    if args.json:
        Path(args.json).write_text(json.dumps(sets, indent=1))


if __name__ == "__main__":
    main()
