"""The fault and reject codes: one enum each, the same in the rules core, the
referee, the wire and docs/protocol-reference.md."""

from __future__ import annotations

import json
import re

import pytest

from wizard_arena.protocol import wire
from wizard_arena.protocol.codes import FaultCode, RejectCode
from wizard_arena.protocol.messages import REJECT_CODES, ActionRejected
from wizard_arena.rules import RuleError
from wizard_referee.referee.faults import FAULT_CODES, FAULT_POLICIES, FaultPolicy, Sanction
from wizard_referee.referee.record import GameRecord

from .conftest import ROOT

DOC = (ROOT / "docs" / "protocol-reference.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    """The text of the docs section headed ``title`` (to the next heading)."""
    start = DOC.index(f"\n{title}\n")
    end = DOC.find("\n#", start + len(title) + 2)
    return DOC[start : end if end >= 0 else None]


def test_the_docs_list_exactly_the_reject_codes() -> None:
    rows = re.findall(r"^\| `REJECT_REASON_(\w+)` \| `(\w+)` \|", DOC, re.MULTILINE)
    assert [code for _, code in rows] == [c.value for c in RejectCode]
    assert all(name == RejectCode(code).name for name, code in rows)


def test_the_docs_list_exactly_the_fault_codes() -> None:
    rows = re.findall(r"^\| `(\w+)` \| (.+) \|$", _section("### Fault codes"), re.MULTILINE)
    assert dict(rows) == {c.value: FAULT_CODES[c] for c in FaultCode}
    assert [code for code, _ in rows] == [c.value for c in FaultCode]


def test_the_docs_name_every_fault_policy_and_sanction() -> None:
    policy = _section("### Fault policy")
    rows = re.findall(r"^\| `(\w+)`(?: \(the default\))? \|", policy, re.MULTILINE)
    assert rows == list(FAULT_POLICIES) == [p.value for p in FaultPolicy]
    for sanction in Sanction:
        assert f"moves recorded with fault `{sanction}`" in policy


def test_every_rule_error_code_is_a_reject_code() -> None:
    def subclasses(cls: type) -> list[type]:
        return [c for s in cls.__subclasses__() for c in (s, *subclasses(s))]

    codes = {c.code for c in subclasses(RuleError)}  # type: ignore[attr-defined]
    assert codes and codes <= set(RejectCode)
    assert set(RejectCode) - codes == {RejectCode.UNKNOWN_REQUEST, RejectCode.MALFORMED}
    assert tuple(RejectCode) == REJECT_CODES


@pytest.mark.parametrize("code", list(RejectCode))
def test_each_reject_code_crosses_the_wire(code: RejectCode) -> None:
    msg = ActionRejected("r1", "g1", code, "why", 0.5)
    raw = wire.encode_server(msg)
    reason = wire.pb.RejectReason.Value(f"REJECT_REASON_{code.name}")
    assert raw.action_rejected.reason == reason
    back = wire.decode_server(raw)
    assert isinstance(back, ActionRejected) and back.code == code == code.value


def test_the_wire_knows_every_reject_reason_of_the_proto() -> None:
    names = wire.pb.RejectReason.DESCRIPTOR.values_by_name
    reasons = {n.removeprefix("REJECT_REASON_") for n in names}
    assert reasons - {"UNSPECIFIED"} == {c.name for c in RejectCode}


def test_codes_are_their_strings_in_records_and_json() -> None:
    rec = GameRecord("g", {}, ["a", "b", "c"], 1, 0, 0.0)
    rec.faults, rec.fault_details = [{}, {}, {}], [{}, {}, {}]
    rec.add_fault(1, FaultCode.TIMEOUT, "late")
    rec.add_fault(1, FaultCode.TIMEOUT, "late again")
    data = json.loads(rec.to_json())
    assert data["faults"] == [{}, {"timeout": 2}, {}]
    assert data["fault_details"][1] == {"timeout": "late"}
    assert GameRecord.from_json(rec.to_json()) == rec
    assert f"{FaultCode.DISCONNECT}" == "disconnect" and FaultCode("crash") is FaultCode.CRASH
