"""One table: referee one game between connected bots.

:func:`run_table` deals, asks each seat in turn for its decision under a
per-move deadline (on trio's clock, the server's monotonic clock: the
table's :class:`~wizard_referee.referee.alarm.Alarm`), enforces every rule
through the rules core, and broadcasts what each seat may see. The seats
asked are the core's :attr:`Game.acting`: with hidden bids every seat that
has not bid yet is asked at once, each under its own deadline, and the core
reveals the bids together once the last is in. A bot never brings the table
down: illegal, malformed, late and out-of-turn messages are rejected or
ignored and recorded; a timeout or a disconnect makes the referee play the
core's default action (:func:`wizard_arena.rules.default_action`). The game
always finishes and its record says which seats were faulted and why; what a
fault costs beyond that is the fault policy's
(:mod:`wizard_referee.referee.faults`).

The table talks to bots only through the :class:`~wizard_referee.referee.seat.Seat`
protocol (the gRPC transport, or in-memory seats in tests), and keeps the
game flow; each seat's reading, routing, faults and resume are its
:class:`~wizard_referee.referee.seat_state.SeatState`'s.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import trio

from wizard_arena.bot import GameInfo
from wizard_arena.protocol.codes import FaultCode, RejectCode
from wizard_arena.protocol.messages import (
    DecisionRequest,
    FaultSummary,
    GameEnd,
)
from wizard_arena.protocol.seeds import bot_seed, new_secret
from wizard_arena.rules import (
    Action,
    Game,
    Phase,
    RuleError,
    Rules,
    SeatView,
    action_text,
    default_action,
    rank_totals,
)
from wizard_referee.referee.alarm import Alarm
from wizard_referee.referee.broadcast import send_new_events
from wizard_referee.referee.counters import ArenaCounters
from wizard_referee.referee.faults import FaultBook
from wizard_referee.referee.live import LiveTable
from wizard_referee.referee.logs import get_logger, log_decision
from wizard_referee.referee.pending import Allowance, Pending
from wizard_referee.referee.policy import RefereePolicy
from wizard_referee.referee.record import GameRecord, MoveRecord, RoundRecord
from wizard_referee.referee.seat import CloseCode, Seat, SeatSpec
from wizard_referee.referee.seat_state import SeatState

__all__ = ["SeatSpec", "run_table"]


class _Table:
    pending_type: type[Pending] = Pending
    """What a decision waits on (``tests/test_pending.py`` puts its
    reference version, a ``trio.move_on_at`` around the wait, here)."""

    def __init__(
        self,
        game_id: str,
        rules: Rules,
        seats: Sequence[SeatSpec],
        policy: RefereePolicy,
        seed: int | str | None,
        first_dealer: int | None,
        tags: dict[str, Any],
        bot_seed_secret: str | bytes | None,
        bot_seeds: Sequence[int] | None = None,
        counters: ArenaCounters | None = None,
        bot_game_id: str | None = None,
    ) -> None:
        n = rules.players
        self.counters = counters or ArenaCounters()
        self._ready = 0.0
        """trio time the referee was ready to ask for the next decision."""
        if len(seats) != n:
            raise ValueError(f"{n} players need {n} seats, got {len(seats)}")
        self.policy = policy
        self.move_time = policy.move_time
        self.lag_credit_cap = policy.lag_credit_cap
        self.game_id = game_id
        self.bot_game_id = bot_game_id or game_id
        """The game id the bots are told (the record and the log keep ``game_id``)."""
        self.rules = rules
        self.game = Game(rules, seed=seed, first_dealer=first_dealer)
        if bot_seeds is not None:
            if len(bot_seeds) != n or not all(0 < x < 2**64 for x in bot_seeds):
                raise ValueError(f"{n} bot seeds (1 to 2**64 - 1) are needed, got {bot_seeds}")
            self.bot_seeds = list(bot_seeds)
        else:
            secret = bot_seed_secret if bot_seed_secret is not None else new_secret()
            self.bot_seeds = [bot_seed(secret, game_id, s) for s in range(n)]
        """GameStarted.bot_seed by seat (from the secret, never from the deal's seed)."""
        self.log = get_logger(game_id=game_id)
        names = [s.name for s in seats]
        self.record = GameRecord.begin(game_id, self.game, names, seed, policy.fault_policy, tags)
        self.faults = FaultBook(policy.fault_policy, policy.max_faults, n)
        self.states = [
            SeatState(self, spec, s, self.faults, self.counters, bank=policy.time_bank)
            for s, spec in enumerate(seats)
        ]
        self.live = LiveTable(game_id, names, self.game, self.record)
        self._requests = 0
        self._moves: list[tuple[int, int, str, float, str | None, float]] = []
        """(round index, seat, action, ms, fault, credit ms) of each move, until
        the game ends."""
        self._nursery: trio.Nursery | None = None
        self._alarm = Alarm(self.states)
        for st in self.states:
            if st.gone and st.spec.conn is not None:
                st.fault(FaultCode.DISCONNECT, "not connected when the game started")
            if st.spec.conn is not None:
                st.spec.reattach = lambda conn, st=st: self._resume(st, conn)

    # -- a seat taken back on a new connection ------------------------------------------

    def _resume(self, st: SeatState, conn: Seat) -> None:
        """The seat's bot is back on ``conn`` (a resumed session), while the
        game runs: the seat takes it back and its reader starts again."""
        if self._nursery is None or self.game.is_over:
            return
        st.reattach(conn)
        self._nursery.start_soon(st.read)

    # -- what has arrived first ------------------------------------------------------------

    def _backlog(self) -> list[tuple[SeatState, Seat, int]] | None:
        """The seats whose bots' messages have arrived and are unread, if any."""
        marks = None
        for st in self.states:
            conn = st.spec.conn
            if conn is not None and conn.unread:
                mark = st.backlog()
                if mark is not None:
                    marks = marks or []
                    marks.append((st, *mark))
        return marks

    async def _hear_out(self, marks: list[tuple[SeatState, Seat, int]] | None) -> None:
        """Let the seats' readers handle what had arrived (``marks``, from
        :meth:`_backlog`) before the game moves on, so that the outcome does
        not depend on whether trio ran a reader or the table first at one
        instant (docs/protocol.md, "Deadlines, late answers and the default
        action"). What arrives meanwhile is not waited for."""
        while marks:
            await trio.lowlevel.checkpoint()
            marks = [m for m in marks if not m[0].caught_up(m[1], m[2])]

    # -- one decision -----------------------------------------------------------------------

    async def _decide(self, st: SeatState, view: SeatView) -> tuple[Action, float, str | None]:
        """Get a legal action from the seat (applying it) or play the default.

        The deadline is the move time, plus the network credit (the bot's
        round trip, measured by its clock probes: :meth:`SeatState.asking`),
        plus what is left of its time bank; the bank pays only for what goes
        beyond the move time and the credit."""
        marks = self._backlog()
        if marks:
            await self._hear_out(marks)  # (what came before the request is not its answer)
        benched = st.benched()
        if benched is not None:
            action = default_action(view.legal_actions)
            self.game.apply(st.seat, action)
            return action, 0.0, benched
        self._requests += 1
        rid = f"{self.bot_game_id}-{self._requests}"
        st.spec.issued.add(rid)
        start = trio.current_time()
        credit = st.asking()
        allowance = Allowance(self.move_time, credit, st.bank)
        pending = st.pending = self.pending_type(rid, start, allowance, st.send_answer)
        self._alarm.asked(pending.deadline)
        self.counters.referee_seconds.observe(start - self._ready)
        # (the view carries the move time already: _turn)
        st.send(DecisionRequest(rid, self.bot_game_id, view, st.bank, credit))
        answer: Action | None = None
        try:
            answer, dropped = await self._answer(st, pending)
        finally:
            st.pending = None
            took = trio.current_time() - start
            st.asked(took if answer is not None else None)
        if answer is not None:
            self.counters.bot_seconds.observe(took)
            st.spec.timeouts_in_a_row = 0
            st.bank = pending.bank_after(took)
            return answer, took * 1000, None
        fault = self._unanswered(st, pending, dropped, took)
        action = default_action(view.legal_actions)
        self.game.apply(st.seat, action)
        return action, took * 1000, fault

    async def _answer(self, st: SeatState, pending: Pending) -> tuple[Action | None, bool]:
        """Wait for a legal answer to the ``pending`` request and apply it:
        ``(action, False)``; ``(None, True)`` if the bot went, ``(None,
        False)`` at the deadline (or when a fault benched the seat
        meanwhile). Illegal and malformed answers are rejected and faulted;
        the bot may retry in time.

        The deadline is kept by the table's :class:`~.alarm.Alarm`."""
        game = self.game
        seat = st.seat
        rid = pending.request_id
        while True:
            try:
                msg = await pending.next_answer(st.answers)
            except (trio.EndOfChannel, trio.ClosedResourceError):
                return None, True
            marks = self._backlog()
            if marks:
                await self._hear_out(marks)  # (before the answer or the timeout is settled)
            if msg is None:
                return None, False
            if msg.action is None:
                st.fault(FaultCode.MALFORMED, msg.error)
                st.reject(rid, RejectCode.MALFORMED, f"seat {seat}: {msg.error}", st.time_left())
                continue
            try:
                game.apply(seat, msg.action)
            except RuleError as e:
                st.fault(FaultCode.ILLEGAL, str(e))
                st.reject(rid, e.code, str(e), st.time_left())
                continue
            return msg.action, False

    def _unanswered(self, st: SeatState, pending: Pending, dropped: bool, took: float) -> str:
        """Why the seat's open decision had no answer (the move's fault):
        its bot went, a fault benched it meanwhile, or time ran out (a
        timeout fault; the time bank is spent)."""
        if dropped:
            st.bank = pending.bank_after(took)
            return FaultCode.DISCONNECT
        sanction = self.faults.benched(st.seat, self.game.round)
        if sanction is not None:
            return sanction  # benched while it was asked
        credit = f" + {st.credit:g} s network credit" if st.credit else ""
        bank = f" and the {st.bank:g} s time bank" if st.bank else ""
        st.bank = 0.0
        st.fault(FaultCode.TIMEOUT, f"no legal answer within {self.move_time:g} s{credit}{bank}")
        self._count_timeout(st)
        return FaultCode.TIMEOUT

    def _count_timeout(self, st: SeatState) -> None:
        """One more decision of the seat timed out: after
        ``max_consecutive_timeouts`` in a row its stream is closed (the bot
        is not answering; it is not seated again, and may connect again)."""
        spec = st.spec
        spec.timeouts_in_a_row += 1
        limit = self.policy.max_consecutive_timeouts
        conn = st.conn
        if limit and spec.timeouts_in_a_row >= limit and conn is not None:
            details = (
                f"{spec.timeouts_in_a_row} decisions in a row timed out "
                f"({self.move_time:g} s each): the bot is not answering; "
                "it is not seated again until it connects again"
            )
            self.log.warning("not_answering", seat=st.seat, bot=spec.name, timeouts=limit)
            conn.close(CloseCode.DEADLINE_EXCEEDED, details)

    def game_info(self, st: SeatState) -> GameInfo:
        """The seat's GameStarted."""
        names, seat = tuple(self.record.names), st.seat
        return GameInfo(
            self.bot_game_id,
            self.rules,
            seat,
            names,
            self.move_time,
            st.bank,
            self.bot_seeds[seat],
        )

    # -- the game -------------------------------------------------------------------------

    async def _turn(self, seat: int) -> None:
        """Ask ``seat`` for its decision (it is applied) and record the move."""
        game = self.game
        st = self.states[seat]
        round_no = game.round
        view = game.view(seat, self.move_time)  # as the request gives it
        st.credit = 0.0
        action, ms, fault = await self._decide(st, view)
        self.counters.decisions += 1
        self._ready = trio.current_time()
        text = action_text(action)
        ms = round(ms, 3)
        credit_ms = round(st.credit * 1000) if st.credit else 0.0  # (whole 10 ms steps)
        # a tuple of atoms, which the cyclic GC stops tracking (settle_moves)
        self._moves.append((len(self.record.rounds) - 1, seat, text, ms, fault, credit_ms))
        log_decision(self.log, round_no, seat, st.spec.name, text, ms, fault)

    def settle_moves(self) -> None:
        """The moves so far into the record's rounds, as MoveRecords (kept as
        plain tuples while the game runs, out of the cyclic GC's way: nobody
        reads a record's moves before its game ends or aborts)."""
        rounds = self.record.rounds
        for index, seat, text, ms, fault, credit_ms in self._moves:
            rounds[index].moves.append(MoveRecord(seat, text, ms, fault, credit_ms))
        self._moves.clear()

    async def run(self) -> GameRecord:
        for st in self.states:
            st.send(self.game_info(st))
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._alarm.run)
            for st in self.states:
                nursery.start_soon(st.read)
            await self._play()
            nursery.cancel_scope.cancel()
        self._nursery = None
        for st in self.states:
            st.spec.reattach = None
        return self._finish()

    async def _play(self) -> None:
        game = self.game
        while not game.is_over:
            if game.phase is Phase.DEAL:
                self._ready = trio.current_time()
                game.deal()
                self.record.rounds.append(
                    RoundRecord(
                        game.round,
                        game.dealer,
                        [[c.text for c in h] for h in game.dealt_hands],
                        game.turned_card.text if game.turned_card is not None else None,
                    )
                )
                send_new_events(self.game, self.bot_game_id, self.states)
                continue
            self.live.tick()
            acting = game.acting
            if len(acting) == 1:
                await self._turn(acting[0])
            else:
                # hidden bids: every seat that has not bid is asked at once;
                # each applies its own bid, and the core reveals them all
                # together once the last is in
                async with trio.open_nursery() as asking:
                    for seat in acting:
                        asking.start_soon(self._turn, seat)
            send_new_events(self.game, self.bot_game_id, self.states)
        self.live.tick()

    def _finish(self) -> GameRecord:
        """Complete the record (results, penalties, totals with them, ranks)
        and send every seat the end of the game."""
        game = self.game
        rec = self.record
        self.settle_moves()
        rec.results = [
            [list(r.bids), list(r.tricks), list(r.points), list(r.totals)] for r in game.results
        ]
        self.faults.add_penalties(game.results, [[len(h) for h in r.hands] for r in rec.rounds])
        self.faults.write(rec)
        extra = rec.penalty_totals()
        rec.totals = [t + p for t, p in zip(game.totals, extra, strict=True)]
        rec.ranks = rank_totals(rec.totals)
        rec.status = "finished"
        rec.finished_at = time.time()
        faults = tuple(
            FaultSummary(s, code, count, rec.fault_details[s].get(code, ""))
            for s, per in enumerate(rec.faults)
            for code, count in sorted(per.items())
        )
        end = GameEnd(self.bot_game_id, tuple(rec.totals), tuple(rec.ranks), faults)
        for st in self.states:
            st.send(end)
        self.log.info(
            "game_over",
            totals=rec.totals,
            ranks=rec.ranks,
            faulted=rec.faulted_seats,
            names=rec.names,
        )
        return rec


