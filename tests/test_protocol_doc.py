"""docs/protocol.md stays true to the .proto and to the code."""

from __future__ import annotations

import subprocess
import sys

import pytest

from wizard_arena.protocol.messages import REJECT_CODES
from wizard_referee.referee.record import FAULT_CODES

from .conftest import ROOT

DOC = ROOT / "docs" / "protocol.md"


def test_protocol_reference_is_current() -> None:
    pytest.importorskip("grpc_tools")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_protocol_doc.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_reject_reason_and_fault_code_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    for code in REJECT_CODES:
        assert f"| `REJECT_REASON_{code.upper()}` | `{code}` |" in text, code
    for code, meaning in FAULT_CODES.items():
        assert f"| `{code}` | {meaning} |" in text, code
