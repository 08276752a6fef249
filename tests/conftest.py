from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_CONFORMANCE = ROOT.parent / "shared" / "conformance"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT
