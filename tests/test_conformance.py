"""Every shared rules vector passes, through the library and through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wizard_arena.conformance.runner import VectorFormatError, load_vectors, run_files

from .conftest import ROOT, SHARED_CONFORMANCE

SHARED_FILES = sorted(SHARED_CONFORMANCE.glob("*.json"))
PROJECT_FILES = sorted((ROOT / "tests" / "vectors").glob("*.json"))


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


def test_cli_summary_line() -> None:
    proc = _cli(*map(str, SHARED_FILES))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    total = sum(len(json.loads(p.read_text())["cases"]) for p in SHARED_FILES)
    assert proc.stdout.strip().splitlines()[-1] == f"{total} passed, 0 failed"


def test_cli_reports_failure_with_first_difference(tmp_path: Path) -> None:
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
    proc = _cli(str(f))
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
def test_cli_refuses_malformed_file(tmp_path: Path, content: str, message: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(content)
    proc = _cli(str(f))
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
