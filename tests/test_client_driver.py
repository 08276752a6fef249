"""The SDK's protocol driver without a server: it follows whole games of
every variant by folding what it observes, trusts the referee's requests,
reports a model difference once, and records its decisions and faults."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from wizard_arena.bot import GameInfo
from wizard_arena.client import (
    ActionRejectedError,
    ClientRecord,
    ProtocolError,
    RecordKind,
    RunResult,
)
from wizard_arena.client.driver import Ask, Driver, Hook
from wizard_arena.protocol.messages import (
    ActionMsg,
    ActionRejected,
    DecisionRequest,
    GameEnd,
    RoundStart,
    TableEvent,
)
from wizard_arena.rules import (
    Bid,
    Game,
    GameOver,
    Phase,
    RoundStarted,
    Rules,
    SeatView,
    Trick,
    bids_closed,
)

from .variants import EVERY_OPTION

# -- the SDK's protocol driver (no server) -------------------------------------------------


def _round_start(game: Game, ev: RoundStarted, seat: int) -> RoundStart:
    """The RoundStart a referee sends ``seat`` for the deal ``ev``."""
    view = game.view(seat)
    pending = ev.turned_card is not None and ev.turned_card.is_wizard
    return RoundStart(
        "g", ev.round, ev.dealer, ev.cards, view.hand, ev.turned_card, ev.trump, pending,
        view.others_hands,
    )  # fmt: skip


def _broadcast(drivers: list[Driver], game: Game, events: Sequence[Any]) -> None:
    """Each seat's driver receives the messages of ``events``; the hooks
    after a trick and a round get views that show them."""
    for ev in events:
        for s, d in enumerate(drivers):
            if isinstance(ev, RoundStarted):
                assert d.receive(_round_start(game, ev, s)) == []
            elif not isinstance(ev, GameOver):  # (sent as GameEnd, with the faults)
                effects = d.receive(TableEvent("g", ev))
                for hook in effects:
                    assert isinstance(hook, Hook)
                    view, what = hook.args
                    assert view.seat == s and view.time_left is None
                    assert what in (view.tricks[-1:] if isinstance(what, Trick) else view.results)


@pytest.mark.parametrize("variant", list(EVERY_OPTION))
def test_the_driver_follows_whole_games_of_every_variant(variant: str) -> None:
    """Each seat's driver, fed what a referee sends it and answering its
    requests (strict: any difference from the referee's views raises),
    holds the rules core's view of its seat after every action."""
    rules = EVERY_OPTION[variant]
    n = rules.players
    game = Game(rules, seed=11)
    rng = random.Random(11)
    drivers = [Driver(RunResult(), strict=True, games=1) for _ in range(n)]
    for s, d in enumerate(drivers):
        d.receive(GameInfo("g", rules, s, tuple(f"s{i}" for i in range(n))))
    seen = requests = 0
    while not game.is_over:
        if game.phase is Phase.DEAL:
            game.deal()
        else:
            seat = rng.choice(game.acting)
            requests += 1
            view = game.view(seat).with_time_left(5.0)
            (ask,) = drivers[seat].receive(DecisionRequest(f"r{requests}", "g", view))
            assert isinstance(ask, Ask)
            out = drivers[seat].decided(ask.pending, rng.choice(view.legal_actions), 0.001)
            assert out is not None and out.action is not None
            game.apply(seat, out.action)
        _broadcast(drivers, game, game.events[seen:])
        seen = len(game.events)
        for s, d in enumerate(drivers):
            folded, expected = d.tables["g"].view, game.view(s)
            if folded != expected:  # only: no event says that the last hidden bid is in
                assert rules.reveal_bids_after_tricks and bids_closed(folded) == expected
    for s, d in enumerate(drivers):
        d.receive(GameEnd("g", tuple(game.totals), tuple(game.ranks)))
        (summary,) = d.result.games
        assert summary.results == tuple(game.results) and summary.seat == s
        decisions = [r for r in d.result.records if r.kind is RecordKind.DECISION]
        assert len(decisions) == d.result.decisions and d.result.records == decisions
    assert sum(d.result.decisions for d in drivers) == requests


def _request_for(view: SeatView, legal: tuple[Any, ...]) -> DecisionRequest:
    return DecisionRequest("r1", "g", replace(view, legal_actions=legal, time_left=1.0))


def _first_bid_view() -> tuple[GameInfo, SeatView]:
    game = Game(Rules(players=3), seed=5)
    game.deal()
    seat = game.to_act
    assert seat is not None
    return GameInfo("g", game.rules, seat, ("a", "b", "c")), game.view(seat)


def _driver(strict: bool, games: int | None = None, **kw: Any) -> tuple[Driver, SeatView]:
    """A driver that has seen a game start and its first deal."""
    info, view = _first_bid_view()
    driver = Driver(RunResult(), strict=strict, games=games, **kw)
    driver.receive(info)
    deal = RoundStart("g", 1, view.dealer, 1, view.hand, view.turned_card, view.trump, False)
    driver.receive(deal)
    return driver, view


def test_referee_offering_other_actions_is_trusted_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    driver, view = _driver(strict=False)
    (ask,) = driver.receive(_request_for(view, (Bid(0),)))  # the rules allow 0 and 1
    assert isinstance(ask, Ask) and ask.pending.view.legal_actions == (Bid(0),)
    assert "the referee offers [bid 0] but the rules give [bid 0, bid 1]" in caplog.text
    assert driver.result.mismatches == 1
    # an answer outside what the referee offers is replaced by the default
    assert driver.decided(ask.pending, Bid(1), 0.01) == ActionMsg("r1", Bid(0))

    strict, _ = _driver(strict=True)
    with pytest.raises(ProtocolError, match="trusting the referee"):
        strict.receive(_request_for(view, (Bid(0),)))


def test_model_difference_is_reported_once(caplog: pytest.LogCaptureFixture) -> None:
    info, view = _first_bid_view()
    driver = Driver(RunResult(), strict=False, games=None)
    driver.receive(info)  # no RoundStarted: the model still waits for the deal
    (ask,) = driver.receive(_request_for(view, view.legal_actions))
    assert isinstance(ask, Ask)
    assert "differs from the referee's view" in caplog.text
    assert "phase: model Phase.DEAL, server Phase.BID" in caplog.text
    (mismatch,) = driver.result.records
    assert (mismatch.kind, mismatch.code, mismatch.request_id) == (
        RecordKind.MISMATCH,
        "view",
        "r1",
    )
    assert "differs from the referee's view" in mismatch.detail
    # a request for a game never announced: the game is joined in progress
    hook, ask2 = driver.receive(replace(_request_for(view, view.legal_actions), game_id="g2"))
    assert isinstance(hook, Hook) and hook.name == "on_game_start"
    assert isinstance(ask2, Ask)


def test_rejected_action_asks_again_once_then_sends_the_default() -> None:
    driver, view = _driver(strict=False)
    (ask,) = driver.receive(_request_for(view, view.legal_actions))
    pending = ask.pending
    assert driver.decided(pending, Bid(1), 0.01) == ActionMsg("r1", Bid(1))
    rejected = ActionRejected("r1", "g", "bid_forbidden", "no", 0.5)
    (again,) = driver.receive(rejected)
    assert isinstance(again, Ask) and again.pending.view.time_left == 0.5
    # the same answer again: the default goes instead
    assert driver.decided(pending, Bid(1), 0.01) == ActionMsg("r1", Bid(0))
    assert driver.receive(rejected) == []  # the default refused too: give up
    assert driver.receive(replace(rejected, time_left=0.0)) == []
    assert driver.result.rejections == 3

    strict = Driver(RunResult(), strict=True, games=None)
    with pytest.raises(ActionRejectedError, match="bid_forbidden"):
        strict.receive(rejected)


def test_events_after_a_game_update_the_hook_views() -> None:
    info, _ = _first_bid_view()
    driver = Driver(RunResult(), strict=False, games=1)
    (start,) = driver.receive(info)
    assert start == Hook("on_game_start", (info,))
    end = driver.receive(GameEnd("g", (1, 2, 3), (3, 2, 1)))
    assert isinstance(end[0], Hook) and end[0].name == "on_game_end"
    assert driver.done and driver.result.games[0].ranks == (3, 2, 1)
    assert driver.receive(TableEvent("other", GameOver((0,), (1,)))) == []


def test_the_driver_records_its_decisions_and_faults() -> None:
    seen: list[ClientRecord] = []
    driver, view = _driver(strict=False, on_record=seen.append)
    request = _request_for(view, view.legal_actions)

    def ask(request_id: str) -> Any:
        (a,) = driver.receive(replace(request, request_id=request_id))
        return a.pending

    where = {"game_id": "g", "round": 1, "phase": "bid", "time_left": 1.0}
    assert driver.decided(ask("r1"), ZeroDivisionError("kaboom"), 0.25) == ActionMsg("r1", Bid(0))
    assert driver.decided(ask("r2"), Bid(7), 0.5) == ActionMsg("r2", Bid(0))
    assert driver.decided(ask("r3"), Bid(1), 1.5) is None  # after the deadline
    assert driver.cancelled(ask("r4"), 0.9) == ActionMsg("r4", Bid(0))
    driver.receive(ActionRejected("r4", "g", "bid_forbidden", "no", 0.0))
    driver.hook_failed("on_trick_end", KeyError("x"))
    records = driver.result.records
    assert seen == records
    assert [(r.kind, r.request_id, r.action) for r in records] == [
        (RecordKind.BOT_ERROR, "r1", ""),
        (RecordKind.DECISION, "r1", "bid 0"),
        (RecordKind.BOT_ERROR, "r2", "bid 7"),
        (RecordKind.DECISION, "r2", "bid 0"),
        (RecordKind.OVERRUN, "r3", ""),
        (RecordKind.DECISION, "r3", ""),
        (RecordKind.CANCELLED, "r4", ""),
        (RecordKind.DECISION, "r4", "bid 0"),
        (RecordKind.REJECTED, "r4", ""),
        (RecordKind.HOOK_ERROR, "", ""),
    ]
    raised, _, illegal, _, overrun, _, cancelled, _, rejected, hook = records
    assert raised == ClientRecord(
        RecordKind.BOT_ERROR, request_id="r1", code="raised",
        detail="ZeroDivisionError: kaboom", **where,  # type: ignore[arg-type]
    )  # fmt: skip
    assert illegal.code == "illegal" and "which is not legal (legal: [bid 0, bid 1])" in (
        illegal.detail
    )
    assert overrun.seconds == 1.5 and cancelled.seconds == 0.9 and records[1].seconds == 0.25
    assert (rejected.code, rejected.detail, rejected.round) == ("bid_forbidden", "no", 1)
    assert (hook.code, hook.detail) == ("on_trick_end", "KeyError: 'x'")
    r = driver.result
    assert (r.decisions, r.bot_errors, r.overruns, r.rejections, r.hook_errors) == (4, 2, 2, 1, 1)

    quiet, _ = _driver(strict=False, keep_records=False)
    (a,) = quiet.receive(request)
    quiet.decided(a.pending, Bid(0), 0.1)
    assert quiet.result.records == [] and quiet.result.decisions == 1
