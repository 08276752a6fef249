"""The whole referee in memory: processor time per decision, with or
without clock probes.

The real arena (:func:`wizard_referee.referee.arena.open_arena`: handshake,
sessions, matchmaking, tables, and the clock probes of the bots that ask)
with ``--bots`` in-memory bots (:mod:`wizard_referee.referee.memory`) on the
lean stream, each answering every request at once with its first legal
action, and every clock probe at once (``--clock-probes``). No gRPC, no
bridge, no thread: what the referee's Python does per decision, which the
transport's cost and other processes' load do not blur as they blur
bench_server.py's figures. Tables of 4, a move time of 5 s, no pause
between games; after ``--warmup`` seconds, the process's CPU time over
``--window`` seconds per decision made.

    python bench/bench_arena_memory.py
    python bench/bench_arena_memory.py --clock-probes --runs 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence
from typing import Any

import trio

from wizard_arena.protocol.messages import (
    ActionMsg,
    ClockProbe,
    ClockProbeReply,
    DecisionRequest,
    EventStream,
    Hello,
)
from wizard_arena.rules import Rules
from wizard_referee.referee.arena import Arena, ArenaConfig, open_arena
from wizard_referee.referee.logs import configure_logging
from wizard_referee.referee.memory import connect


async def bot(arena: Arena, number: int, probes: bool, counts: list[int]) -> None:
    end = connect(arena.accept, arena.config.policy)
    hello = Hello(f"b{number}", event_stream=EventStream.LEAN, clock_probes=probes)
    end.send(hello)
    while True:
        try:
            msg = await end.receive()
        except trio.EndOfChannel:
            return
        if isinstance(msg, ClockProbe):
            end.send(ClockProbeReply(msg.id))
        elif isinstance(msg, DecisionRequest):
            counts[0] += 1
            end.send(ActionMsg(msg.request_id, msg.view.legal_actions[0]))


async def measure(bots: int, probes: bool, warmup: float, window: float) -> dict[str, Any]:
    counts = [0]
    config = ArenaConfig.build(rules=Rules(players=4), move_time=5.0, reseat_delay=0.0, seed=1)
    async with open_arena(config) as arena, trio.open_nursery() as nursery:
        for number in range(bots):
            nursery.start_soon(bot, arena, number, probes, counts)
        await trio.sleep(warmup)
        d0, c0 = counts[0], time.process_time()
        await trio.sleep(window)
        d1, c1 = counts[0], time.process_time()
        nursery.cancel_scope.cancel()
    decisions = d1 - d0
    return {
        "clock_probes": probes,
        "decisions": decisions,
        "cpu_us_per_decision": round((c1 - c0) / max(decisions, 1) * 1e6, 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bots", type=int, default=16)
    ap.add_argument("--clock-probes", action="store_true", help="the bots ask for clock probes")
    ap.add_argument("--both", action="store_true", help="alternate runs without and with probes")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--window", type=float, default=8.0)
    args = ap.parse_args(argv)
    configure_logging("error", "json")
    kinds = [False, True] if args.both else [args.clock_probes]
    figures: dict[bool, list[float]] = {k: [] for k in kinds}
    for _ in range(args.runs):
        for probes in kinds:
            result = trio.run(measure, args.bots, probes, args.warmup, args.window)
            figures[probes].append(result["cpu_us_per_decision"])
            print(json.dumps(result), flush=True)
    for probes, values in figures.items():
        print(
            f"{'with' if probes else 'without'} clock probes: median "
            f"{statistics.median(values):.1f} us per decision over {len(values)} run(s) "
            f"({', '.join(f'{v:.1f}' for v in values)})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
