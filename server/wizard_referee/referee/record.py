"""The complete record of one refereed game, and its replay through the rules core.

A record holds the rules (``Rules.to_dict()``: every option in force), the
seat names, every deal (hands and turned card), every decision in order with
its timing and fault (if the referee had to play it), and the results. It
round-trips through JSON, and :func:`verify_record` replays it through the
rules core and lists any difference from what was recorded.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from wizard_arena.rules import (
    Action,
    Bid,
    Card,
    ChooseTrump,
    Game,
    Play,
    RoundResult,
    RuleError,
    Rules,
    Suit,
    rank_totals,
)

__all__ = [
    "GameRecord",
    "MoveRecord",
    "RecordLog",
    "RoundRecord",
    "parse_action",
    "verify_record",
]


def parse_action(text: str) -> Action:
    """Inverse of :func:`wizard_arena.rules.action_text`.

    >>> parse_action("play 13H"), parse_action("bid 2"), parse_action("trump S")
    (Play(card=Card('13H')), Bid(bid=2), ChooseTrump(suit=Suit.SPADES))
    """
    kind, _, arg = text.partition(" ")
    if kind == "bid":
        return Bid(int(arg))
    if kind == "play":
        return Play(Card(arg))
    if kind == "trump":
        return ChooseTrump(Suit.from_letter(arg))
    raise ValueError(f"not an action: {text!r}")


@dataclass
class MoveRecord:
    """One decision: who, what, how long the bot took (ms), the fault if
    the referee played it instead of the bot, and the network credit its
    deadline had (ms; 0: none)."""

    seat: int
    action: str
    ms: float
    fault: str | None = None
    credit_ms: float = 0.0


@dataclass
class RoundRecord:
    round: int
    dealer: int
    hands: list[list[str]]
    turned_card: str | None
    moves: list[MoveRecord] = field(default_factory=list)


@dataclass
class GameRecord:
    game_id: str
    rules: dict[str, Any]
    names: list[str]
    seed: int | str | None
    first_dealer: int
    started_at: float
    finished_at: float | None = None
    status: str = "running"
    """``running``, ``finished`` or ``aborted`` (an internal error; see ``error``)."""
    rounds: list[RoundRecord] = field(default_factory=list)
    results: list[list[list[int]]] = field(default_factory=list)
    """Per round: [bids, tricks, points, totals]."""
    totals: list[int] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)
    faults: list[dict[str, int]] = field(default_factory=list)
    """Per seat: fault code (:class:`~wizard_arena.protocol.codes.FaultCode`) -> count."""
    fault_details: list[dict[str, str]] = field(default_factory=list)
    """Per seat: fault code -> detail of its first occurrence."""
    error: str = ""
    tags: dict[str, Any] = field(default_factory=dict)
    """Free-form metadata (tournament, duplicate set, rotation...)."""
    fault_policy: str = "default"
    """The fault policy in force (:class:`~wizard_referee.referee.faults.FaultPolicy`)."""
    penalties: list[dict[str, Any]] = field(default_factory=list)
    """Referee penalties (fault policy ``forfeit_round``), each
    ``{"round", "seat", "points", "reason"}``: ``points`` is added to the
    seat's total on top of the rules' scores (``results``), so that the
    seat's score for that round is ``faults.FORFEIT_POINTS_PER_CARD`` per card dealt.
    ``totals`` and ``ranks`` include them."""
    removed: list[int | None] = field(default_factory=list)
    """Per seat: the round in which the seat was removed from the game (fault
    policy ``remove``), or None."""
    draw: list[list[str | None]] = field(default_factory=list)
    """The draw for the first dealer (rule ``first_dealer_by_draw``): each row
    the card every seat drew (None: not drawing in that row, only the tied
    draw again); empty when the first dealer is not drawn. ``first_dealer`` is
    the seat it gives."""

    @classmethod
    def begin(
        cls,
        game_id: str,
        game: Game,
        names: list[str],
        seed: int | str | None,
        fault_policy: str,
        tags: dict[str, Any],
    ) -> GameRecord:
        """The record of ``game``, about to start (its first dealer chosen,
        no round dealt yet)."""
        n = len(names)
        return cls(
            game_id=game_id,
            rules=game.rules.to_dict(),
            names=names,
            seed=seed,
            first_dealer=game.first_dealer,
            draw=[[c.text if c is not None else None for c in row] for row in game.draw],
            started_at=time.time(),
            faults=[{} for _ in range(n)],
            fault_details=[{} for _ in range(n)],
            tags=dict(tags),
            fault_policy=fault_policy,
            removed=[None] * n,
        )

    def draw_cards(self) -> list[list[Card | None]] | None:
        """:attr:`draw` as cards, or None when there is no draw."""
        if not self.draw:
            return None
        return [[Card(c) if c is not None else None for c in row] for row in self.draw]

    def penalty_totals(self) -> list[int]:
        """Per seat: the sum of its penalties."""
        out = [0] * len(self.names)
        for p in self.penalties:
            out[p["seat"]] += p["points"]
        return out

    @property
    def faulted_seats(self) -> list[int]:
        return [s for s, f in enumerate(self.faults) if f]

    def add_fault(self, seat: int, code: str, detail: str) -> None:
        self.faults[seat][code] = self.faults[seat].get(code, 0) + 1
        self.fault_details[seat].setdefault(code, detail)

    def to_dict(self) -> dict[str, Any]:
        """The record as plain data (what :meth:`to_json` writes; equal to
        ``dataclasses.asdict``, built directly because it runs once per game).
        Unlike ``asdict`` it shares the record's lists and dicts: copy before
        changing them."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["rounds"] = [
            {
                "round": r.round,
                "dealer": r.dealer,
                "hands": r.hands,
                "turned_card": r.turned_card,
                "moves": [
                    {
                        "seat": m.seat,
                        "action": m.action,
                        "ms": m.ms,
                        "fault": m.fault,
                        "credit_ms": m.credit_ms,
                    }
                    for m in r.moves
                ],
            }
            for r in self.rounds
        ]
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameRecord:
        rounds = [
            RoundRecord(
                r["round"],
                r["dealer"],
                r["hands"],
                r["turned_card"],
                [MoveRecord(**m) for m in r["moves"]],
            )
            for r in data.get("rounds", [])
        ]
        return cls(**{**data, "rounds": rounds})

    @classmethod
    def from_json(cls, text: str) -> GameRecord:
        return cls.from_dict(json.loads(text))


