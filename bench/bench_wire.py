"""The wire codec on one core: microseconds per message.

Plays whole random 4-player games (seeded), keeps every DecisionRequest the
referee would send, and times, per request: the referee's fast path
(``wire.encode_server_bytes``: cached fragments joined as bytes), the
protobuf-object path (``wire.encode_server(...).SerializeToString()``), and
the client's decode (``wire.decode_server`` of the parsed message); and, per
bot action, the referee's ``wire.decode_bot_bytes``. CPU time of this
process (the figure to quote on a shared machine), best of ``--repeat``.

    python bench/bench_wire.py [--games 20] [--repeat 5] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence

from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import ActionMsg, DecisionRequest
from wizard_arena.rules import Game, Phase, Rules


def requests(games: int, seed: int) -> list[DecisionRequest]:
    """Every DecisionRequest of ``games`` random 4-player games, in order."""
    rng = random.Random(seed)
    out: list[DecisionRequest] = []
    for g in range(games):
        game = Game(Rules(players=4), rng=rng)
        while game.phase is not Phase.GAME_OVER:
            if game.phase is Phase.DEAL:
                game.deal()
                continue
            seat = game.to_act
            assert seat is not None
            view = game.view(seat).with_time_left(2.0)
            out.append(DecisionRequest(f"g{g}-{len(out)}", f"g{g}", view, 5.0))
            game.apply(seat, rng.choice(view.legal_actions))
    return out


def per_item_us(fn: Callable[[object], object], items: Sequence[object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for item in items:
            fn(item)
        best = min(best, time.process_time() - start)
    return best / len(items) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    reqs = requests(args.games, args.seed)
    raw = [wire.pb.ServerMessage.FromString(wire.encode_server_bytes(r)) for r in reqs]
    actions = [
        wire.encode_bot(ActionMsg(r.request_id, r.view.legal_actions[0])).SerializeToString()
        for r in reqs
    ]
    rows = [
        ("encode_server_bytes (fast path)", wire.encode_server_bytes, reqs),
        (
            "encode_server + SerializeToString",
            lambda m: wire.encode_server(m).SerializeToString(),
            reqs,
        ),
        ("decode_server (client)", wire.decode_server, raw),
        ("decode_bot_bytes (action)", wire.decode_bot_bytes, actions),
    ]
    print(f"{len(reqs)} decision requests from {args.games} games; CPU us per message")
    for name, fn, items in rows:
        us = per_item_us(fn, items, args.repeat)  # type: ignore[arg-type]
        print(f"  {name:<36} {us:8.1f}")


if __name__ == "__main__":
    main()
