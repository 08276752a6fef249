"""A bot at a server short of players says that it waits, for how many
players, every so often (wizard_arena.client.waiting), in both runners."""

from __future__ import annotations

import logging
import threading
from functools import partial
from typing import Any

import pytest
import trio

from wizard_arena.client import run_bot, serve_bot, waiting
from wizard_arena.client.waiting import WaitNotes, waiting_text
from wizard_bots.random_bot import RandomBot

from .support import ServerThread, arena_config, ok, run_sdk_bots, scaled


def test_the_notes_come_after_a_while_then_every_so_often() -> None:
    state = {"idle": True, "games": 0}
    notes = WaitNotes(lambda: state["idle"], lambda: state["games"])
    first, every = waiting.FIRST, waiting.EVERY
    assert notes.due(100.0) is None  # the wait starts
    assert notes.due(100.0 + first - 0.1) is None
    assert notes.due(100.0 + first) == first
    assert notes.due(100.0 + first + 1) is None  # said
    assert notes.due(100.0 + first + every) == first + every
    state["idle"] = False  # seated: no note
    assert notes.due(200.0) is None
    state["idle"] = True  # a new wait: the first note again after FIRST seconds
    assert notes.due(300.0) is None
    assert notes.due(300.0 + first) == first
    state["games"] = 1  # a game came and went between two checks: a new wait
    assert notes.due(400.0) is None
    assert notes.due(400.0 + first) == first


def test_the_note_says_how_many_players_a_table_needs() -> None:
    assert waiting_text(5.0, 4) == (
        "waiting for a game: tables of 4 bots, started when 4 are connected and free (5 s so far)"
    )
    assert "enough bots" in waiting_text(31.4, None) and "(31 s so far)" in waiting_text(31.4, None)


@pytest.fixture
def quick_notes(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(waiting, "FIRST", 0.2)
    monkeypatch.setattr(waiting, "EVERY", 0.3)
    monkeypatch.setattr(waiting, "POLL", 0.05)
    caplog.set_level(logging.INFO, logger="wizard_arena.client")


def _notes(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("waiting for")]


def _wait_for_notes(caplog: pytest.LogCaptureFixture, n: int) -> list[str]:
    for _ in range(200):
        if len(_notes(caplog)) >= n:
            break
        threading.Event().wait(0.02)
    return _notes(caplog)


@pytest.mark.e2e
@pytest.mark.usefixtures("quick_notes")
def test_run_bot_says_it_waits_until_the_table_fills(caplog: pytest.LogCaptureFixture) -> None:
    """The tutorial's ``run_bot(..., games=...)`` at a server of three-player
    tables, alone: notes that it waits for a table of 3; the game once two
    more bots come; no note while it plays."""
    with ServerThread(arena_config()) as server:
        box: list[Any] = []
        alone = threading.Thread(
            target=lambda: box.append(run_bot(RandomBot(seed=1), server.address, games=1)),
            daemon=True,
        )
        alone.start()
        notes = _wait_for_notes(caplog, 2)
        assert len(notes) >= 2, caplog.text
        assert notes[0].startswith("waiting for a game: tables of 3 bots, started when 3 are")
        ok(run_sdk_bots([RandomBot(seed=2), RandomBot(seed=3)], server.address, games=1))
        alone.join(30)
        assert not alone.is_alive()
        assert len(box[0].games) == 1


@pytest.mark.e2e
@pytest.mark.usefixtures("quick_notes")
def test_serve_bot_says_it_waits(caplog: pytest.LogCaptureFixture) -> None:
    with ServerThread(arena_config()) as server:

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(partial(serve_bot, RandomBot(seed=1), server.address, games=1))
                with trio.move_on_after(scaled(10)):  # (two notes come after 0.5 s)
                    while len(_notes(caplog)) < 2:
                        await trio.sleep(0.02)
                nursery.cancel_scope.cancel()

        trio.run(main)
    notes = _notes(caplog)
    assert len(notes) >= 2, caplog.text
    assert notes[0].startswith("waiting for a game: tables of 3 bots")
