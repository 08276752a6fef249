"""No hidden information of a running game reaches a spectator (issue #14).

Whole games of every variant are refereed by the real arena and tables on
in-memory seats, on trio's virtual clock. After every message the first bot
receives, the test asks the web application for ``/api/tables`` (httpx on
the same trio loop) and checks the answer against the table's game, as
tests/support.py's ``check_information`` checks what a seat was sent: every
card in it must be the turned card or a card played this round (as a
multiset: Wizards and Jesters come four of each), no bid may show while the
players' bids are hidden, nobody is named to act during hidden bidding, and
with a spectator delay a round's hands show only once it ended that long ago.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import httpx
import pytest
import trio
import trio.testing

from wizard_arena.protocol.messages import DecisionRequest, ServerMsg, TableEvent
from wizard_arena.rules import ALL_CARDS, Card, Phase, RoundScored, Rules, bids_hidden
from wizard_arena.rules.laws import VARIANT_OPTIONS
from wizard_referee.referee.arena import Arena
from wizard_referee.web.app import WebState, create_app

from .conftest import LogSink
from .memory_bots import MemBot, memory_arena, on_mock_clock
from .variants import VARIANTS


@pytest.fixture(autouse=True)
def _log_at_warning(logs: LogSink) -> None:
    """The referee's log at level warning, as the conftest's ``serve`` fixture
    sets it: the info line of every decision is not rendered."""


THINK = 1.0
"""Virtual seconds each bot takes per decision."""


#: Each card by its text (what ``Card(text)`` reads, in capitals).
_CARD_OF_TEXT = {c.text: c for c in ALL_CARDS}


def cards_in_json(data: Any) -> list[Card]:
    """Every string in ``data`` (any depth) that is a card's text (as
    ``Card(text)`` reads it), in order."""
    out: list[Card] = []
    _collect_cards(data, out)
    return out


def _collect_cards(data: Any, out: list[Card]) -> None:
    if isinstance(data, str):
        card = _CARD_OF_TEXT.get(data.upper())
        if card is not None:
            out.append(card)
        return
    if isinstance(data, dict):
        data = data.values()
    elif not isinstance(data, list):
        return
    for v in data:
        if isinstance(v, str):
            card = _CARD_OF_TEXT.get(v.upper())
            if card is not None:
                out.append(card)
        elif isinstance(v, dict | list):
            _collect_cards(v, out)


class SpectatorWatch:
    """What a spectator was shown, checked against the tables' games."""

    def __init__(self, arena: Arena, delay: float | None) -> None:
        self.arena = arena
        self.delay = delay
        self.round_ended: dict[tuple[str, int], float] = {}
        self.checked = 0
        self.past_shown = 0

    def check(self, data: dict[str, Any], now: float) -> None:
        for t in data["tables"]:
            live = self.arena.live_tables.get(t["id"])
            if live is None or live.game.round != t["round"]:
                continue  # the round moved on while answering: nothing to compare with
            game = live.game
            public = Counter(c for trick in game.tricks for c in trick.cards)
            public.update(game.trick)
            if game.turned_card is not None:
                public[game.turned_card] += 1
            shown = Counter(cards_in_json({k: v for k, v in t.items() if k != "past_rounds"}))
            leaked = shown - public
            assert not leaked, (
                f"{t['id']} round {t['round']} ({t['phase']}): a spectator was shown "
                f"{sorted(c.text for c in leaked.elements())}, held in a hand"
            )
            self.checked += sum(shown.values())
            rules = Rules.from_dict(live.record.rules)
            if bids_hidden(rules, Phase[t["phase"].upper()]):
                assert t["bids"] == [None] * rules.players, f"hidden bids shown: {t['bids']}"
            if rules.hidden_bids and t["phase"] == "bid":
                assert t["to_act"] is None, "who has not bid yet is not public"
            for past in t["past_rounds"]:
                assert self.delay is not None, "hands of a running game shown with no delay"
                ended = self.round_ended[(t["id"], past["round"])]
                assert now - ended >= self.delay, (
                    f"round {past['round']} hands shown {now - ended:.1f} s after it ended"
                )
                self.past_shown += 1


