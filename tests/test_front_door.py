"""The front door (referee/front_door.py): streams that have not said Hello
are bounded in all and per peer, a probe reply is no way in, probe replies
count against the flood limit, failed logins back off per peer and are
logged with the peer's address, and a token book is asked off the trio
thread. On trio's virtual clock, with in-memory seats; over gRPC where the
transport matters (IPv6)."""

from __future__ import annotations

import socket
import threading
from typing import Any

import grpc
import pytest
import trio

from wizard_arena.protocol.messages import ClockProbe, ClockProbeReply, Hello
from wizard_referee.referee.arena import CHURN_PERIOD, release_after_floods
from wizard_referee.referee.front_door import FREE_FAILURES, peer_key
from wizard_referee.referee.handshake import TokensUnavailable
from wizard_referee.referee.memory import MemorySeat
from wizard_referee.referee.seat import CloseCode

from .conftest import LogSink
from .memory_bots import MemBot, memory_arena, on_mock_clock, play, start, wait_until
from .support import RawBot, wait_for


def _from(peer: str, name: str, **kw: Any) -> MemBot:
    """A bot whose connection comes from ``peer``."""
    return MemBot(name, seat=MemorySeat(peer=peer), **kw)


def _mute(peer: str, name: str) -> MemBot:
    return _from(peer, name, hello=False, games=None)


# -- streams without a Hello ---------------------------------------------------------------


@on_mock_clock
async def test_streams_without_a_hello_are_bounded_in_all() -> None:
    async with memory_arena(max_greeting=2, max_greeting_per_peer=0, hello_timeout=2.0) as arena:
        async with trio.open_nursery() as nursery:
            mutes = [_mute(f"ipv4:10.0.0.{i}:1000", f"m{i}") for i in range(2)]
            await start(nursery, arena, *mutes)
            third = _mute("ipv4:10.0.0.9:1000", "third")
            await start(nursery, arena, third)
            await wait_until(lambda: third.closed_with is not None)
            assert trio.current_time() < 0.1  # at once
            assert third.closed_with == (
                CloseCode.RESOURCE_EXHAUSTED,
                "too many streams without a Hello (2 at most)",
            )
            assert arena.counters.refused["greeting limit"] == 1
        # the two timed out (hello_timeout): the door is open again, nothing kept
        assert all(m.status == CloseCode.INVALID_ARGUMENT for m in mutes)
        assert arena.front_door.greeting == 0 and arena.front_door.greeting_from("10.0.0.0") == 0
        assert not arena.connections
        late = _from("ipv4:10.0.0.9:1000", "late", games=None)
        async with trio.open_nursery() as nursery:
            await start(nursery, arena, late)
            await wait_until(lambda: late.welcome is not None)
            assert arena.front_door.greeting == 0  # greeted: no longer counted
            nursery.cancel_scope.cancel()


@on_mock_clock
async def test_streams_without_a_hello_are_bounded_per_peer() -> None:
    async with (
        memory_arena(max_greeting_per_peer=2, hello_timeout=1.0) as arena,
        trio.open_nursery() as nursery,
    ):
        mutes = [_mute(f"ipv4:10.0.0.1:{1000 + i}", f"m{i}") for i in range(3)]
        # an IPv6 peer counts by its /64: another address of the same network is refused
        six = [_mute(f"ipv6:[2001:db8::{i + 1}]:443", f"s{i}") for i in range(3)]
        other = _mute("ipv4:10.0.0.2:1000", "other")
        await start(nursery, arena, *mutes, *six, other)
        await trio.sleep(0.01)
        refused = (CloseCode.RESOURCE_EXHAUSTED, "too many streams without a Hello")
        for bot in (mutes[2], six[2]):
            assert bot.closed_with is not None
            assert (bot.status, bot.details[: len(refused[1])]) == refused
            assert bot.details.endswith("from this address (2 at most)")
        assert all(b.closed_with is None for b in (*mutes[:2], *six[:2], other))
        assert arena.front_door.greeting_from("2001:db8::/64") == 2
    assert arena.front_door.greeting == 0


@on_mock_clock
async def test_this_machines_own_streams_are_not_capped_per_peer() -> None:
    """Loopback and Unix-socket peers (a host's entrants, benches) count
    against the cap in all only."""
    async with memory_arena(max_greeting=5, max_greeting_per_peer=1, hello_timeout=1.0) as arena:
        peers = ["ipv4:127.0.0.1:1", "ipv4:127.0.0.1:2", "ipv6:[::1]:3", "unix:", "unix:"]
        mutes = [_mute(p, f"m{i}") for i, p in enumerate(peers)]
        async with trio.open_nursery() as nursery:
            await start(nursery, arena, *mutes)
            await trio.sleep(0.01)
            assert all(m.closed_with is None for m in mutes)
            assert arena.front_door.greeting == 5
            extra = _mute("ipv4:127.0.0.1:4", "extra")
            await start(nursery, arena, extra)
            await trio.sleep(0.01)
            assert extra.details == "too many streams without a Hello (5 at most)"


