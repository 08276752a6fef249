"""Run language-neutral rules test vectors (format ``wizard-conformance/1``).

The format is documented in ``shared/conformance/README.md`` and in
``docs/rules.md``. Each file is parsed completely before any case runs, so a
malformed file is refused with a :class:`VectorFormatError` that says where,
never half-run. One exception: a ``game`` case whose ``rules`` name an
option this implementation does not know cannot be judged; it is *skipped*
(:attr:`Case.skip` says why), counted and listed, and the file's other cases
run.

>>> cases = load_vectors({"format": "wizard-conformance/1", "cases": [
...     {"id": "t", "kind": "trick", "trump": "H", "plays": ["5S", "W"], "expect": {"winner": 1}},
...     {"id": "g", "kind": "game", "rules": {"players": 3, "reverse_play": True}}]})
>>> [run_case(c) for c in cases], cases[1].skip
([None, None], 'rules name an option this runner does not know: reverse_play')
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wizard_arena.rules import (
    Bid,
    BidRestriction,
    Card,
    ChooseTrump,
    Game,
    Play,
    RuleError,
    Rules,
    Suit,
    legal_cards,
    rank_totals,
    score,
    trick_winner,
)
from wizard_arena.rules.actions import Action
from wizard_arena.rules.laws import VARIANT_OPTIONS

__all__ = ["Case", "FileReport", "VectorFormatError", "load_vectors", "run_case", "run_files"]

FORMAT = "wizard-conformance/1"


class VectorFormatError(ValueError):
    """A vector file that does not follow the format."""


@dataclass
class Case:
    id: str
    kind: str
    data: dict[str, Any]
    #: parsed, ready-to-run form
    run: Callable[[], str | None] = field(repr=False)
    skip: str = ""
    """Why the case cannot be judged here (an unknown rule option); '' to run it."""


class _Skip(Exception):
    """A case that this runner cannot judge (its reason is the message)."""


# -- parsing helpers ----------------------------------------------------------


def _where(case_id: str, what: str) -> str:
    return f"case {case_id!r}: {what}"


def _card(case_id: str, text: Any) -> Card:
    if not isinstance(text, str):
        raise VectorFormatError(_where(case_id, f"expected a card string, got {text!r}"))
    try:
        return Card(text)
    except ValueError as e:
        raise VectorFormatError(_where(case_id, str(e))) from None


def _cards(case_id: str, texts: Any) -> list[Card]:
    if not isinstance(texts, list):
        raise VectorFormatError(_where(case_id, f"expected a list of cards, got {texts!r}"))
    return [_card(case_id, t) for t in texts]


def _suit(case_id: str, text: Any) -> Suit | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise VectorFormatError(_where(case_id, f"expected a suit letter or null, got {text!r}"))
    try:
        return Suit.from_letter(text)
    except ValueError as e:
        raise VectorFormatError(_where(case_id, str(e))) from None


def _int(case_id: str, obj: dict[str, Any], key: str) -> int:
    value = obj.get(key)
    if type(value) is not int:
        raise VectorFormatError(_where(case_id, f"{key!r} must be an integer, got {value!r}"))
    return value


def _expect(case_id: str, case: dict[str, Any]) -> dict[str, Any]:
    exp = case.get("expect")
    if not isinstance(exp, dict):
        raise VectorFormatError(_where(case_id, "missing 'expect' object"))
    return exp


def _texts(cards: Sequence[Card]) -> list[str]:
    return sorted(c.text for c in cards)


def _same_multiset(a: Sequence[Card], b: Sequence[Card]) -> bool:
    return Counter(a) == Counter(b)


# -- kinds ---------------------------------------------------------------------


def _trick_case(cid: str, case: dict[str, Any]) -> Callable[[], str | None]:
    trump = _suit(cid, case.get("trump"))
    plays = _cards(cid, case.get("plays"))
    if not plays:
        raise VectorFormatError(_where(cid, "'plays' is empty"))
    want = _int(cid, _expect(cid, case), "winner")

    def run() -> str | None:
        got = trick_winner(plays, trump)
        return None if got == want else f"winner: expected {want}, got {got}"

    return run


def _legal_case(cid: str, case: dict[str, Any]) -> Callable[[], str | None]:
    trump = _suit(cid, case.get("trump"))
    del trump  # trump never changes which cards are legal
    trick = _cards(cid, case.get("trick"))
    hand = _cards(cid, case.get("hand"))
    want = _cards(cid, _expect(cid, case).get("legal"))

    def run() -> str | None:
        got = legal_cards(hand, trick)
        if _same_multiset(got, want):
            return None
        return f"legal: expected {_texts(want)}, got {_texts(got)}"

    return run


def _score_case(cid: str, case: dict[str, Any]) -> Callable[[], str | None]:
    bid, tricks = _int(cid, case, "bid"), _int(cid, case, "tricks")
    want = _int(cid, _expect(cid, case), "points")

    def run() -> str | None:
        got = score(bid, tricks)
        return None if got == want else f"points: expected {want}, got {got}"

    return run


@dataclass
class _Act:
    seat: int
    action: Action
    reject: bool
    legal: list[Card] | None
    text: str


@dataclass
class _Round:
    round: int
    dealer: int
    hands: list[list[Card]]
    turned: Card | None
    actions: list[_Act]
    expect: dict[str, Any]


def _parse_action(cid: str, i: int, a: Any) -> _Act:
    if not isinstance(a, dict) or type(a.get("seat")) is not int:
        raise VectorFormatError(_where(cid, f"action {i} needs an integer 'seat': {a!r}"))
    seat = a["seat"]
    kinds = [k for k in ("bid", "play", "trump") if k in a]
    if len(kinds) != 1:
        raise VectorFormatError(
            _where(cid, f"action {i} needs exactly one of bid/play/trump: {a!r}")
        )
    action: Action
    if "bid" in a:
        if type(a["bid"]) is not int:
            raise VectorFormatError(_where(cid, f"action {i}: bid must be an integer: {a!r}"))
        action = Bid(a["bid"])
    elif "play" in a:
        action = Play(_card(cid, a["play"]))
    else:
        suit = _suit(cid, a["trump"])
        if suit is None:
            raise VectorFormatError(_where(cid, f"action {i}: trump must be a suit letter: {a!r}"))
        action = ChooseTrump(suit)
    legal = _cards(cid, a["legal"]) if "legal" in a else None
    return _Act(seat, action, bool(a.get("reject", False)), legal, json.dumps(a))


def _rules(cid: str, data: Any) -> Rules:
    """The case's ``rules``; :class:`_Skip` when they name an option (or a bid
    restriction) this runner does not know."""
    if not isinstance(data, dict):
        raise VectorFormatError(_where(cid, "missing 'rules' object"))
    unknown = sorted(set(data) - {"players", "bid_restriction", *VARIANT_OPTIONS})
    restriction = data.get("bid_restriction", "none")
    if isinstance(restriction, str) and restriction not in {b.value for b in BidRestriction}:
        unknown.append(f"bid_restriction {restriction}")
    if unknown:
        raise _Skip(f"rules name an option this runner does not know: {', '.join(unknown)}")
    try:
        return Rules.from_dict(data)
    except ValueError as e:
        raise VectorFormatError(_where(cid, f"rules: {e}")) from None


def _draw(cid: str, case: dict[str, Any], rules: Rules) -> list[list[Card | None]] | None:
    """The case's ``draw`` for the first dealer (rule ``first_dealer_by_draw``)."""
    raw = case.get("draw")
    if not rules.first_dealer_by_draw:
        if raw is not None:
            raise VectorFormatError(_where(cid, "'draw' needs the rule first_dealer_by_draw"))
        return None
    if not isinstance(raw, list) or not raw or not all(isinstance(r, list) for r in raw):
        raise VectorFormatError(
            _where(cid, "first_dealer_by_draw needs 'draw': a list of rows of cards (or null)")
        )
    return [[None if c is None else _card(cid, c) for c in row] for row in raw]