async def run_table(
    game_id: str,
    rules: Rules,
    seats: Sequence[SeatSpec],
    *,
    policy: RefereePolicy | None = None,
    seed: int | str | None = None,
    first_dealer: int | None = None,
    tags: dict[str, Any] | None = None,
    bot_seed_secret: str | bytes | None = None,
    bot_seeds: Sequence[int] | None = None,
    live: dict[str, LiveTable] | None = None,
    counters: ArenaCounters | None = None,
    bot_game_id: str | None = None,
) -> GameRecord:
    """Referee one full game; return its record.

    ``policy`` (default :class:`RefereePolicy()`) gives the move time and the
    time bank, the fault policy (what a fault costs the seat beyond the
    default action: docs/protocol-reference.md, "Fault policy") and
    ``max_consecutive_timeouts`` (a seat's stream is closed,
    DEADLINE_EXCEEDED, once this many of its decisions in a row timed out,
    counting from ``SeatSpec.timeouts_in_a_row``; 0: never).

    ``first_dealer`` deals round 1 (None: seat 0, or the seat drawn under
    ``first_dealer_by_draw``, whose draw comes from the deal ``seed``).
    ``bot_seed_secret``: the secret each seat's ``GameStarted.bot_seed`` is
    derived from with the game id and the seat (:mod:`wizard_arena.protocol.seeds`;
    default: a random one for this game alone); ``bot_seeds`` gives each
    seat's seed instead (two games may then share some seats' seeds).

    ``live``: the game is listed there (by id) while it runs (spectators);
    ``counters``: where its decisions, latency, faults and messages are counted;
    ``bot_game_id``: the id the bots are told (default ``game_id``; the record,
    the log and ``live`` keep ``game_id``).

    An unexpected internal error does not propagate: the record comes back
    with ``status="aborted"`` and the error, and the other tables go on.
    """
    table = _Table(
        game_id,
        rules,
        seats,
        policy or RefereePolicy(),
        seed,
        first_dealer,
        tags or {},
        bot_seed_secret,
        bot_seeds,
        counters,
        bot_game_id,
    )
    if live is not None:
        live[game_id] = table.live
    try:
        return await table.run()
    except Exception as e:
        table.log.exception("table_aborted", error=repr(e))
        # the table's nursery wraps the error in an ExceptionGroup: name the cause
        cause: Exception = e
        while isinstance(cause, ExceptionGroup) and len(cause.exceptions) == 1:
            cause = cause.exceptions[0]
        table.settle_moves()
        table.record.status = "aborted"
        table.record.error = f"{type(cause).__name__}: {cause}"
        table.record.finished_at = time.time()
        return table.record
    finally:
        if live is not None:
            live.pop(game_id, None)
