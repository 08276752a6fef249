"""Games for the analysis tests: played in-process, kept as the records a
store holds, and a bot with a planted weakness."""

from __future__ import annotations

from collections.abc import Sequence

from wizard_arena import SeatView
from wizard_arena.bot import Bot
from wizard_arena.local import play_local
from wizard_arena.rules import Rules
from wizard_bots.heuristic import HeuristicBot
from wizard_referee.compare.local_play import local_record
from wizard_referee.referee.record import GameRecord


class OneTooManyBot(HeuristicBot):
    """The heuristic bot, except that in rounds of one card it bids one more
    than the heuristic (when it may)."""

    name = "one-too-many"

    def bid(self, view: SeatView) -> int:
        bid = super().bid(view)
        if view.cards_per_player == 1 and bid + 1 in view.legal_bids:
            return bid + 1
        return bid


def played(
    bots: Sequence[Bot], names: Sequence[str], rules: Rules, seed: int, game_id: str
) -> GameRecord:
    """One game of ``bots`` played in-process, as a finished game's record."""
    result = play_local(bots, rules, seed=seed, names=names, record=True, game_id=game_id)
    return local_record(result, game_id, seed, finished=1.0)


def stored(path: str, records: Sequence[GameRecord]) -> None:
    """A results store at ``path`` holding ``records`` as finished games."""
    from wizard_referee.tournament.store import GameSpec, ResultsStore

    specs = [
        GameSpec(r.game_id, i, 0, i, 0, str(r.seed), tuple(r.names)) for i, r in enumerate(records)
    ]
    names = sorted({n for r in records for n in r.names})
    with ResultsStore(path) as store:
        store.create("analysis", {}, [(n, "python", None) for n in names], specs, records[0].rules)
        for spec, record in zip(specs, records, strict=True):
            store.save_game(spec, record)
