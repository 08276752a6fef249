"""The pages in a real browser: headless Chromium (Debian's ``chromium``,
installed by .ci/run) driven by Playwright, against ``wizard-arena web`` on
a store of real games, and against a referee playing a game step by step.

- the leaderboard shows every bot;
- the replay, stepped with the keyboard through whole rounds, shows the
  same tricks and scores as ``wizard-arena replay``, the winning card of
  each trick marked; it plays and pauses at a chosen speed, follows a
  ``#N`` typed after loading, keeps the score pad and the chart of totals
  up to the step shown, and lists the result in rank order;
- every page fits a 420-pixel phone screen, names long or odd;
- the tables-in-progress page shows no card of any hand while the game runs.

A failing test saves a screenshot of its page under its temporary folder
and prints the path.
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
from urllib.parse import quote

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

HeuristicBot, RandomBot = ENTRANTS["alice"], ENTRANTS["bob"]

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


@pytest.fixture
def new_page(browser: Any, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A fresh page (``new_page(width=...)`` for a narrow one); a screenshot
    of each under the test's temporary folder if the test fails."""
    pages: list[Any] = []

    def make(width: int = 1200, height: int = 900) -> Any:
        page = browser.new_page(viewport={"width": width, "height": height})
        pages.append(page)
        return page

    yield make
    failed = getattr(request.node, "rep_call", None)
    for i, page in enumerate(pages):
        if failed is not None and failed.failed:
            shot = tmp_path / f"failure-{i}.png"
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot of the failing page {page.url}: {shot}")
        page.close()


def _serve(path: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "wizard_arena.cli", "web", "--database", str(path), "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
    if not found:
        proc.terminate()
        raise AssertionError(f"no address in {line!r}")
    return proc, found.group(1)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, list[GameSpec]]]:
    path = tmp_path_factory.mktemp("browser") / "t.sqlite"
    store, specs = make_store(path)
    store.close()
    proc, url = _serve(path)
    try:
        yield url, path, specs
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_leaderboard_shows_the_bots(
    new_page: Any, site: tuple[str, Path, list[GameSpec]]
) -> None:
    url, _, _ = site
    page = new_page()
    page.goto(url + "/")
    page.wait_for_selector("#leaderboard tr[data-bot]")
    bots = page.eval_on_selector_all(
        "#leaderboard tr[data-bot]", "rows => rows.map(r => r.dataset.bot)"
    )
    assert sorted(bots) == sorted(ENTRANTS)
    assert page.locator("#plot").evaluate("img => img.naturalWidth") > 0


def test_the_replay_steps_through_rounds_as_the_replay_verb_prints_them(
    new_page: Any, site: tuple[str, Path, list[GameSpec]]
) -> None:
    url, path, specs = site
    game_id = specs[5].id
    with ResultsStore(path, read_only=True) as store:
        record = store.record(game_id)
    assert record is not None
    text = render(record).splitlines()
    page = new_page()
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
            # the winning card itself is marked, the winner's seat's card
            winner = page.get_attribute("#trick", "data-winner")
            marked = page.eval_on_selector_all(
                "#trick .slot.win",
                "s => s.map(x => [x.dataset.seat, x.querySelector('.card.win') !== null])",
            )
            assert marked == [[winner, True]]
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


def _step(page: Any) -> int:
    return int(page.get_attribute("#position", "data-step"))


def test_the_replay_shows_each_moves_loss_and_the_entrant_its_graded_decisions(
    new_page: Any, site: tuple[str, Path, list[GameSpec]]
) -> None:
    url, _, specs = site
    page = new_page()
    page.goto(f"{url}/games/{specs[5].id}")
    page.wait_for_selector("body[data-ready]")
    first_bid = page.evaluate(
        f"fetch('/api/games/{specs[5].id}').then(r => r.json())"
        ".then(g => g.steps.findIndex(s => s.kind === 'bid'))"
    )
    assert first_bid > 0
    page.evaluate(f"location.hash = '#{first_bid}'")
    page.wait_for_function("document.getElementById('grade').dataset.grade")
    line = page.inner_text("#grade")
    assert re.search(r"'s bid \d+: loss \d+\.\d\d expected points", line), line
    assert "best" in line
    page.keyboard.press("Home")  # the deal: no decision, no loss shown
    assert page.inner_text("#grade") == ""
    page.goto(f"{url}/entrants/alice")
    page.wait_for_selector("#entrant-analysis")
    text = page.inner_text("#entrant-analysis")
    assert "expected points lost per game" in text and "loss per card" in text


