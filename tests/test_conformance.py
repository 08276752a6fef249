"""Every shared rules vector passes, through the library and through the CLI.

The shared vectors live beside the repository (``../shared/conformance``);
on a clone without them the tests that need them are skipped, with the
reason (CI sets WIZARD_ARENA_REQUIRE_SHARED=1, so they always run there).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wizard_arena.conformance.vectors import VectorFormatError, load_vectors, run_files

from .cli_here import cli_here
from .conftest import ROOT, SHARED_CONFORMANCE, SHARED_FILES, requires_shared_vectors
from .support import scaled

PROJECT_FILES = sorted((ROOT / "tests" / "vectors").glob("*.json"))


@requires_shared_vectors
def test_shared_vectors_exist() -> None:
    assert SHARED_FILES, f"no vector files found in {SHARED_CONFORMANCE}"


@pytest.mark.parametrize("path", SHARED_FILES + PROJECT_FILES, ids=lambda p: p.name)
def test_vector_file_passes(path: Path) -> None:
    (report,) = run_files([path])
    assert report.failures == []
    assert report.passed == len(json.loads(path.read_text())["cases"])


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wizard_arena.cli", "conformance", *args],
        capture_output=True,
        text=True,
        check=False,
    )


@requires_shared_vectors
def test_cli_summary_line() -> None:
    proc = _cli(*map(str, SHARED_FILES))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    total = sum(len(json.loads(p.read_text())["cases"]) for p in SHARED_FILES)
    assert proc.stdout.strip().splitlines()[-1] == f"{total} passed, 0 failed"


def test_cli_reports_failure_with_first_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = {
        "format": "wizard-conformance/1",
        "cases": [
            {"id": "ok", "kind": "score", "bid": 1, "tricks": 1, "expect": {"points": 30}},
            {
                "id": "wrong",
                "kind": "trick",
                "trump": "H",
                "plays": ["5S", "W"],
                "expect": {"winner": 0},
            },
        ],
    }
    f = tmp_path / "v.json"
    f.write_text(json.dumps(bad))
    proc = cli_here(["conformance", str(f)], capsys, monkeypatch)
    assert proc.returncode == 1
    lines = proc.stdout.strip().splitlines()
    assert "wrong" in lines[0] and "expected 0, got 1" in lines[0]
    assert lines[-1] == "1 passed, 1 failed"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not JSON"),
        ('{"format": "other/1", "cases": []}', "'format' must be"),
        (
            '{"format": "wizard-conformance/1", "cases": '
            '[{"id": "x", "kind": "nope", "expect": {}}]}',
            "unknown kind",
        ),
        (
            '{"format": "wizard-conformance/1", "cases": [{"id": "x", "kind": "trick", '
            '"trump": "H", "plays": ["14H"], "expect": {"winner": 0}}]}',
            "not a card",
        ),
    ],
)
def test_cli_refuses_malformed_file(
    tmp_path: Path,
    content: str,
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    f = tmp_path / "bad.json"
    f.write_text(content)
    proc = cli_here(["conformance", str(f)], capsys, monkeypatch)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_reject_must_leave_state_unchanged_is_checked() -> None:
    # A vector that claims a legal bid is illegal must fail.
    case = {
        "id": "g",
        "kind": "game",
        "rules": {"players": 3, "bid_restriction": "none"},
        "first_dealer": 0,
        "rounds": [
            {
                "round": 1,
                "dealer": 0,
                "hands": [["2H"], ["13S"], ["5H"]],
                "trump_card": "J",
                "actions": [{"seat": 1, "bid": 0, "reject": True}],
            }
        ],
    }
    (c,) = load_vectors({"format": "wizard-conformance/1", "cases": [case]})
    assert "accepted, but the vector says" in (c.run() or "")


def test_duplicate_ids_refused() -> None:
    c = {"id": "a", "kind": "score", "bid": 0, "tricks": 0, "expect": {"points": 20}}
    with pytest.raises(VectorFormatError, match="duplicate"):
        load_vectors({"format": "wizard-conformance/1", "cases": [c, c]})


SHARED_TESTS = [
    f"tests/test_conformance.py::{name}"
    for name in ("test_shared_vectors_exist", "test_cli_summary_line")
]


def _pytest_here(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        # without hypothesis's plugin: it costs about a second at every start
        [
            *[sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"],
            *["-p", "no:hypothesispytest", *SHARED_TESTS],
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=scaled(120),
        cwd=ROOT,
        env={**os.environ, **env},
    )


def test_without_the_shared_folder_its_tests_skip_with_the_reason(tmp_path: Path) -> None:
    """A fresh clone has no ../shared: the suite still passes, saying what is
    skipped and why; CI (WIZARD_ARENA_REQUIRE_SHARED=1) fails instead."""
    absent = tmp_path / "shared" / "conformance"
    lone = _pytest_here(
        {"WIZARD_ARENA_SHARED_CONFORMANCE": str(absent), "WIZARD_ARENA_REQUIRE_SHARED": ""}
    )
    assert lone.returncode == 0, lone.stdout + lone.stderr
    assert "2 skipped" in lone.stdout
    assert f"the shared rules vectors are not here ({absent} has no *.json)" in lone.stdout
    ci = _pytest_here(
        {"WIZARD_ARENA_SHARED_CONFORMANCE": str(absent), "WIZARD_ARENA_REQUIRE_SHARED": "1"}
    )
    assert ci.returncode == 1 and "2 failed" in ci.stdout, ci.stdout


def _game(cid: str, rules: dict[str, object], **extra: object) -> dict[str, object]:
    return {
        "id": cid,
        "kind": "game",
        "rules": rules,
        "first_dealer": 0,
        "rounds": [
            {
                "round": 1,
                "dealer": 0,
                "hands": [["2H"], ["13S"], ["5H"]],
                "trump_card": "J",
                "actions": [{"seat": 1, "bid": 1}, {"seat": 2, "bid": 0}, {"seat": 0, "bid": 0}],
                "expect": {"bids": [0, 1, 0]},
            }
        ],
        **extra,
    }


def test_cases_naming_unknown_options_are_skipped(tmp_path: Path) -> None:
    """A case whose rules name an option this runner does not know cannot be
    judged: it is skipped (counted and listed), and the file's other cases run."""
    data = {
        "format": "wizard-conformance/1",
        "cases": [
            {"id": "ok", "kind": "score", "bid": 1, "tricks": 1, "expect": {"points": 30}},
            _game("known", {"players": 3, "bid_restriction": "none"}),
            _game("future", {"players": 3, "bid_restriction": "none", "reverse_play": True}),
            _game("future-restriction", {"players": 3, "bid_restriction": "dealer_must_equal"}),
            {"id": "wrong", "kind": "score", "bid": 0, "tricks": 0, "expect": {"points": 0}},
        ],
    }
    cases = load_vectors(data)
    assert [c.skip != "" for c in cases] == [False, False, True, True, False]
    assert "reverse_play" in cases[2].skip
    assert "bid_restriction dealer_must_equal" in cases[3].skip
    f = tmp_path / "future.json"
    f.write_text(json.dumps(data))
    (report,) = run_files([f])
    assert report.passed == 2 and [cid for cid, _ in report.failures] == ["wrong"]
    assert [cid for cid, _ in report.skipped] == ["future", "future-restriction"]
    proc = _cli(str(f))
    assert proc.returncode == 1  # the failure fails the run, the skips do not
    lines = proc.stdout.strip().splitlines()
    assert lines[-1] == "2 passed, 1 failed, 2 skipped"
    assert any(line.startswith(f"SKIP {f}: future: ") for line in lines)
    del data["cases"][-1]
    f.write_text(json.dumps(data))
    proc = _cli(str(f))
    assert proc.returncode == 0
    assert proc.stdout.strip().splitlines()[-1] == "2 passed, 0 failed, 2 skipped"


