"""What the ladder and the tournament keep on disk is their user's alone:
stores (with their -wal and -shm), the ladder's lock and standings, log
folders and log files, whatever the folder they are in lets others see."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import trio

from wizard_arena.rules import Rules
from wizard_referee.hosting.launcher import open_launcher
from wizard_referee.ladder.season import Season
from wizard_referee.ladder.standings import write_json
from wizard_referee.ladder.store import LadderStore, new_token
from wizard_referee.referee.logs import log_file
from wizard_referee.tournament.store import ResultsStore


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def shared(tmp_path: Path) -> Path:
    """A folder every local user may list and read (0755)."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o755)
    return folder


def test_a_ladder_store_its_journals_lock_and_standings_are_private(tmp_path: Path) -> None:
    path = shared(tmp_path) / "season.sqlite"
    season = Season("private", players=3, rules=Rules(players=3, hand_sizes=(1,)))
    with LadderStore.create(path, season) as store:
        store.add_entrant("alice", token=new_token())
    with LadderStore.open(path) as store:
        store.hold()
        store.add_entrant("bob", token=new_token())
        beside = [Path(f"{path}{x}") for x in ("-wal", "-shm", ".lock")]
        assert all(p.exists() for p in beside)
        assert {p.name: mode(p) for p in [path, *beside]} == {
            p.name: 0o600 for p in [path, *beside]
        }
    write_json(Path(f"{path}.official.json"), {"entries": []})
    assert mode(Path(f"{path}.official.json")) == 0o600


def test_a_tournament_results_store_is_private(tmp_path: Path) -> None:
    path = shared(tmp_path) / "results.sqlite"
    with ResultsStore(path):
        assert mode(path) == 0o600
        assert mode(Path(f"{path}-wal")) == 0o600


def test_log_folders_and_files_are_private(tmp_path: Path) -> None:
    logs = shared(tmp_path) / "season.sqlite.logs"
    with log_file(logs / "ladder.log") as out:
        out.write("{}\n")
    assert (mode(logs), mode(logs / "ladder.log")) == (0o700, 0o600)

    # what the launcher starts (a hosted bot, the standings) logs privately too
    bot_log = logs.parent / "bot.log"

    async def main() -> None:
        async with open_launcher() as launcher:
            proc = await launcher.spawn(
                [sys.executable, "-c", "print('hello')"], dict(os.environ), bot_log
            )
            await proc.wait()

    trio.run(main)
    assert bot_log.read_text() == "hello\n" and mode(bot_log) == 0o600


def test_no_shipped_command_puts_a_token_in_argv() -> None:
    """Commands and messages the project ships (benches, example bots, docs,
    the server and SDK) never pass ``--token {token}``: every local user
    sees argv ('ps'); a bot reads $WIZARD_ARENA_TOKEN or --token-file."""
    import re

    root = Path(__file__).resolve().parent.parent
    pattern = re.compile(r"--token[\"',\s]+\{+token\}+")
    found = [
        f"{path.relative_to(root)}:{n}"
        for folder in ("bench", "example_bots", "docs", "server", "sdk")
        for path in sorted((root / folder).rglob("*"))
        if path.suffix in {".py", ".md", ".toml", ".js", ".sh"} and ".venv" not in path.parts
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
