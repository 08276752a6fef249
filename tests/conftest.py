from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_CONFORMANCE = Path(
    os.environ.get("WIZARD_ARENA_SHARED_CONFORMANCE") or ROOT.parent / "shared" / "conformance"
)
SHARED_FILES = sorted(SHARED_CONFORMANCE.glob("*.json"))
"""The language-neutral rules vectors, beside the repository (none on a lone clone)."""

#: Set in CI (.ci/run): the shared vectors must be there, a missing folder fails.
SHARED_REQUIRED = os.environ.get("WIZARD_ARENA_REQUIRE_SHARED") == "1"

requires_shared_vectors = pytest.mark.skipif(
    not SHARED_FILES and not SHARED_REQUIRED,
    reason=f"the shared rules vectors are not here ({SHARED_CONFORMANCE} has no *.json): "
    "they come with the project's shared folder beside this repository, not with a clone "
    "of it alone; set WIZARD_ARENA_REQUIRE_SHARED=1 to make their absence a failure",
)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT
