"""``wizard-arena ratings``: the command, run as a subprocess (standard input,
an error's exact output) and, for the rest, in-process through the same
``main`` to keep the suite fast."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from wizard_arena.cli import main

from .cli_here import Ran, cli_here
from .support import scaled


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wizard_arena.cli", "ratings", *args],
        capture_output=True,
        text=True,
        check=False,
        input=stdin,
        timeout=scaled(60),
    )


Cli = Callable[..., Ran]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """``wizard-arena ratings ARGS`` in this process (the verb's own subprocess:
    test_stdin and the ``*_subprocess`` tests)."""
    return lambda *args: cli_here(["ratings", *args], capsys, monkeypatch)


def _inproc(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["ratings", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _write(tmp_path: Path, lines: list[object], name: str = "results.jsonl") -> str:
    path = tmp_path / name
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return str(path)


CYCLE = (
    [{"players": ["A", "B"], "scores": [1, 0]}] * 75
    + [{"players": ["A", "B"], "scores": [0, 1]}] * 25
    + [{"players": ["B", "C"], "scores": [1, 0]}] * 75
    + [{"players": ["B", "C"], "scores": [0, 1]}] * 25
    + [{"players": ["C", "A"], "scores": [1, 0]}] * 90
    + [{"players": ["C", "A"], "scores": [0, 1]}] * 10
)


def test_table(tmp_path: Path, cli: Cli) -> None:
    path = _write(tmp_path, CYCLE)
    out = cli(path, "--bootstrap", "50")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    # the leaderboard's words: "rating (95% interval)", "1535.1 (1504-1568)"
    assert lines[0].split() == [
        *("rank", "name", "rating", "(95%", "interval)", "games"),
        *("vs", "next", "(95%", "interval)", "LOS"),
    ]
    rows = [line.split() for line in lines[1:4]]
    assert [r[:3] for r in rows] == [
        ["1", "C", "1535.1"],
        ["2", "B", "1500.0"],
        ["3", "A", "1464.9"],
    ]
    assert all(r[4] == "200" for r in rows)
    for r in rows:
        low, high = r[3].strip("()").split("-")
        assert float(low) < float(r[2]) < float(high)
    assert (
        "note: Bradley-Terry ratings from 300 games (average 1500; 400 points apart means "
        "winning 10 comparisons for every 1 lost); 95% intervals from re-rating 50 random "
        "redraws of the deals (duplicate_set; the bootstrap)" in out.stdout
    )


def test_json_bt(tmp_path: Path, cli: Cli) -> None:
    lines: list[object] = [
        {"players": ["a", "b", "c"], "scores": [30, 20, 10], "game_id": 1},
        "",
        "   ",
        {"players": ["b", "c", "a"], "scores": [30, 20, 10], "duplicate_set": "d1"},
        {"players": ["c", "a", "b"], "scores": [30, 20, 20], "duplicate_set": "d1"},
    ]
    out = cli(_write(tmp_path, lines), "--json", "--seed", "3", "--bootstrap", "100")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    keys = {"name", "rating", "low", "high", "games", "group", "note"}
    keys |= {"vs_next", "vs_next_low", "vs_next_high", "los"}
    assert [set(d) for d in data] == [keys] * 3
    assert [d["games"] for d in data] == [3, 3, 3]
    ratings = [d["rating"] for d in data]
    assert ratings == sorted(ratings, reverse=True)
    assert sum(ratings) / 3 == pytest.approx(1500.0)
    # two duplicate sets (a game outside any set is one): too few for an interval
    assert all(d["low"] is None and d["high"] is None for d in data)
    assert "note: Bradley-Terry ratings" in out.stderr  # notes stay off stdout
    assert "no 95% interval for the bots: they played only 2 deals" in out.stderr
    again = cli(_write(tmp_path, lines), "--json", "--seed", "3", "--bootstrap", "100")
    assert again.stdout == out.stdout


def test_intervals_from_10_duplicate_sets_on(tmp_path: Path, cli: Cli) -> None:
    def sets(n: int) -> list[object]:
        return [
            {"players": ["a", "b", "c"], "scores": [30 + i % 3, 20 + i % 5, 10], "duplicate_set": i}
            for i in range(n)
        ] + [
            {"players": ["c", "b", "a"], "scores": [25, 20, 15], "duplicate_set": i}
            for i in range(n)
        ]

    data = json.loads(cli(_write(tmp_path, sets(10)), "--json", "--bootstrap", "50").stdout)
    assert all(isinstance(d["low"], float) and isinstance(d["high"], float) for d in data)
    few = cli(_write(tmp_path, sets(9)), "--bootstrap", "50")
    assert "no 95% interval for the bots: they played only 9 deals" in few.stdout
    # as the leaderboard says it, and so with too few deals for any bootstrap at all
    assert [line.split()[3:5] for line in few.stdout.splitlines()[1:4]] == [
        ["(no", "interval)"]
    ] * 3
    none = cli(_write(tmp_path, sets(2)))
    assert [line.split()[3:5] for line in none.stdout.splitlines()[1:4]] == [
        ["(no", "interval)"]
    ] * 3


def test_json_elo(tmp_path: Path, cli: Cli) -> None:
    path = _write(tmp_path, [{"players": ["w", "l"], "scores": [120, 80]}])
    out = cli(path, "--method", "elo", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [
        {"name": "w", "rating": 1516.0, "low": None, "high": None, "games": 1},
        {"name": "l", "rating": 1484.0, "low": None, "high": None, "games": 1},
    ]
    assert "provisional" in out.stderr
    out = cli(path, "--method", "elo", "--json", "--k", "16", "--initial", "w=1400", "x=1")
    data = {d["name"]: d["rating"] for d in json.loads(out.stdout)}
    expected = 16 * (1 - 1 / (1 + 10 ** (100 / 400)))
    assert data == pytest.approx({"w": 1400 + expected, "l": 1500 - expected})
    table = cli(path, "--method", "elo")
    assert table.returncode == 0
    assert "note: provisional" in table.stdout
    assert table.stdout.splitlines()[0].split() == ["rank", "name", "Elo", "(provisional)", "games"]
    assert table.stdout.splitlines()[1].split() == ["1", "w", "1516.0", "1"]


def test_groups_are_reported_in_the_table_json_and_csv(tmp_path: Path, cli: Cli) -> None:
    """a always outscored b: two groups, only their order known. The table,
    --json and --csv say so in the leaderboard's words (the table printed
    the prior's ratings, with a note naming nobody but a and b's records)."""
    path = _write(tmp_path, [{"players": ["a", "b"], "scores": [2, 1]}] * 3)
    out = cli(path, "--bootstrap", "0")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].strip() == "-- group 1 of 2 (order only between groups) --"
    assert lines[2].split() == [
        "1",
        "a",
        "1500.0",
        "3",
        "order",
        "only",
    ]  # --bootstrap 0: no interval column
    assert lines[3].strip() == "-- group 2 of 2 (order only between groups) --"
    assert "note: the results tell only the order of 2 groups" in out.stdout
    assert "group 1 (a) outscored group 2 (b) in every comparison" in out.stdout
    js = cli(path, "--bootstrap", "0", "--json")
    data = json.loads(js.stdout)
    assert [(d["name"], d["group"], d["low"], d["vs_next"]) for d in data] == [
        ("a", 1, None, None),
        ("b", 2, None, None),
    ]
    assert data[0]["note"].startswith("group 1 of 2, alone in it: no interval")
    assert "only the order of 2 groups" in js.stderr
    csv_out = cli(path, "--bootstrap", "0", "--csv")
    header, first, _ = csv_out.stdout.splitlines()
    assert header == ("name,rating,low,high,games,group,vs_next,vs_next_low,vs_next_high,los,note")
    assert first.startswith('a,1500.0,,,3,1,,,,,"group 1 of 2, alone in it')
    assert "only the order of 2 groups" in csv_out.stderr


def test_neighbours_in_the_table(tmp_path: Path, cli: Cli) -> None:
    data = json.loads(cli(_write(tmp_path, CYCLE), "--bootstrap", "50", "--json").stdout)
    c, b, a = data
    assert c["vs_next"] == pytest.approx(c["rating"] - b["rating"])
    assert c["vs_next_low"] < c["vs_next"] < c["vs_next_high"] and 0.5 < c["los"] <= 1
    assert a["vs_next"] is None and a["los"] is None  # the last row has no next
    out = cli(_write(tmp_path, CYCLE), "--bootstrap", "50")
    row = out.stdout.splitlines()[1]
    assert f"{c['vs_next']:+.1f} ({c['vs_next_low']:+.1f} to {c['vs_next_high']:+.1f})" in row
    assert row.endswith(f"{c['los']:.0%}")


def test_stdin(tmp_path: Path) -> None:
    out = _cli("-", "--method", "elo", stdin='{"players": ["a", "b"], "scores": [0, 1]}\n')
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1].split()[:3] == ["1", "b", "1516.0"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"players": ["a", "b"], "scores": [1, 2}', "not valid JSON"),
        ('{"players": ["a", "b"]}', 'missing key "scores"'),
        ('{"players": ["a", "b", "c"], "scores": [1, 2]}', "3 players but 2 scores"),
        ('{"players": ["a", "a"], "scores": [1, 2]}', "player listed twice"),
        ("[1, 2]", "expected a JSON object"),
        ('{"players": ["a", "b"], "scores": [1, null]}', "finite numbers"),
    ],
)
def test_malformed_line_is_refused_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    good = '{"players": ["a", "b"], "scores": [1, 2]}'
    path = _write(tmp_path, [good, "", line, good])
    code, out, err = _inproc(capsys, path)
    assert code == 2
    assert out == ""
    assert err.startswith(f"wizard-arena ratings: error: {path}:3: ")
    assert message in err


def test_malformed_line_subprocess(tmp_path: Path) -> None:
    good = '{"players": ["a", "b"], "scores": [1, 2]}'
    path = _write(tmp_path, [good, good, '{"players": ["a", "b"], "scores": [1]}'])
    out = _cli(path)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr == (f"wizard-arena ratings: error: {path}:3: 2 players but 1 scores\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--k", "10"], "--k applies only to --method elo"),
        (["--initial", "a=1600"], "--initial applies only to --method elo"),
        (["--method", "elo", "--bootstrap", "10"], "--bootstrap applies only to --method bt"),
        (["--method", "elo", "--seed", "1"], "--seed applies only to --method bt"),
        (["--method", "elo", "--initial", "a"], "--initial expects NAME=RATING"),
        (["--method", "elo", "--initial", "a=high"], "--initial expects NAME=RATING"),
        (["--method", "elo", "--k", "0"], "--k must be a positive number"),
        (["--bootstrap", "-1"], "--bootstrap must be 0 or more"),
    ],
)
def test_bad_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    path = _write(tmp_path, [{"players": ["a", "b"], "scores": [1, 2]}])
    code, out, err = _inproc(capsys, path, *args)
    assert code == 2 and out == ""
    assert message in err


def test_bad_option_subprocess(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"players": ["a", "b"], "scores": [1, 2]}])
    out = _cli(path, "--k", "10")
    assert out.returncode == 2
    assert out.stderr == "wizard-arena ratings: error: --k applies only to --method elo\n"


def test_missing_and_empty_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cli: Cli
) -> None:
    out = cli(str(tmp_path / "nope.jsonl"))
    assert out.returncode == 2
    assert "cannot read" in out.stderr and "nope.jsonl" in out.stderr
    assert "Traceback" not in out.stderr
    empty = _write(tmp_path, ["", ""], "empty.jsonl")
    code, _, err = _inproc(capsys, empty)
    assert code == 2 and "no game results" in err
