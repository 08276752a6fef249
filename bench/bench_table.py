"""The referee's tables without a transport: processor time per decision.

Runs ``--tables`` 4-player games at once in one trio run, each table the
referee's own (:func:`wizard_referee.referee.table.run_table`) with in-memory
seats (:mod:`wizard_referee.referee.memory`) whose bots answer every request
at once with its first legal action: the rules, views, deadlines, records and
message routing of a table, with no gRPC, no bridge and no thread. The
figure includes the bots' few lines and the in-memory channels; compare it
with bench_server.py's trio thread (``main``) to see how much of the server's
time per decision the table itself takes.

    python bench/bench_table.py                 # 16 tables, lean stream
    python bench/bench_table.py --events all --tables 4 --profile
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections.abc import Sequence

import trio

from wizard_arena.protocol.messages import ActionMsg, DecisionRequest, EventStream, GameEnd
from wizard_arena.rules import Rules
from wizard_referee.referee.logs import configure_logging
from wizard_referee.referee.memory import MemoryBot, connect
from wizard_referee.referee.seat import Seat, SeatSpec
from wizard_referee.referee.table import run_table

PLAYERS = 4


async def answer_at_once(bot: MemoryBot, counts: list[int]) -> None:
    while True:
        msg = await bot.receive()
        if isinstance(msg, DecisionRequest):
            counts[0] += 1
            bot.send(ActionMsg(msg.request_id, msg.view.legal_actions[0]))
        elif isinstance(msg, GameEnd):
            bot.leave()
            return


async def one_table(number: int, events: EventStream, counts: list[int]) -> None:
    def unused(seat: Seat) -> None:  # (no arena: the table is given its seats)
        pass

    bots = [connect(unused) for _ in range(PLAYERS)]
    seats = [SeatSpec(f"bot-{s}", b.seat, event_stream=events) for s, b in enumerate(bots)]
    async with trio.open_nursery() as nursery:
        for bot in bots:
            nursery.start_soon(answer_at_once, bot, counts)
        record = await run_table(f"table-{number}", Rules(players=PLAYERS), seats, seed=number)
        if record.status != "finished":  # an aborted table sends no GameEnd: stop its bots
            nursery.cancel_scope.cancel()
    assert record.status == "finished", f"table {number}: {record.status}"


async def all_tables(tables: int, events: EventStream, counts: list[int]) -> None:
    async with trio.open_nursery() as nursery:
        for number in range(tables):
            nursery.start_soon(one_table, number, events, counts)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=16, help="games at once (one each)")
    ap.add_argument("--events", choices=["lean", "all"], default="lean")
    ap.add_argument("--repeat", type=int, default=3, help="runs; the best is printed")
    ap.add_argument("--profile", action="store_true", help="cProfile one run, top 25")
    args = ap.parse_args(argv)
    configure_logging("warning", "json")  # as bench_server.py runs serve
    events = EventStream.LEAN if args.events == "lean" else EventStream.ALL
    best = float("inf")
    decisions = 0
    for _ in range(args.repeat):
        counts = [0]
        start = time.process_time()
        trio.run(all_tables, args.tables, events, counts)
        best = min(best, (time.process_time() - start) / counts[0])
        decisions = counts[0]
    print(
        f"{args.tables} tables of {PLAYERS}, {args.events} stream: {decisions} decisions a run, "
        f"{best * 1e6:.1f} us of processor time per decision (best of {args.repeat})"
    )
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(trio.run, all_tables, args.tables, events, [0])
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
