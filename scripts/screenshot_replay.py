#!/usr/bin/env python3
"""Make docs/img/replay.png: the replay page of a game, mid-trick.

Plays a short round robin in-process (the example heuristic and random
bots, real games written through the results store as a tournament writes
them), serves it with ``wizard-arena web`` on a free port, and photographs
the replay page in headless Chromium (/usr/bin/chromium, driven by
Playwright). Run: ``python scripts/screenshot_replay.py [OUT.png]``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from wizard_arena.local import play_local
from wizard_arena.rules import Rules
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.random_bot import RandomBot
from wizard_referee.compare.local_play import local_record
from wizard_referee.tournament.store import GameSpec, ResultsStore

ROOT = Path(__file__).resolve().parent.parent
BOTS = {"heuristic-1": HeuristicBot, "heuristic-2": HeuristicBot, "random": RandomBot}
RULES = Rules(players=4, hand_sizes=(3, 5, 7))


def make_store(path: Path) -> str:
    """Four seatings of one deal; the id of the game to photograph."""
    names = [*BOTS, "heuristic-3"]
    classes = {**BOTS, "heuristic-3": HeuristicBot}
    specs = [
        GameSpec(f"demo-r{r}", r, 0, 0, r, "42", tuple(names[r:] + names[:r])) for r in range(4)
    ]
    with ResultsStore(path) as store:
        store.create(
            "screenshot", {}, [(n, "command", None) for n in names], specs, RULES.to_dict()
        )
        for spec in specs:
            bots = [classes[n]() for n in spec.seats]
            result = play_local(bots, RULES, seed=spec.seed, names=spec.seats, record=True)
            record = local_record(result, spec.id, spec.seed, started=time.time())
            store.save_game(spec, record)
    return specs[0].id


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "img" / "replay.png"
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "screenshot.sqlite"
        game = make_store(db)
        cmd = [sys.executable, "-m", "wizard_arena.cli", "web", "-d", str(db), "--port", "0"]
        server = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        try:
            assert server.stderr is not None
            found = re.search(r"(http://[\d.:]+)/", server.stderr.readline())
            assert found, "the web verb did not say its address"
            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path="/usr/bin/chromium", args=["--no-sandbox"]
                )
                page = browser.new_page(viewport={"width": 1100, "height": 760})
                page.goto(f"{found.group(1)}/games/{game}")
                page.wait_for_selector("body[data-ready]")
                page.keyboard.press("PageDown")  # round 2
                for _ in range(7):  # its bids and the first cards of a trick
                    page.keyboard.press("ArrowRight")
                page.screenshot(path=str(out))
                browser.close()
        finally:
            server.terminate()
            server.wait(10)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