def _game_case(cid: str, case: dict[str, Any]) -> Callable[[], str | None]:
    rules = _rules(cid, case.get("rules"))
    draw = _draw(cid, case, rules)
    first_dealer = _int(cid, case, "first_dealer")
    raw_rounds = case.get("rounds")
    if not isinstance(raw_rounds, list) or not raw_rounds:
        raise VectorFormatError(_where(cid, "'rounds' must be a non-empty list"))
    rounds = [_parse_round(cid, r) for r in raw_rounds]
    gexp = case.get("expect")
    if gexp is not None and not isinstance(gexp, dict):
        raise VectorFormatError(_where(cid, "game 'expect' must be an object"))

    def run() -> str | None:
        try:
            game = Game(rules, first_dealer=first_dealer, draw=draw)
        except ValueError as e:
            return f"game could not start: {e}"
        for rd in rounds:
            where = f"round {rd.round}"
            if rd.round != game.round + 1:
                return f"{where}: expected round {game.round + 1} next"
            if rd.dealer != game.next_dealer():
                return f"{where}: dealer: vector says {rd.dealer}, rules give {game.next_dealer()}"
            try:
                game.deal(rd.hands, rd.turned)
            except ValueError as e:
                return f"{where}: deal refused: {e}"
            failed = _play_actions(game, rd, where)
            if failed:
                return failed
            diff = _check_round(game, rd)
            if diff:
                return f"{where}: {diff}"
        if gexp is not None:
            if not game.is_over:
                return f"game: expected the game to be over after round {game.round}"
            if "totals" in gexp and list(game.totals) != gexp["totals"]:
                return f"game totals: expected {gexp['totals']}, got {game.totals}"
            if "winners" in gexp:
                winners = [s for s, r in enumerate(rank_totals(game.totals)) if r == 1]
                if winners != sorted(gexp["winners"]):
                    return f"game winners: expected {gexp['winners']}, got {winners}"
        return None

    return run


