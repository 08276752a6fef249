"""The pages in a real browser: headless Chromium (Debian's ``chromium``,
installed by .ci/run) driven by Playwright, against ``wizard-arena web`` on
a store of real games, and against a referee playing a game step by step.

- the leaderboard shows every bot;
- the replay, stepped with the keyboard through whole rounds, shows the
  same tricks and scores as ``wizard-arena replay``;
- the tables-in-progress page shows no card of any hand while the game runs.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from wizard_arena.cli.web_options import WebOptions
from wizard_arena.protocol.messages import DecisionRequest
from wizard_arena.rules import Rules
from wizard_referee.referee.arena import Arena
from wizard_referee.tournament.cmd_replay import render
from wizard_referee.tournament.store import GameSpec, ResultsStore
from wizard_referee.web.serve import start_web

from .conftest import needs
from .memory_bots import MemBot, memory_arena
from .web_support import ENTRANTS, make_store

CHROMIUM = Path("/usr/bin/chromium")
playwright = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.e2e,
    needs("chromium", None if CHROMIUM.exists() else "no /usr/bin/chromium (.ci/run installs it)"),
    pytest.mark.timeout(240),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, list[GameSpec]]]:
    path = tmp_path_factory.mktemp("browser") / "t.sqlite"
    store, specs = make_store(path)
    store.close()
    proc = subprocess.Popen(
        [sys.executable, "-m", "wizard_arena.cli", "web", "--database", str(path), "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
        assert found, f"no address in {line!r}"
        yield found.group(1), path, specs
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_leaderboard_shows_the_bots(
    browser: Any, site: tuple[str, Path, list[GameSpec]]
) -> None:
    url, _, _ = site
    page = browser.new_page()
    page.goto(url + "/")
    page.wait_for_selector("#leaderboard tr[data-bot]")
    bots = page.eval_on_selector_all(
        "#leaderboard tr[data-bot]", "rows => rows.map(r => r.dataset.bot)"
    )
    assert sorted(bots) == sorted(ENTRANTS)
    assert page.locator("#plot").evaluate("img => img.naturalWidth") > 0
    page.close()


def test_the_replay_steps_through_rounds_as_the_replay_verb_prints_them(
    browser: Any, site: tuple[str, Path, list[GameSpec]]
) -> None:
    url, path, specs = site
    game_id = specs[5].id
    with ResultsStore(path, read_only=True) as store:
        record = store.record(game_id)
    assert record is not None
    text = render(record).splitlines()
    page = browser.new_page()
    page.goto(f"{url}/games/{game_id}")
    page.wait_for_selector("body[data-ready]")
    shown: list[str] = []
    tricks_drawn: list[list[str]] = []
    while True:
        log = page.inner_text("#log")
        shown.extend(log.splitlines())
        if page.get_attribute("#log", "data-kind") == "trick":
            tricks_drawn.append(
                page.eval_on_selector_all("#trick [data-card]", "cs => cs.map(c => c.dataset.card)")
            )
        step = int(page.get_attribute("#position", "data-step"))
        page.keyboard.press("ArrowRight")
        if int(page.get_attribute("#position", "data-step")) == step:
            break  # the last step
    page.keyboard.press("Home")
    assert page.get_attribute("#position", "data-step") == "0"
    # every trick and every score line, in order, as `wizard-arena replay` prints them
    assert [x.strip() for x in shown if x.strip().startswith("trick ")] == [
        x.strip() for x in text if x.startswith("  trick ")
    ]
    assert [x.strip() for x in shown if " total " in x] == [
        x.strip() for x in text if " total " in x
    ]
    # the table drew each trick's cards, as the line names them
    lines = [x for x in text if x.startswith("  trick ")]
    assert len(tricks_drawn) == len(lines)
    for drawn, line in zip(tricks_drawn, lines, strict=True):
        named = re.findall(r" (\w+)(?=,| ->)", line)
        assert drawn == named and len(drawn) == record.rules["players"]
    page.close()


def test_a_running_game_shows_no_card_of_a_hand(browser: Any) -> None:
    """A game whose bots answer only when the test lets them: after each
    decision the page is loaded again and every card on it must have been
    turned or played this round (never one still in a hand)."""
    rules = Rules(players=3, hand_sizes=(1, 2, 3))
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def serve() -> None:
        async with memory_arena(rules=rules) as arena, trio.open_nursery() as n:
            gate = trio.Semaphore(0)

            async def gated(bot: MemBot, req: DecisionRequest) -> bool:
                async def answer() -> None:
                    await gate.acquire()
                    bot.send_action(req.request_id, bot.random_action(req))

                n.start_soon(answer)
                return True

            urls = await start_web(n, WebOptions(port=0), arena)
            for i in range(3):
                await n.start(
                    MemBot(f"p{i}", rule_options=("round_sizes",), on_request=gated).run, arena
                )
            stop = trio.Event()
            box.update(arena=arena, gate=gate, url=urls[0], stop=stop)
            box["token"] = trio.lowlevel.current_trio_token()
            ready.set()
            await stop.wait()
            n.cancel_scope.cancel()

    thread = threading.Thread(target=trio.run, args=(serve,), daemon=True)
    thread.start()
    assert ready.wait(30)
    arena: Arena = box["arena"]

    def on_loop(fn: Any) -> Any:
        return trio.from_thread.run_sync(fn, trio_token=box["token"])

    def public() -> tuple[int, Counter[str]] | None:
        tables = list(arena.live_tables.values())
        if not tables:
            return None
        g = tables[0].game
        cards = Counter(c.text for t in g.tricks for c in t.cards)
        cards.update(c.text for c in g.trick)
        if g.turned_card is not None:
            cards[g.turned_card.text] += 1
        return g.round, cards

    page = browser.new_page()
    checked = steps = 0
    while on_loop(lambda: arena.games_played) == 0:
        page.goto(box["url"] + "/tables")
        page.wait_for_selector("#tables[data-updated]")
        shown = page.eval_on_selector_all(
            "#tables [data-card]", "cs => cs.map(c => c.dataset.card)"
        )
        head = page.inner_text("#tables")
        now = on_loop(public)
        if now is not None and f"round {now[0]} of" in head:
            leaked = Counter(shown) - now[1]
            assert not leaked, f"the page showed {sorted(leaked)} while in a hand"
            checked += len(shown)
        on_loop(box["gate"].release)
        steps += 1
    on_loop(box["stop"].set)
    thread.join(30)
    page.close()
    assert steps >= 18 and checked > 0
