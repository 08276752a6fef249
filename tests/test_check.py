"""``wizard-arena check``: a good bot passes, flawed bots fail with the problems
named and advice, usage errors exit 2 (checked in this process: cli_here).

Each check runs as the real command (a subprocess; it starts its own referee
on loopback and the bot under test as a further subprocess: marked ``e2e``),
at tables of 6 (the shortest game) and 2 games, so the bot sits in two
different seats. The analysis of the records is also tested on its own.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from wizard_arena.cli import COMMANDS
from wizard_arena.rules import Rules
from wizard_referee.referee.table import SeatSpec, run_table

from .cli_here import cli_here
from .conftest import ROOT, seed_of
from .support import scaled

pytestmark = pytest.mark.timeout(120)

SHORT = ["--players", "6", "--games", "2"]


def check(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wizard_arena.cli", "check", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def check_json(*args: str) -> tuple[int, dict[str, Any]]:
    proc = check(*args, "--json")
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def codes(report: dict[str, Any]) -> set[str]:
    return {p["code"] for p in report["problems"]}


def decisions_in_check(rules: Rules, seed: int, games: int) -> tuple[int, int]:
    """The fewest and the most decisions the bot under test can be asked for
    in ``games`` games of a check with ``--seed SEED`` (game g: seat g), from
    the check's deals (seed ``check:SEED:g``) dealt again offline: its bids
    and plays (the referee plays a blind round's cards), a trump choice in
    each round it deals a Wizard as the turned card, and with ``tricksy`` up
    to one more for each Wizard it holds (its player names trump, but not in
    a round's last trick: that depends on the play)."""
    fewest = most = 0
    for g in range(games):
        seat = g % rules.players
        seats = [SeatSpec(f"s{i}", None) for i in range(rules.players)]
        rec = trio.run(partial(run_table, "x", rules, seats, seed=f"check:{seed}:{g}"))
        for i, rr in enumerate(rec.rounds):
            blind = rules.blind_first_round and i == 0
            hand = rr.hands[seat]
            fewest += 1 + (0 if blind else len(hand))
            fewest += int(rr.dealer == seat and rr.turned_card == "W")
            if rules.tricksy and not blind:
                most += hand.count("W")
    return fewest, fewest + most


@pytest.mark.e2e
def test_a_good_bot_is_clean(request: pytest.FixtureRequest) -> None:
    # a generous move time: this test is about a clean report, not about speed
    seed = seed_of(request.node)
    rc, report = check_json(
        "wizard_bots.heuristic:HeuristicBot",
        *SHORT,
        "--move-time",
        f"{scaled(2):g}",
        "--seed",
        str(seed),
    )
    assert rc == 0, report["problems"]
    assert report["clean"] is True and report["problems"] == []
    assert report["faults"] == {} and report["exit_code"] == 0 and not report["stopped"]
    assert [g["seat"] for g in report["games"]] == [0, 1]
    assert all(g["status"] == "finished" for g in report["games"])
    # 10 rounds: 55 cards and 10 bids per seat, and any trump choice (a turned Wizard)
    fewest, most = decisions_in_check(Rules(players=6), seed, 2)
    assert 2 * 65 <= fewest == report["decisions"] == most
    assert set(report["latency_ms"]) == {"p50", "p95", "max"}
    assert report["sdk_summary"]["games"] == 2
    assert report["sdk_summary"]["bot_errors"] == 0


@pytest.mark.e2e
def test_the_check_plays_the_rule_variants_asked_for(request: pytest.FixtureRequest) -> None:
    seed = seed_of(request.node)
    rc, report = check_json(
        "wizard_bots.heuristic:HeuristicBot",
        *["--players", "3", "--games", "1", "--move-time", f"{scaled(2):g}", "--seed", str(seed)],
        *["--hidden-bids", "--tricksy", "--blind-first-round", "--round-sizes", "1,3"],
    )
    assert rc == 0, report["problems"]
    rules = Rules(
        players=3, hidden_bids=True, tricksy=True, blind_first_round=True, hand_sizes=(1, 3)
    )
    assert report["rules"] == rules.describe()
    # round 1 (blind): a bid, and the referee plays the one card; round 2: a bid, 3 cards;
    # and the trump choices the deal and the play bring (a turned Wizard when the bot
    # deals; a Wizard it plays before the last trick, under tricksy)
    fewest, most = decisions_in_check(rules, seed, 1)
    assert 1 + 1 + 3 <= fewest <= report["decisions"] <= most
    assert report["games"][0]["status"] == "finished"


@pytest.mark.e2e
def test_the_check_plays_the_new_rule_forms() -> None:
    flags = ["--hidden-bids", "--reveal-bids-after-tricks", "--tricksy-suited"]
    rc, report = check_json(
        "wizard_bots.heuristic:HeuristicBot",
        *["--players", "3", "--games", "1", "--move-time", f"{scaled(2):g}"],
        *[*flags, "--first-dealer-by-draw", "--round-sizes", "2,3"],
    )
    assert rc == 0, report["problems"]
    rules = Rules(
        players=3,
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        tricksy_suited=True,
        first_dealer_by_draw=True,
        hand_sizes=(2, 3),
    )
    assert report["rules"] == rules.describe()
    assert report["games"][0]["status"] == "finished"
    assert report["decisions"] >= 2 + 2 + 3  # two bids, five cards (and any trump choice)


@pytest.mark.e2e
def test_a_slow_and_illegal_bot_is_reported_with_advice() -> None:
    proc = check("tests.bots.check_bots:SlowAndIllegalBot", *SHORT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "PROBLEMS (2):" in out
    # once a game on its first 6-card play (a loaded machine may add more)
    timeouts = re.search(r"timeout x(\d+): no legal answer within 0.5 s for (.*)", out)
    assert timeouts and int(timeouts[1]) >= 2, out
    assert timeouts[2].startswith("a 6-card play decision (round 6), ")
    # the SDK's log says how long the bot really took
    assert re.search(r"advice: your bot took 0\.6\d* s for a 6-card play decision \(round 6\)", out)
    assert "time left is in view.time_left" in out
    assert "bot_error x2: the bot chose play" in out and "which is not legal" in out
    assert "last lines of the bot's stderr:" in out
    assert out.rstrip().endswith("Result: 2 problem(s) found.")


@pytest.mark.e2e
def test_the_json_report_of_a_flawed_bot() -> None:
    rc, report = check_json("tests.bots.check_bots:SlowAndIllegalBot", *SHORT)
    assert rc == 1 and report["clean"] is False
    assert codes(report) == {"timeout", "bot_error"}
    assert set(report["faults"]) == {"timeout"} and report["faults"]["timeout"] >= 2
    assert report["sdk_summary"]["bot_errors"] == 2
    assert report["sdk_summary"]["overruns"] >= 2
    # `wizard-arena bot` exits 4 after bot errors: reported as bot_error, not as a crash
    assert report["exit_code"] == 4
    assert all(p["advice"] for p in report["problems"])


@pytest.mark.e2e
def test_a_crashing_bot_is_reported_with_its_exit_status_and_stderr() -> None:
    rc, report = check_json("tests.bots.check_bots:CrashingBot", *SHORT)
    assert rc == 1
    assert codes(report) == {"disconnect", "crash"}
    assert report["exit_code"] == 3
    crash = next(p for p in report["problems"] if p["code"] == "crash")
    assert crash["detail"] == "the bot process exited with status 3 after 1 of 2 games"
    assert "crasher: out of memory (simulated)" in report["stderr_tail"]


@pytest.mark.e2e
def test_a_command_bot_in_any_language() -> None:
    """--command: here the kit's malformed bot, taking --server/--name/--token/--games."""
    command = f"{sys.executable} -m wizard_bots.misbehaving malformed --rate 1 --limit 1 -q"
    rc, report = check_json("--command", command, *SHORT)
    assert rc == 1
    assert codes(report) == {"malformed"}
    assert report["faults"] == {"malformed": 2}
    (problem,) = report["problems"]
    assert problem["detail"].startswith("check-1: empty message")
    assert "exactly one choice set" in problem["advice"]
    assert report["exit_code"] == 0


@pytest.mark.e2e
def test_a_command_with_placeholders_that_never_connects() -> None:
    proc = check(
        "--command",
        "sh -c 'echo waiting for {server} as {name} >&2; sleep 30'",
        "--games",
        "1",
        "--connect-timeout",
        "1",
    )
    assert proc.returncode == 1
    assert "no_connection x1: the bot did not connect within the connect timeout" in proc.stdout
    assert "waiting for 127.0.0.1:" in proc.stdout and "as bot-under-test" in proc.stdout


def test_a_flooding_bot_keeps_its_output_limit_and_the_cap_of_the_tournament() -> None:
    """``check`` starts its bot through the hosting room's launcher: past
    ``--output-limit`` its output is dropped, one line saying so, and the
    capture file holds no more (not the 629 MB of a bot writing at once)."""
    flood = f"{sys.executable} -c 'import os; os.write(2, b\"z\" * 200000); raise SystemExit(3)'"
    proc = check("--command", flood, "--games", "1", "--output-limit", "1000", "--json")
    assert proc.returncode == 1, proc.stderr
    tail = json.loads(proc.stdout)["stderr_tail"]
    assert tail[-1] == "--- wizard-arena: output past 1000 bytes dropped ---", tail
    assert sum(len(line) for line in tail) < 1100


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["wizard_bots.random_bot:RandomBot", "--command", "x"],
        ["no_colon"],
        ["wizard_bots.random_bot:RandomBot", "--arg", "1=2"],
        ["wizard_bots.random_bot:RandomBot", "--games", "0"],
        ["wizard_bots.random_bot:RandomBot", "--move-time", "0"],
        ["wizard_bots.random_bot:RandomBot", "--players", "9"],
        ["wizard_bots.random_bot:RandomBot", "--maximus", "--round-sizes", "2,4"],
        ["wizard_bots.random_bot:RandomBot", "--round-sizes", "two"],
        ["wizard_bots.random_bot:RandomBot", "--opponent", "no_such_module:Bot"],
        ["--command", "x", "--arg", "a=1"],
    ],
)
def test_usage_errors_exit_2(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused before anything starts: in this process (cli_here)."""
    proc = cli_here(["check", *args], capsys, monkeypatch, cwd=ROOT)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "error" in proc.stderr


@pytest.mark.e2e
def test_a_command_that_cannot_start_exits_2() -> None:
    """Found only when the check starts the bot: the real command."""
    proc = check("--command", "no-such-program-anywhere")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "error" in proc.stderr


@pytest.mark.e2e
def test_a_spec_the_bot_command_refuses_exits_2() -> None:
    proc = check("wizard_bots.random_bot:NoSuchBot", "--games", "1")
    assert proc.returncode == 2
    assert "has no class 'NoSuchBot'" in proc.stderr


@pytest.mark.e2e
def test_a_bot_that_did_not_start_has_its_stderr_shown_without_escapes(
    tmp_path: Path,
) -> None:
    """What the bot wrote before it exited 2 (unconnected) is printed on
    the organiser's terminal: its escape sequences as text, never sent."""
    bot = tmp_path / "evil.py"
    bot.write_text("import sys\nsys.stderr.write('\\x1b]0;pwned\\x07 bad\\n')\nsys.exit(2)\n")
    proc = check(f"{bot}:Bot", "--games", "1")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "\\x1b]0;pwned\\x07 bad" in proc.stderr and "\x1b" not in proc.stderr


def test_check_is_a_registered_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert COMMANDS["check"][0] == "wizard_referee.check.cmd_check"
    proc = cli_here(["check", "--help"], capsys, monkeypatch)
    assert proc.returncode == 0
    assert "--command" in proc.stdout and "{server}" in proc.stdout


def test_the_report_reads_the_sdk_records() -> None:
    """Problems only the SDK's records show (wizard-arena bot --report):
    exceptions, cancelled AsyncBot decisions, hook errors."""
    from wizard_arena.client.results import ClientRecord, RecordKind, read_report
    from wizard_referee.check.analysis import SdkReport, analyse
    from wizard_referee.check.report import CheckReport, format_report

    lines = [
        json.dumps(r.to_dict())
        for r in (
            ClientRecord(RecordKind.DECISION, "check-1", "check-1-1", 1, "bid", 0.01, 0.5, "bid 0"),
            ClientRecord(
                RecordKind.BOT_ERROR, "check-1", "check-1-17", 4, "bid", time_left=0.5,
                code="raised", detail="ZeroDivisionError: division by zero",
            ),
            ClientRecord(RecordKind.CANCELLED, "check-1", "check-1-40", 7, "play", 0.41, 0.4),
            ClientRecord(
                RecordKind.HOOK_ERROR, code="on_trick_end", detail="KeyError: 'trick'"
            ),
        )
    ]  # fmt: skip
    summary = {"kind": "summary", "games": 1, "decisions": 65, "bot_errors": 1}
    summary |= {"hook_errors": 1, "overruns": 1, "rejections": 0}
    lines += [json.dumps(summary), '{"kind": "decis']  # a last line cut short is skipped
    records, total = read_report(lines)
    assert len(records) == 4 and total == summary
    stderr = "\n".join(
        [
            "2026-01-01 10:00:00,000 ERROR wizard_arena.client: the bot raised in game check-1, "
            "round 4, bid (request check-1-17); sending the default action",
            "Traceback (most recent call last):",
            '  File "my_bot.py", line 9, in bid',
            "ZeroDivisionError: division by zero",
        ]
    )
    report = CheckReport("x:Y", 6, 0.5, 0, ["RandomBot"], exit_code=4)
    analyse(report, [], [], True, stderr, SdkReport(records, total))
    problems = {p.code: p for p in report.problems}
    assert set(problems) == {"bot_error", "cancelled", "hook_error"}  # exit 4: not a crash
    assert problems["bot_error"].detail == (
        "the bot raised in game check-1, round 4, bid (ZeroDivisionError: division by zero)"
    )
    assert "game check-1, round 7, play, 0.400 s allowed" in problems["cancelled"].detail
    assert problems["hook_error"].detail == "the bot's on_trick_end hook raised (KeyError: 'trick')"
    assert report.sdk_summary == {
        "games": 1,
        "decisions": 65,
        "bot_errors": 1,
        "hook_errors": 1,
        "overruns": 1,
        "rejected": 0,
    }
    text = format_report(report)
    assert "PROBLEMS (3):" in text and "| ZeroDivisionError: division by zero" in text
    # no fault recorded, yet problems: the summary line says they are not faults
    assert "  faults the referee recorded: none (the problems below are not faults)\n" in text
    # the advice names what the tutorial teaches
    assert "view.legal_bids" in text and "view.legal_cards" in text
    assert "legal_actions" not in text


def test_a_command_bot_has_no_sdk_records() -> None:
    """Without a report (a --command bot) the check says what the referee and
    the process show: here, an exit with status 4 is a crash."""
    from wizard_referee.check.analysis import analyse
    from wizard_referee.check.report import CheckReport

    report = CheckReport("cmd", 3, 0.5, 1, ["RandomBot"], exit_code=4)
    analyse(report, [], [], True, "boom\n")
    assert [(p.code, p.detail) for p in report.problems] == [
        ("crash", "the bot process exited with status 4 after 0 of 1 games")
    ]
    assert report.sdk_summary == {} and report.stderr_tail == ["boom"]


def _record_of_moves(moves: list[tuple[str, float, str | None]]) -> Any:
    """A one-round game record of seat 0's moves (action, ms, fault), 3 cards dealt."""
    from wizard_referee.referee.record import GameRecord, MoveRecord, RoundRecord

    hands = [["AS", "2S", "3S"], ["4S", "5S", "6S"], ["7S", "8S", "9S"]]
    round_ = RoundRecord(3, 2, hands, None, [MoveRecord(0, a, ms, f) for a, ms, f in moves])
    timeouts = sum(1 for _, _, f in moves if f == "timeout")
    faults: list[dict[str, int]] = [{"timeout": timeouts} if timeouts else {}, {}, {}]
    return GameRecord(
        "check-1", {}, ["bot", "a", "b"], 1, 0, 0.0, rounds=[round_], faults=faults,
        fault_details=[{}, {}, {}],
    )  # fmt: skip


def test_a_slow_decision_right_after_a_timeout_is_said_to_be_its_knock_on() -> None:
    """A bot that answers one request at a time and overran one decision was
    still on it when the next came: the referee's time for that next one
    (0.31 s of 0.5 s) is mostly the overrun, and the warning says so rather
    than call it the bot's slowest decision."""
    from wizard_referee.check.analysis import analyse
    from wizard_referee.check.report import CheckReport

    knock_on = [("bid 1", 12.0, None), ("play AS", 500.0, "timeout"), ("play 2S", 310.0, None)]
    report = CheckReport("x:Y", 3, 0.5, 1, ["RandomBot"])
    analyse(report, [_record_of_moves(knock_on)], [0], True, "")
    assert report.warnings == [
        "1 decision(s) right after a timeout took more than 50% of the 0.5 s move time: "
        "their time was mostly the bot still working on the timed-out decision before it "
        "(the timeouts above), not their own"
    ]
    # a slow decision of its own is the slowest; the knock-on is not counted
    own = [("bid 1", 400.0, None), ("play AS", 500.0, "timeout"), ("play 2S", 450.0, None)]
    report = CheckReport("x:Y", 3, 0.5, 1, ["RandomBot"])
    analyse(report, [_record_of_moves(own)], [0], True, "")
    (warning,) = report.warnings
    assert warning.startswith(
        "1 decision(s) took more than 50% of the 0.5 s move time (slowest: 0.4 s for a bid "
        "with 3 cards in hand (round 3)): close to the deadline; 1 more, right after a "
        "timeout, are not counted"
    )


def test_a_bot_killed_for_its_memory_limit_is_advised_about_that_limit() -> None:
    """A confined bot's crash names the limit it exceeded (docs/untrusted-bots.md):
    the check's advice is about that limit, not about exiting with status 0."""
    from wizard_referee.check.analysis import analyse
    from wizard_referee.check.report import CheckReport

    record = _record_of_moves([("bid 1", 12.0, None)])
    record.faults[0] = {"crash": 1}
    killed = "the bot's process was killed: out of memory: limit 512 MiB"
    record.fault_details[0] = {"crash": killed}
    report = CheckReport("x:Y", 3, 0.5, 1, ["RandomBot"])
    analyse(report, [record], [0], True, "")
    (crash,) = [p for p in report.problems if p.code == "crash"]
    assert crash.detail == f"check-1: {killed}"
    assert crash.advice.startswith(
        "your bot used more memory than its limit (out of memory: limit 512 MiB)"
    )
    assert "memory_limit" in crash.advice
