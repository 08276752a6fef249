"""buf's checks of the .proto (buf.yaml; .ci/run runs them too): the lint
passes with the four documented naming exceptions, nothing of v1.0 or v1.1
is broken, each baseline is the minor version it names, and the breaking
check does catch a change that would break v1 bots. Needs buf from the npm
registry: ``npm ci --prefix tools/buf`` (the baselines' contents are checked
without it)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from .conftest import ROOT
from .support import scaled

BUF = ROOT / "tools" / "buf" / "node_modules" / ".bin" / "buf"
BASELINE = ROOT / "proto" / "v1-baseline.binpb"
BASELINE_1_1 = ROOT / "proto" / "v1.1-baseline.binpb"

needs_buf = pytest.mark.skipif(
    not BUF.exists(), reason="buf is not installed: npm ci --prefix tools/buf"
)


def buf(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BUF), *args], capture_output=True, text=True, timeout=scaled(120), cwd=cwd
    )


def test_the_lint_exceptions_are_the_four_naming_findings() -> None:
    """buf.yaml excepts exactly the three rules behind the four findings,
    each for the v1 file and each with its reason."""
    text = (ROOT / "buf.yaml").read_text(encoding="utf-8")
    rules = re.findall(r"^    ([A-Z_]+):\n      - (\S+)$", text, re.M)
    assert rules == [
        ("SERVICE_SUFFIX", "proto/wizard_arena/v1/arena.proto"),
        ("RPC_REQUEST_STANDARD_NAME", "proto/wizard_arena/v1/arena.proto"),
        ("RPC_RESPONSE_STANDARD_NAME", "proto/wizard_arena/v1/arena.proto"),
    ]
    for finding in ('"WizardArena"', '"BotMessage"', '"ServerMessage"', '"ServerInfo"'):
        assert finding in text


@pytest.mark.e2e
@needs_buf
def test_buf_lint_and_breaking_pass() -> None:
    lint = buf("lint")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    for baseline in (BASELINE, BASELINE_1_1):
        breaking = buf("breaking", "--against", str(baseline))
        assert breaking.returncode == 0, breaking.stdout + breaking.stderr


def _fields(image: Path, message: str) -> list[str]:
    """The field names of ``message`` in a buf image (a FileDescriptorSet)."""
    files = descriptor_pb2.FileDescriptorSet.FromString(image.read_bytes()).file
    (arena,) = [f for f in files if f.name == "wizard_arena/v1/arena.proto"]
    (msg,) = [m for m in arena.message_type if m.name == message]
    return [f.name for f in msg.field]


def test_each_baseline_is_its_minor_version() -> None:
    """v1.0 has no Hello.event_stream; v1.1 has it and not v1.2's
    Hello.clock_probes, nor the ClockProbe messages."""
    assert "event_stream" not in _fields(BASELINE, "Hello")
    assert _fields(BASELINE_1_1, "Hello")[-1] == "event_stream"
    assert "clock_probe" not in _fields(BASELINE_1_1, "ServerMessage")
    assert "network_credit_ms" not in _fields(BASELINE_1_1, "DecisionRequest")


def _edited_copy(tmp_path: Path, old: str, new: str) -> tuple[Path, str]:
    """proto/ and buf.yaml copied to ``tmp_path``, the line ``old`` of the
    .proto replaced by ``new``: the .proto's path and its original text."""
    shutil.copytree(ROOT / "proto", tmp_path / "proto", ignore=shutil.ignore_patterns("*.binpb"))
    shutil.copy(ROOT / "buf.yaml", tmp_path / "buf.yaml")
    proto = tmp_path / "proto" / "wizard_arena" / "v1" / "arena.proto"
    text = proto.read_text(encoding="utf-8")
    assert f"  {old}\n" in text
    proto.write_text(text.replace(f"  {old}\n", f"  {new}\n"))
    return proto, text


@pytest.mark.e2e
@needs_buf
def test_buf_breaking_catches_a_change_that_breaks_v1(tmp_path: Path) -> None:
    proto, text = _edited_copy(tmp_path, "string bot_name = 3;", "string bot_name = 99;")
    breaking = buf("breaking", "--against", str(BASELINE), cwd=tmp_path)
    assert breaking.returncode != 0
    assert 'field "3" with name "bot_name" on message "Hello" was deleted' in breaking.stdout
    # and the lint keeps buf's other standard rules: a lower-case message name
    proto.write_text(text + "\nmessage bad_name {}\n")
    lint = buf("lint", cwd=tmp_path)
    assert lint.returncode != 0 and "bad_name" in lint.stdout


@pytest.mark.e2e
@needs_buf
def test_the_v1_1_baseline_catches_a_change_to_v1_1(tmp_path: Path) -> None:
    """A v1.1 field renumbered: v1.0's baseline cannot see it, v1.1's does."""
    _edited_copy(tmp_path, "EventStream event_stream = 9;", "EventStream event_stream = 99;")
    assert buf("breaking", "--against", str(BASELINE), cwd=tmp_path).returncode == 0
    breaking = buf("breaking", "--against", str(BASELINE_1_1), cwd=tmp_path)
    assert breaking.returncode != 0
    assert 'field "9" with name "event_stream" on message "Hello" was deleted' in breaking.stdout