def test_the_replay_plays_follows_the_hash_and_keeps_the_score_pad(
    new_page: Any, site: tuple[str, Path, list[GameSpec]]
) -> None:
    url, path, specs = site
    with ResultsStore(path, read_only=True) as store:
        record = store.record(specs[5].id)
    assert record is not None
    players, rounds = len(record.names), len(record.results)
    page = new_page()
    page.goto(f"{url}/games/{specs[5].id}")
    page.wait_for_selector("body[data-ready]")
    # a #N typed after loading is followed
    page.evaluate("location.hash = '#7'")
    page.wait_for_function("document.querySelector('#position').dataset.step === '7'")
    # play at 8x, then pause: the steps advance, then stop
    page.select_option("#speed", "8")
    page.click("#play")
    page.wait_for_function("Number(document.querySelector('#position').dataset.step) >= 12")
    page.click("#play")
    stopped = _step(page)
    page.wait_for_timeout(500)
    assert _step(page) == stopped and page.get_attribute("body", "data-playing") is None
    # the score pad at the end: every round, as the record scored it
    page.keyboard.press("End")
    pad = page.eval_on_selector_all(
        "#scorepad tr[data-round]",
        """rows => rows.map(r => [...r.querySelectorAll('td[data-field]')]
            .map(td => [Number(td.dataset.seat), td.dataset.field, Number(td.textContent)]))""",
    )
    assert len(pad) == rounds
    totals = [0] * players
    for row, (bids, tricks, points, *_) in zip(pad, record.results, strict=True):
        want = []
        for seat in range(players):
            totals[seat] += points[seat]
            want += [
                [seat, "bid", bids[seat]],
                [seat, "won", tricks[seat]],
                [seat, "points", points[seat]],
                [seat, "total", totals[seat]],
            ]
        assert row == want
    assert totals == list(record.totals)
    lines = page.eval_on_selector_all(
        "#chart polyline", "ls => ls.map(l => l.getAttribute('points').split(' ').length)"
    )
    assert lines == [rounds + 1] * players
    # back at the start: nothing scored yet
    page.keyboard.press("Home")
    assert page.locator("#scorepad tr[data-round]:not(.playing)").count() == 0
    # the result in rank order
    ranks = page.eval_on_selector_all(
        "#result-table tr[data-seat]", "rs => rs.map(r => Number(r.cells[0].textContent))"
    )
    assert ranks == sorted(record.ranks)


#: Names long and odd: "/", "#", "%", spaces, markup.
ODD_NAMES = {
    "a-rather-long-entrant-name/with#odd%chars": HeuristicBot,
    "Bob the Really Quite Patient Bot, version 2": RandomBot,
    "c": HeuristicBot,
    "<dave & eve>": RandomBot,
}