async def watch_games(rules: Rules, delay: float | None) -> SpectatorWatch:
    async with memory_arena(rules=rules, move_time=5.0) as arena:
        app = create_app(WebState(arena=arena, spectator_delay=delay))
        watch = SpectatorWatch(arena, delay)
        transport = httpx.ASGITransport(app=app)
        async with (
            httpx.AsyncClient(transport=transport, base_url="http://web") as client,
            trio.open_nursery() as nursery,
        ):

            async def answer_later(bot: MemBot, req: DecisionRequest) -> None:
                await trio.sleep(THINK)
                bot.send_action(req.request_id, bot.random_action(req))

            async def on_request(bot: MemBot, req: DecisionRequest) -> bool:
                nursery.start_soon(answer_later, bot, req)
                return True  # answered from a task of its own: messages are read at once

            async def on_message(bot: MemBot, msg: ServerMsg) -> None:
                now = trio.current_time()
                if isinstance(msg, TableEvent) and isinstance(msg.event, RoundScored):
                    key = (msg.game_id, msg.event.result.round)
                    watch.round_ended.setdefault(key, now)
                response = await client.get("/api/tables")
                assert response.status_code == 200
                watch.check(response.json(), trio.current_time())

            bots = [
                MemBot(
                    f"b{i}",
                    rule_options=VARIANT_OPTIONS,
                    on_request=on_request,
                    on_message=on_message if i == 0 else None,
                )
                for i in range(rules.players)
            ]
            for bot in bots:
                await nursery.start(bot.run, arena)
            with trio.fail_after(100_000):
                for bot in bots:
                    await bot.done.wait()
            nursery.cancel_scope.cancel()
        assert arena.live_tables == {}, "a finished game is no longer in progress"
        (record,) = list(arena.records)
        assert record.status == "finished"
    return watch


@pytest.mark.parametrize("variant", list(VARIANTS))
@on_mock_clock
async def test_a_spectator_sees_no_hidden_information(variant: str) -> None:
    watch = await watch_games(VARIANTS[variant], delay=None)
    assert watch.checked > 10, "cards were shown (the turned card, the tricks) and checked"
    assert watch.past_shown == 0


@on_mock_clock
async def test_with_a_delay_past_rounds_show_their_hands_that_late() -> None:
    rules = Rules(players=3, hand_sizes=(2, 3, 4))
    watch = await watch_games(rules, delay=3 * THINK + 0.5)
    assert watch.past_shown > 0, "the hands of rounds long over were shown"


def test_the_checker_catches_a_hand_shown() -> None:
    """The check can fail: a card of a hand, added to what the spectator got, is caught."""

    async def main() -> None:
        async with memory_arena(rules=Rules(players=3)) as arena:
            state = WebState(arena=arena)
            app = create_app(state)
            bots = [MemBot(f"b{i}", on_request=_never) for i in range(3)]
            async with trio.open_nursery() as nursery:
                for bot in bots:
                    await nursery.start(bot.run, arena)
                while (
                    not arena.live_tables or not next(iter(arena.live_tables.values())).game.round
                ):
                    await trio.sleep(0.01)
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(transport=transport, base_url="http://w") as c:
                    data = (await c.get("/api/tables")).json()
                watch = SpectatorWatch(arena, None)
                watch.check(json.loads(json.dumps(data)), trio.current_time())  # clean
                live = next(iter(arena.live_tables.values()))
                data["tables"][0]["trick"].append([1, live.game.hands[1][0].text])
                with pytest.raises(AssertionError, match="held in a hand"):
                    watch.check(data, trio.current_time())
                nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


async def _never(bot: MemBot, req: DecisionRequest) -> bool:
    return True
