"""The protocol's pages (docs/protocol.md, docs/protocol-reference.md,
docs/other-languages.md) stay true to the .proto and to the code."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from wizard_arena.protocol.messages import REJECT_CODES
from wizard_referee.referee.faults import FAULT_CODES

from .conftest import ROOT
from .support import scaled

DOC = ROOT / "docs" / "protocol.md"
REFERENCE = ROOT / "docs" / "protocol-reference.md"
OTHER_LANGUAGES = ROOT / "docs" / "other-languages.md"


def test_protocol_reference_is_current() -> None:
    pytest.importorskip("grpc_tools")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_protocol_doc.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_reject_reason_and_fault_code_is_documented() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    for code in REJECT_CODES:
        assert f"| `REJECT_REASON_{code.upper()}` | `{code}` |" in text, code
    for code, meaning in FAULT_CODES.items():
        assert f"| `{code}` | {meaning} |" in text, code


def test_the_grpcurl_description_of_hello_is_current() -> None:
    """The ``describe wizard_arena.v1.Hello`` example lists every field of
    the Hello, in order (it went stale once: no resume_token)."""
    from google.protobuf.descriptor import FieldDescriptor

    from wizard_arena.protocol import wire

    text = OTHER_LANGUAGES.read_text(encoding="utf-8")
    block = text.split("describe wizard_arena.v1.Hello\n", 1)[1].split("}\n", 1)[0]
    shown = re.findall(r"^  (.+) (\w+) = (\d+);$", block, re.M)
    fields = wire.pb.Hello.DESCRIPTOR.fields
    assert [(name, int(n)) for _, name, n in shown] == [(f.name, f.number) for f in fields]
    for (type_text, _, _), f in zip(shown, fields, strict=True):
        if f.type == FieldDescriptor.TYPE_ENUM:
            assert type_text == f".{f.enum_type.full_name}"
        elif f.is_repeated:
            assert type_text.startswith("repeated ")


def test_the_keepalive_settings_are_documented() -> None:
    """The table of the server's keepalive options is what the bridge sets,
    and the SDK's own keepalive is within what the server accepts."""
    from wizard_arena.client.connection import KEEPALIVE
    from wizard_referee.referee.bridge import KEEPALIVE_OPTIONS

    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Connections: keepalive and dropped streams", 1)[1].split("\n## ")[0]
    table = dict(re.findall(r"^\| `(grpc\.[\w.]+)` \| (\d+) \|", section, re.M))
    assert {k: int(v) for k, v in table.items()} == dict(KEEPALIVE_OPTIONS)
    client = dict(KEEPALIVE)
    server = dict(KEEPALIVE_OPTIONS)
    every = client["grpc.keepalive_time_ms"]
    assert every >= server["grpc.http2.min_ping_interval_without_data_ms"]
    assert "30 s, 10 s" in section
    assert (every, client["grpc.keepalive_timeout_ms"]) == (30_000, 10_000)


def test_the_conformance_vectors_linked_exist() -> None:
    text = OTHER_LANGUAGES.read_text(encoding="utf-8")
    for name in ("variants-v1.json", "variants-games-v1.json"):
        assert name in text and (ROOT / "tests" / "vectors" / name).is_file()
    assert "../shared/conformance/rules-v1.json" in text