def test_every_page_fits_a_phone_and_odd_names_have_their_pages(
    new_page: Any, tmp_path: Path
) -> None:
    """A 420-pixel screen: no page is wider than the window (the seats two
    a row, a wide table scrolls in its own box, the trick line wraps), with
    a 15-round, 4-player game between long names."""
    path = tmp_path / "phone.sqlite"
    store, specs = make_store(path, rules=Rules(players=4), deal_sets=1, entrants=ODD_NAMES)
    store.close()
    proc, url = _serve(path)
    try:
        page = new_page(width=420, height=800)
        game = specs[0].id
        odd = next(iter(ODD_NAMES))
        for where, ready in [
            ("/", "#leaderboard tr[data-bot]"),
            ("/games", "#games-table"),
            (f"/entrants/{quote(odd, safe='')}", "#entrant-stats"),
            (f"/games/{game}", "body[data-ready]"),
        ]:
            page.goto(url + where)
            page.wait_for_selector(ready)
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= 420, f"{where}: {wide} px wide on a 420-px screen"
        assert page.inner_text("#title") == f"Game {game}"
        # a trick step of the last round: 15 cards a hand, the trick line wraps
        page.keyboard.press("End")
        while page.get_attribute("#log", "data-kind") != "trick":
            page.keyboard.press("ArrowLeft")
        assert "->" in page.inner_text("#log")
        fits = page.evaluate(
            "[document.documentElement.scrollWidth, (l => l.scrollWidth <= l.clientWidth)"
            "(document.querySelector('#log'))]"
        )
        assert fits == [fits[0], True] and fits[0] <= 420
        # every entrant links to its own page, whatever its name
        for name in ODD_NAMES:
            page.goto(url + "/")
            page.wait_for_selector("#leaderboard tr[data-bot]")
            page.click(f'#leaderboard tr[data-bot="{name}"] a[href^="/entrants/"]')
            page.wait_for_selector("#entrant-stats")
            assert page.inner_text("#title").startswith(name)
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_running_game_shows_no_card_of_a_hand(new_page: Any) -> None:
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

    page = new_page()
    checked = steps = 0
    while on_loop(lambda: arena.games_played) == 0:
        page.goto(box["url"] + "/tables")
        page.wait_for_selector("#tables[data-updated]")
        shown = page.eval_on_selector_all(
            "#tables [data-card]", "cs => cs.map(c => c.dataset.card)"
        )
        head = page.inner_text("#tables")
        # no results store under a lone referee: names are not links to entrant pages
        assert page.locator("a[href^='/entrants/']").count() == 0
        now = on_loop(public)
        if now is not None and f"round {now[0]} of" in head:
            leaked = Counter(shown) - now[1]
            assert not leaked, f"the page showed {sorted(leaked)} while in a hand"
            checked += len(shown)
        on_loop(box["gate"].release)
        steps += 1
    on_loop(box["stop"].set)
    thread.join(30)
    assert steps >= 18 and checked > 0


def test_a_tournament_s_live_page_says_why_and_lists_complete_deal_sets(
    new_page: Any, tmp_path: Path
) -> None:
    """Under ``tournament --web``: the tables page says why a table of a
    duplicate deal is withheld, and "Just finished" lists the games of each
    deal set once the whole set has ended (and no game of a set still
    being played)."""
    path = tmp_path / "t.sqlite"
    store, specs = make_store(path, play=10)  # sets t0d0, t0d1, t1d0 done; t1d1 under way
    store.close()
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def serve() -> None:
        async with memory_arena() as arena, trio.open_nursery() as n:
            urls = await start_web(n, WebOptions(port=0), arena, database=path)
            stop = trio.Event()
            box.update(url=urls[0], stop=stop, token=trio.lowlevel.current_trio_token())
            ready.set()
            await stop.wait()
            n.cancel_scope.cancel()

    thread = threading.Thread(target=trio.run, args=(serve,), daemon=True)
    thread.start()
    assert ready.wait(30)
    try:
        page = new_page()
        page.goto(box["url"] + "/tables")
        page.wait_for_selector("#feed li[data-set]")
        assert page.is_visible("#why-withheld")
        sets = page.eval_on_selector_all("#feed li[data-set]", "ls => ls.map(l => l.dataset.set)")
        assert sorted(sets) == ["0/0", "0/1", "1/0"]
        linked = page.eval_on_selector_all(
            "#feed a", "as => as.map(a => decodeURIComponent(a.pathname.slice(7)))"
        )
        assert sorted(linked) == sorted(s.id for s in specs[:9])
    finally:
        trio.from_thread.run_sync(box["stop"].set, trio_token=box["token"])
        thread.join(30)
