"""The referee's Prometheus metrics at /metrics, counted by the real arena
and tables (in-memory seats, trio's virtual clock) and checked against the
game's record; a registry per server; and the pages and metrics served by a
real hypercorn on port 0 (``start_web``, as ``serve --web 0 --metrics-port 0``)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import httpx
import pytest
import trio
from prometheus_client.parser import text_string_to_metric_families

from wizard_arena.cli.web_options import WebOptions
from wizard_arena.protocol.codes import FaultCode
from wizard_arena.protocol.messages import DecisionRequest
from wizard_arena.rules import Bid, Rules
from wizard_referee.referee.arena import Arena
from wizard_referee.web.app import WebState, create_app
from wizard_referee.web.serve import start_web

from .memory_bots import MemBot, memory_arena, on_mock_clock
from .support import scaled

RULES = Rules(players=3, hand_sizes=(1, 2, 3))


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


async def scrape(arena: Arena) -> dict[Any, float]:
    transport = httpx.ASGITransport(app=create_app(WebState(arena=arena)))
    async with httpx.AsyncClient(transport=transport, base_url="http://w") as c:
        r = await c.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return samples(r.text)


async def illegal_first(bot: MemBot, req: DecisionRequest) -> bool:
    """An out-of-range bid once (a fault), then legal answers."""
    if not bot.state.get("done") and req.view.legal_bids:
        bot.state["done"] = True
        bot.send_action(req.request_id, Bid(99))
    return False


@on_mock_clock
async def test_metrics_count_what_the_record_says() -> None:
    async with memory_arena(rules=RULES, max_connections=3) as arena, trio.open_nursery() as n:
        bots = [MemBot("a", rule_options=("round_sizes",), on_request=illegal_first, think=0.01)]
        bots += [MemBot(f"b{i}", rule_options=("round_sizes",), think=0.02) for i in range(2)]
        for bot in bots:
            await n.start(bot.run, arena)
        extra = MemBot("late", rule_options=("round_sizes",))
        await n.start(extra.run, arena)  # the server is full: refused
        for bot in bots:
            await bot.done.wait()
        m = await scrape(arena)
        n.cancel_scope.cancel()
    (record,) = list(arena.records)
    moves = [mv for rr in record.rounds for mv in rr.moves]
    answered = [mv for mv in moves if mv.fault is None]
    assert m[("wizard_arena_games_finished_total", ())] == 1
    assert m[("wizard_arena_decisions_total", ())] == len(moves)
    assert m[("wizard_arena_bot_decision_seconds_count", ())] == len(answered)
    assert m[("wizard_arena_bot_decision_seconds_sum", ())] == pytest.approx(
        sum(mv.ms for mv in answered) / 1000, abs=1e-3
    )
    assert m[("wizard_arena_referee_latency_seconds_count", ())] == len(moves)
    assert m[("wizard_arena_faults_total", (("code", "illegal"),))] == record.faults[0]["illegal"]
    # every other code is there from the start, at 0
    for code in FaultCode:
        if code is not FaultCode.ILLEGAL:
            assert m[("wizard_arena_faults_total", (("code", code.value),))] == 0
    assert m[("wizard_arena_refused_connections_total", (("reason", "server full"),))] == 1
    requests = sum(len(b.requests) for b in bots)
    assert m[("wizard_arena_messages_total", (("direction", "in"),))] >= 3 + requests
    sent = sum(len(b.received) for b in bots)
    assert m[("wizard_arena_messages_total", (("direction", "out"),))] == sent
    assert m[("wizard_arena_tables_running", ())] == 0
    inf = ("wizard_arena_bot_decision_seconds_bucket", (("le", "+Inf"),))
    assert m[inf] == len(answered)


@on_mock_clock
async def test_each_server_counts_its_own() -> None:
    async with memory_arena(rules=RULES) as one, memory_arena(rules=RULES) as two:
        async with trio.open_nursery() as n:
            for i in range(3):
                await n.start(MemBot(f"m{i}", rule_options=("round_sizes",)).run, one)
        first, second = await scrape(one), await scrape(two)
    assert first[("wizard_arena_games_finished_total", ())] == 1
    assert second[("wizard_arena_games_finished_total", ())] == 0
    assert second[("wizard_arena_decisions_total", ())] == 0


@pytest.mark.e2e
def test_pages_and_metrics_on_a_real_hypercorn() -> None:
    async def main() -> None:
        async with memory_arena(rules=RULES) as arena, trio.open_nursery() as n:
            urls = await start_web(n, WebOptions(port=0, metrics_port=0), arena)
            assert len(urls) == 2 and all(u.startswith("http://127.0.0.1:") for u in urls)
            async with httpx.AsyncClient() as c:
                home = await c.get(urls[0] + "/")
                tables = await c.get(urls[0] + "/api/tables")
                games = await c.get(urls[0] + "/api/games")
                metrics = await c.get(urls[1])
                metrics_host = urls[1].removesuffix("/metrics")
                not_there = [await c.get(metrics_host + p) for p in ("/api/tables", "/", "/games")]
            assert home.status_code == 200 and "Tables in progress" in home.text
            assert tables.json() == {"spectator_delay": None, "tables": []}
            assert games.json() == {"games": []}
            assert "wizard_arena_decisions_total 0.0" in metrics.text
            assert [r.status_code for r in not_there] == [404] * 3  # the metrics port: /metrics
            n.cancel_scope.cancel()

    trio.run(main)


@pytest.mark.e2e
def test_serve_prints_the_metrics_port_as_an_address_that_answers() -> None:
    """``serve --metrics-port 0`` printed ``web pages and metrics:
    http://...:P/metrics/``: not pages, and a redirect; each printed address
    now answers as it says."""
    serve = ["serve", "--port", "0", "--web", "0", "--metrics-port", "0", "--log-level", "warning"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "wizard_arena.cli", *serve],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        lines = [proc.stderr.readline() for _ in range(3)]
        pages = [line.split(": ", 1)[1].strip() for line in lines if "web pages" in line]
        metrics = [line.split(": ", 1)[1].strip() for line in lines if line.startswith("metrics")]
        assert len(pages) == 1 and len(metrics) == 1, lines
        assert httpx.get(pages[0]).status_code == 200
        scraped = httpx.get(metrics[0])
        assert scraped.status_code == 200 and "wizard_arena_decisions_total" in scraped.text
    finally:
        proc.terminate()
        proc.wait(timeout=scaled(30))


def test_every_refusal_reason_is_exported_at_zero_from_the_start() -> None:
    """Prometheus expects a counter's series before its first increment."""
    from wizard_referee.referee.counters import REFUSED_REASONS

    async def main() -> dict[Any, float]:
        async with memory_arena(rules=RULES) as arena:
            return await scrape(arena)

    m = trio.run(main)
    for reason in REFUSED_REASONS:
        assert m[("wizard_arena_refused_connections_total", (("reason", reason),))] == 0
    for code in FaultCode:
        assert m[("wizard_arena_faults_total", (("code", code.value),))] == 0


def test_the_docs_list_every_refusal_reason() -> None:
    from wizard_referee.referee.counters import REFUSED_REASONS

    from .conftest import ROOT

    doc = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    line = next(x for x in doc.splitlines() if "wizard_arena_refused_connections_total" in x)
    listed = line.split("streams refused:", 1)[1].split(", every reason", 1)[0]
    assert [x.strip(" `") for x in listed.split(",")] == list(REFUSED_REASONS)
