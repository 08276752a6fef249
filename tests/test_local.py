"""In-process play (:func:`wizard_arena.local.play_local`): the bots' hooks."""

from __future__ import annotations

from wizard_arena.bot import Bot
from wizard_arena.local import play_local
from wizard_arena.rules import RoundResult, Rules, SeatView, Trick
from wizard_bots.random_bot import RandomBot


class Listener(RandomBot):
    """Counts what it hears (sitting in seat 0)."""

    def __init__(self) -> None:
        super().__init__()
        self.tricks: list[Trick] = []
        self.rounds: list[RoundResult] = []

    def on_trick_end(self, view: SeatView, trick: Trick) -> None:
        assert view.seat == 0
        self.tricks.append(trick)

    def on_round_end(self, view: SeatView, result: RoundResult) -> None:
        assert view.seat == 0
        self.rounds.append(result)


def test_the_hooks_hear_every_trick_and_round() -> None:
    listener = Listener()
    bots: list[Bot] = [listener, RandomBot(), RandomBot()]
    game = play_local(bots, Rules(players=3), seed=5)
    rounds = len(game.results)
    assert rounds == 20
    assert len(listener.rounds) == rounds
    assert [r.points for r in listener.rounds] == [r.points for r in game.results]
    # one trick a card dealt to each seat: 1 + 2 + ... + 20
    assert len(listener.tricks) == rounds * (rounds + 1) // 2