class RecordLog(Sequence[GameRecord]):
    """The most recent finished records (``maxlen`` at most; None: all), oldest first.

    Each is kept as its JSON text and decoded when read. Text is invisible to
    Python's cyclic garbage collector, while a record held as objects is
    about 730 tracked objects (a 4-player game): with 1000 records kept, every
    full collection took about 200 ms (with text: 5 ms), a pause every table
    of a long-running server would feel.

    >>> log = RecordLog(maxlen=2)
    >>> for i in range(3):
    ...     log.append(GameRecord(f"g{i}", {}, ["a", "b", "c"], i, 0, 0.0))
    >>> [r.game_id for r in log]
    ['g1', 'g2']
    """

    def __init__(self, maxlen: int | None = None) -> None:
        self._texts: deque[str] = deque(maxlen=maxlen)

    def append(self, record: GameRecord) -> None:
        self._texts.append(record.to_json())

    def texts(self) -> list[str]:
        """The records kept, as their JSON texts (a snapshot, oldest first)."""
        return list(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [GameRecord.from_json(t) for t in list(self._texts)[index]]
        return GameRecord.from_json(self._texts[index])

    def __iter__(self) -> Iterator[GameRecord]:
        for text in list(self._texts):
            yield GameRecord.from_json(text)

    def __repr__(self) -> str:
        return f"<RecordLog of {len(self)} records>"


def verify_record(record: GameRecord) -> list[str]:
    """Replay ``record`` through the rules core; return the differences found
    (an empty list when the record is consistent with the rules).

    The moves are the seats' decisions only, in the order they were applied
    (with hidden bids, the order the bids arrived). Cards the rules play by
    themselves (the blind first round) are not moves: the core plays them
    when the last bid is applied, as the referee's did."""
    problems: list[str] = []
    try:
        rules = Rules.from_dict(record.rules)
        game = Game(rules, first_dealer=record.first_dealer, draw=record.draw_cards())
    except ValueError as e:
        return [f"cannot set up the game: {e}"]
    for rr in record.rounds:
        where = f"round {rr.round}"
        if rr.round != game.round + 1 or rr.dealer != game.next_dealer():
            problems.append(f"{where}: round/dealer out of sequence")
            return problems
        try:
            hands = [[Card(c) for c in h] for h in rr.hands]
            turned = Card(rr.turned_card) if rr.turned_card is not None else None
            game.deal(hands, turned)
        except ValueError as e:
            problems.append(f"{where}: deal refused: {e}")
            return problems
        for i, mv in enumerate(rr.moves):
            acting = game.acting
            if mv.seat not in acting:
                who = ", ".join(map(str, acting)) or "none"
                problems.append(f"{where} move {i}: seat {mv.seat} recorded, {who} to act")
                return problems
            try:
                game.apply(mv.seat, parse_action(mv.action))
            except (RuleError, ValueError) as e:
                problems.append(f"{where} move {i}: {mv.action} refused: {e}")
                return problems
    for i, res in enumerate(record.results):
        if i >= len(game.results):
            problems.append(f"round {i + 1}: result recorded but the round is incomplete")
            break
        got = game.results[i]
        want = RoundResult(i + 1, got.dealer, *map(tuple, res))
        if got != want:
            problems.append(f"round {i + 1}: recorded {res}, rules give {list(got[2:])}")
    if record.status == "finished":
        extra = record.penalty_totals()
        totals = [t + p for t, p in zip(game.totals, extra, strict=True)]
        ranks = rank_totals(totals)
        if not game.is_over:
            problems.append("recorded as finished but the game is not over")
        elif totals != record.totals:
            problems.append(f"totals: recorded {record.totals}, rules and penalties give {totals}")
        elif ranks != record.ranks:
            problems.append(f"ranks: recorded {record.ranks}, rules and penalties give {ranks}")
    return problems