@on_mock_clock
async def test_the_hello_timeout_is_short_by_default() -> None:
    async with memory_arena() as arena:
        bot = _mute("ipv4:10.0.0.1:1", "mute")
        await play(arena, bot)
        assert trio.current_time() == pytest.approx(5.0)
    assert bot.closed_with == (CloseCode.INVALID_ARGUMENT, "no Hello within the hello timeout")


def test_peer_keys() -> None:
    assert peer_key("ipv4:127.0.0.1:1") == peer_key("ipv6:[::ffff:127.0.0.1]:2") == "127.0.0.1"
    assert peer_key("ipv6:[2001:db8:0:1::5]:1") == peer_key("ipv6:[2001:db8:0:1:ff::9]:2")
    assert peer_key("ipv6:[2001:db8:0:2::5]:1") != peer_key("ipv6:[2001:db8:0:1::5]:1")


# -- clock probe replies -------------------------------------------------------------------


@on_mock_clock
async def test_a_probe_reply_as_first_message_is_refused_at_once() -> None:
    async with memory_arena() as arena:
        bot = MemBot("sly", first=[ClockProbeReply("x")], games=None)
        await play(arena, bot)
        assert trio.current_time() == 0.0
    assert bot.closed_with == (CloseCode.INVALID_ARGUMENT, "the first message must be a Hello")
    assert arena.counters.refused["first message not a hello"] == 1


@pytest.mark.parametrize("cap", [0.5, 0.0], ids=["probes", "no-probes"])
@on_mock_clock
async def test_a_flood_of_probe_replies_is_cut_off(cap: float) -> None:
    """Replies beyond the probes sent count against the inbound limit, with
    probes granted or not: the bot is cut off at the limit's first excess."""
    async with memory_arena(lag_credit_cap=cap, inbound_limit=8) as arena:
        sent: list[int] = []

        async def flood(bot: MemBot, msg: Any) -> None:
            if msg is bot.welcome:
                for i in range(1000):
                    if bot.closed_with is not None:
                        break
                    bot.send(ClockProbeReply(f"made-up-{i}"))
                    sent.append(i)
                    await trio.sleep(0)

        bot = MemBot("flood", games=None, on_message=flood)
        bot.hello = Hello("flood", clock_probes=True)
        await play(arena, bot)
    assert bot.status == CloseCode.RESOURCE_EXHAUSTED
    assert "clock probe replies" in bot.details
    assert len(sent) < 8 + 20  # the limit, and the probes sent meanwhile


@on_mock_clock
async def test_an_honest_bot_answering_every_probe_late_is_never_cut_off() -> None:
    """Each probe earns one reply, however late: a bot answering every
    probe twice as late as the probe timeout for minutes stays connected."""
    async with memory_arena(inbound_limit=2) as arena, trio.open_nursery() as nursery:

        async def late(bot: MemBot, msg: Any) -> None:
            if isinstance(msg, ClockProbe):
                nursery.start_soon(_answer_later, bot, msg.id)

        bot = MemBot("slow", games=None, on_message=late)
        bot.hello = Hello("slow", clock_probes=True)
        await start(nursery, arena, bot)
        await trio.sleep(600)
        assert bot.closed_with is None
        (session,) = arena.sessions.values()
        assert session.conn.clock is not None and session.conn.clock.sent > 10
        nursery.cancel_scope.cancel()


async def _answer_later(bot: MemBot, probe_id: str) -> None:
    await trio.sleep(10.0)
    bot.send(ClockProbeReply(probe_id))


# -- failed authentication -------------------------------------------------------------------


@on_mock_clock
async def test_failed_logins_back_off_per_peer_and_are_logged(logs: LogSink) -> None:
    peer = "ipv4:203.0.113.7:4000"
    async with memory_arena(tokens=frozenset({"right"}), auth_backoff=1.0) as arena:
        wrong = [_from(peer, f"w{i}", token=f"wrong-secret-{i}") for i in range(FREE_FAILURES + 1)]
        for bot in wrong:
            await play(arena, bot)
        assert {b.closed_with for b in wrong} == {
            (CloseCode.UNAUTHENTICATED, "invalid access token")
        }
        # backing off: refused at once, its token not even read
        blocked = _from(peer, "blocked", token="right")
        await play(arena, blocked)
        assert blocked.status == CloseCode.RESOURCE_EXHAUSTED
        assert blocked.details.startswith("too many failed authentications from this address")
        # another address is not concerned
        elsewhere = _from("ipv4:203.0.113.8:4000", "elsewhere", token="right", games=None)
        # once the back-off is over, a right token clears the record
        await trio.sleep(1.0)
        good = _from(peer, "good", token="right", games=None)
        async with trio.open_nursery() as nursery:
            await start(nursery, arena, elsewhere, good)
            await wait_until(lambda: elsewhere.welcome is not None and good.welcome is not None)
            nursery.cancel_scope.cancel()
        assert arena.front_door.failures("203.0.113.7") == 0
        assert arena.counters.refused["auth backoff"] == 1
    events = [e for e in logs.events() if e["event"] == "auth_failed"]
    assert len(events) == FREE_FAILURES + 1
    assert {e["peer"] for e in events} == {peer} and {e["level"] for e in events} == {"warning"}
    assert [e["backoff"] for e in events] == [0.0] * FREE_FAILURES + [1.0]
    assert "wrong-secret" not in str(logs.events())