def _parse_round(cid: str, r: object) -> _Round:
    if not isinstance(r, dict):
        raise VectorFormatError(_where(cid, f"a round must be an object: {r!r}"))
    hands = r.get("hands")
    if not isinstance(hands, list):
        raise VectorFormatError(_where(cid, "round needs 'hands'"))
    if "trump_card" not in r:
        raise VectorFormatError(_where(cid, "round needs 'trump_card' (null when none)"))
    turned = None if r["trump_card"] is None else _card(cid, r["trump_card"])
    actions = r.get("actions")
    if not isinstance(actions, list):
        raise VectorFormatError(_where(cid, "round needs 'actions'"))
    rexp = r.get("expect", {})
    if not isinstance(rexp, dict):
        raise VectorFormatError(_where(cid, "round 'expect' must be an object"))
    return _Round(
        _int(cid, r, "round"),
        _int(cid, r, "dealer"),
        [_cards(cid, h) for h in hands],
        turned,
        [_parse_action(cid, i, a) for i, a in enumerate(actions)],
        rexp,
    )


def _play_actions(game: Game, rd: _Round, where: str) -> str | None:
    """Apply a round's scripted actions; what went other than the vector says."""
    for i, act in enumerate(rd.actions):
        at = f"{where}, action {i} {act.text}"
        if act.legal is not None:
            got = game.legal_cards(act.seat)
            if not _same_multiset(got, act.legal):
                return f"{at}: legal: expected {_texts(act.legal)}, got {_texts(got)}"
        before = game.state_key()
        try:
            game.apply(act.seat, act.action)
        except RuleError as e:
            if not act.reject:
                return f"{at}: refused unexpectedly: {e}"
            if game.state_key() != before:
                return f"{at}: refused, but the state changed"
            continue
        if act.reject:
            return f"{at}: accepted, but the vector says it breaks the rules"
    return None


def _check_round(game: Game, rd: _Round) -> str | None:
    exp = rd.expect
    if not exp:
        return None
    if "trump" in exp:
        want = None if exp["trump"] is None else Suit.from_letter(exp["trump"])
        trump = game.round_trump if game.tricks or game.trick else game.trump
        if trump is not want:
            got = trump.letter if trump is not None else None
            return f"trump: expected {exp['trump']}, got {got}"
    if "trumps" in exp:
        got_t = [t.letter if t is not None else None for t in game.trick_trumps]
        if got_t != exp["trumps"]:
            return f"trumps: expected {exp['trumps']}, got {got_t}"
    result = game.results[-1] if game.results and game.results[-1].round == rd.round else None
    if "bids" in exp and game.bids != exp["bids"]:
        return f"bids: expected {exp['bids']}, got {game.bids}"
    if "trick_winners" in exp:
        got_w = [t.winner for t in game.tricks]
        if got_w != exp["trick_winners"]:
            return f"trick_winners: expected {exp['trick_winners']}, got {got_w}"
    if "tricks" in exp and list(game.tricks_won) != exp["tricks"]:
        return f"tricks: expected {exp['tricks']}, got {game.tricks_won}"
    for key in ("points", "totals"):
        if key in exp:
            if result is None:
                return f"{key}: the round was not scored (is it complete?)"
            values = list(getattr(result, key))
            if values != exp[key]:
                return f"{key}: expected {exp[key]}, got {values}"
    return None