def test_a_known_option_with_a_bad_value_still_refuses_the_file() -> None:
    bad = _game("bad", {"players": 3, "bid_restriction": "none", "tricksy": "yes"})
    with pytest.raises(VectorFormatError, match="tricksy must be true or false"):
        load_vectors({"format": "wizard-conformance/1", "cases": [bad]})


def test_draw_cases() -> None:
    rules = {"players": 3, "bid_restriction": "none", "first_dealer_by_draw": True}
    draw = [["13S", "W", "W"], [None, "J", "2C"]]
    case = _game("draw", rules, draw=draw)
    case["first_dealer"] = 2
    case["rounds"][0]["dealer"] = 2  # type: ignore[index]
    case["rounds"][0]["actions"] = [  # type: ignore[index]
        {"seat": 0, "bid": 0},
        {"seat": 1, "bid": 1},
        {"seat": 2, "bid": 0},
    ]
    (c,) = load_vectors({"format": "wizard-conformance/1", "cases": [case]})
    assert c.run() is None
    case["first_dealer"] = 1
    (c,) = load_vectors({"format": "wizard-conformance/1", "cases": [case]})
    assert "the draw gives 2" in (c.run() or "")
    with pytest.raises(VectorFormatError, match="needs 'draw'"):
        load_vectors({"format": "wizard-conformance/1", "cases": [_game("d", rules)]})
    plain = _game("p", {"players": 3, "bid_restriction": "none"}, draw=draw)
    with pytest.raises(VectorFormatError, match="'draw' needs the rule"):
        load_vectors({"format": "wizard-conformance/1", "cases": [plain]})


def test_generated_vectors_are_current() -> None:
    """tests/vectors/variants-games-v1.json is what scripts/gen_variant_vectors.py
    writes (every variant the generator knows, the new rule forms included)."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_variant_vectors.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    path = ROOT / "tests" / "vectors" / "variants-games-v1.json"
    assert proc.stdout == path.read_text(), "run scripts/gen_variant_vectors.py > " + str(path)
    rules = [c["rules"] for c in json.loads(proc.stdout)["cases"]]
    for option in ("tricksy_suited", "reveal_bids_after_tricks", "first_dealer_by_draw"):
        assert any(option in r for r in rules), option