@on_mock_clock
async def test_the_back_off_doubles_with_each_failure() -> None:
    async with memory_arena(tokens=frozenset({"right"}), auth_backoff=0.5) as arena:
        waits = []
        for i in range(FREE_FAILURES + 3):
            await play(arena, _from("ipv4:10.1.1.1:1", f"w{i}", token="no"))
            waits.append(arena.front_door.blocked("10.1.1.1", trio.current_time()))
            await trio.sleep(waits[-1])
    assert waits == [0.0] * FREE_FAILURES + [0.5, 1.0, 2.0]


class _Book:
    """A token book that notes the thread each lookup runs in."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def refusal(self, token: str) -> str | None:
        self.threads.append(threading.get_ident())
        return None if token == "good" else "invalid access token"


def test_a_token_book_is_asked_off_the_trio_thread() -> None:
    book = _Book()

    async def main() -> MemBot:
        async with memory_arena(tokens=book) as arena:
            good, bad = MemBot("g", token="good"), MemBot("b", token="bad")
            await play(arena, bad)
            async with trio.open_nursery() as nursery:
                await start(nursery, arena, good)
                await wait_until(lambda: good.welcome is not None)
                nursery.cancel_scope.cancel()
        return bad

    bad = trio.run(main)
    assert bad.closed_with == (CloseCode.UNAUTHENTICATED, "invalid access token")
    assert len(book.threads) == 2 and threading.get_ident() not in book.threads


class _DownBook:
    """A token book whose store does not answer (a database outage)."""

    def refusal(self, token: str) -> str | None:
        raise TokensUnavailable("the store cannot be reached just now: try again shortly")


@on_mock_clock
async def test_a_token_store_that_does_not_answer_is_no_failed_login() -> None:
    """While the tokens' store is down every Hello is asked to try again
    (UNAVAILABLE, which the SDK retries), and none counts towards the
    peer's back-off: an outage does not lock honest bots out after it."""
    peer = "ipv4:203.0.113.9:4000"
    async with memory_arena(tokens=_DownBook(), auth_backoff=1.0) as arena:
        bots = [_from(peer, f"b{i}", token="right") for i in range(FREE_FAILURES + 2)]
        for bot in bots:
            await play(arena, bot)
        assert {b.status for b in bots} == {CloseCode.UNAVAILABLE}
        assert arena.front_door.failures("203.0.113.9") == 0
        assert arena.front_door.blocked("203.0.113.9", trio.current_time()) == 0


# -- IPv6 ------------------------------------------------------------------------------------


def _ipv6_loopback() -> bool:
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


needs_ipv6 = pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback (::1) here")


@needs_ipv6
@pytest.mark.parametrize("host", ["::1", "[::1]", "::"])
def test_serving_over_ipv6_with_the_kernel_round_trip(serve: Any, host: str) -> None:
    """``--host ::`` and ``[::]`` bind; a bot over ::1 plays, its peer is
    counted by its address, and the kernel's round trip of its connection
    is read (tcp_rtt over IPv6)."""
    server = serve(host=host)
    arena = server.arena
    assert arena is not None
    assert arena.address == f"[{host.strip('[]')}]:{arena.port}"
    bot = RawBot(f"[::1]:{arena.port}", "six", games=None).start()
    wait_for(lambda: bot.welcome is not None)
    (session,) = arena.sessions.values()
    assert peer_key(session.conn.peer) == "::1"  # (grpc writes ipv6:%5B::1%5D:PORT)
    rtt = session.conn.kernel_rtt()
    assert rtt is not None and 0 < rtt < 0.05
    bot.close_send()
    bot.join(10)
    assert bot.status == grpc.StatusCode.OK


# -- memory after a flood ----------------------------------------------------------------------


@on_mock_clock
async def test_freed_memory_is_released_once_a_flood_is_over() -> None:
    """300 streams in one period are a flood: once it is over (a period
    with fewer), the memory is released, once; then again when as many
    streams that stayed open have gone."""
    settings = {"max_greeting": 0, "max_greeting_per_peer": 0, "hello_timeout": 20.0}
    async with memory_arena(**settings) as arena, trio.open_nursery() as nursery:
        nursery.start_soon(release_after_floods, arena)
        await trio.sleep(1.0)
        mutes = [_mute(f"ipv4:10.2.0.{i % 250}:{i}", f"m{i}") for i in range(300)]
        await start(nursery, arena, *mutes)
        await trio.sleep(2 * CHURN_PERIOD)
        assert arena.memory_releases == 1  # the flood is over, its streams still open
        await trio.sleep(20.0)  # they time out and go
        assert not arena.connections
        assert arena.memory_releases == 2
        await trio.sleep(3 * CHURN_PERIOD)  # quiet: nothing more
        assert arena.memory_releases == 2
        nursery.cancel_scope.cancel()