_KINDS = {"trick": _trick_case, "legal": _legal_case, "score": _score_case, "game": _game_case}


def load_vectors(data: Any) -> list[Case]:
    """Parse one vector file's JSON value into runnable cases."""
    if not isinstance(data, dict):
        raise VectorFormatError("the file must hold one JSON object")
    if data.get("format") != FORMAT:
        raise VectorFormatError(f"'format' must be {FORMAT!r}, got {data.get('format')!r}")
    raw = data.get("cases")
    if not isinstance(raw, list):
        raise VectorFormatError("'cases' must be a list")
    cases: list[Case] = []
    seen: set[str] = set()
    for n, c in enumerate(raw):
        if not isinstance(c, dict):
            raise VectorFormatError(f"case #{n} is not an object")
        cid = c.get("id")
        if not isinstance(cid, str) or not cid:
            raise VectorFormatError(f"case #{n} has no string 'id'")
        if cid in seen:
            raise VectorFormatError(f"duplicate case id {cid!r}")
        seen.add(cid)
        kind = c.get("kind")
        if kind not in _KINDS:
            raise VectorFormatError(
                _where(cid, f"unknown kind {kind!r} (one of {', '.join(sorted(_KINDS))})")
            )
        try:
            cases.append(Case(cid, kind, c, _KINDS[kind](cid, c)))
        except _Skip as e:
            cases.append(Case(cid, kind, c, _not_run, skip=str(e)))
    return cases


def _not_run() -> str | None:
    return None


def run_case(case: Case) -> str | None:
    """Run one case: ``None`` when it passes (or is skipped: see
    :attr:`Case.skip`), else the first difference."""
    if case.skip:
        return None
    try:
        return case.run()
    except RuleError as e:
        return f"unexpected rule error: {e}"


@dataclass
class FileReport:
    path: str
    passed: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """Cases that could not be judged here, with the reason."""


def run_files(paths: Sequence[str | Path]) -> list[FileReport]:
    """Load every file first (raising VectorFormatError on the first bad one), then run."""
    loaded: list[tuple[str, list[Case]]] = []
    for p in paths:
        try:
            text = Path(p).read_text(encoding="utf-8")
        except OSError as e:
            raise VectorFormatError(f"{p}: cannot read: {e.strerror or e}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise VectorFormatError(f"{p}: not JSON: {e}") from None
        try:
            loaded.append((str(p), load_vectors(data)))
        except VectorFormatError as e:
            raise VectorFormatError(f"{p}: {e}") from None
    reports = []
    for path, cases in loaded:
        rep = FileReport(path)
        for case in cases:
            if case.skip:
                rep.skipped.append((case.id, case.skip))
                continue
            diff = run_case(case)
            if diff is None:
                rep.passed += 1
            else:
                rep.failures.append((case.id, diff))
        reports.append(rep)
    return reports


def main(paths: Sequence[str], verbose: bool = False) -> int:
    """CLI body: print failures, skipped cases and the ``N passed, M failed``
    line (``, K skipped`` added when any case was skipped); exit 0/1, 2 on a
    bad file. Skipped cases do not fail the run."""
    import sys

    if not paths:
        print("error: give at least one vector file", file=sys.stderr)
        return 2
    try:
        reports = run_files(paths)
    except VectorFormatError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    passed = sum(r.passed for r in reports)
    failed = sum(len(r.failures) for r in reports)
    skipped = sum(len(r.skipped) for r in reports)
    for r in reports:
        for cid, diff in r.failures:
            print(f"FAIL {r.path}: {cid}: {diff}")
        for cid, why in r.skipped:
            print(f"SKIP {r.path}: {cid}: {why}")
        if verbose:
            print(f"{r.path}: {_counts(r.passed, len(r.failures), len(r.skipped))}")
    print(_counts(passed, failed, skipped))
    return 1 if failed else 0


def _counts(passed: int, failed: int, skipped: int) -> str:
    """``N passed, M failed``, and ``, K skipped`` when any case was skipped."""
    return f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "")
