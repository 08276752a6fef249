#!/usr/bin/env python3
"""Render docs/protocol-reference.md's messages from proto/wizard_arena/v1/arena.proto.

    python scripts/gen_protocol_doc.py           # rewrite the generated section
    python scripts/gen_protocol_doc.py --check   # exit 1 if it is out of date

Only the part of docs/protocol-reference.md between the BEGIN/END GENERATED markers is
written; the rest of the file is hand-written. The .proto is compiled with
protoc (grpcio-tools, the dev extra) into a descriptor set with source
info, so every service, message, field, enum and value appears with the
comment written above it in the .proto, in file order.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PROTO = "wizard_arena/v1/arena.proto"
DOC = ROOT / "docs" / "protocol-reference.md"
BEGIN = "<!-- BEGIN GENERATED: scripts/gen_protocol_doc.py; do not edit by hand -->"
END = "<!-- END GENERATED -->"

# FieldDescriptorProto.Type -> proto spelling
_SCALARS = {
    1: "double",
    2: "float",
    3: "int64",
    4: "uint64",
    5: "int32",
    6: "fixed64",
    7: "fixed32",
    8: "bool",
    9: "string",
    12: "bytes",
    13: "uint32",
    15: "sfixed32",
    16: "sfixed64",
    17: "sint32",
    18: "sint64",
}
_MESSAGE, _ENUM = 11, 14
_LABEL_REPEATED = 3
# source-code-info paths (field numbers in FileDescriptorProto and friends)
_FILE_MESSAGE, _FILE_ENUM, _FILE_SERVICE = 4, 5, 6
_MSG_FIELD, _MSG_ONEOF = 2, 8
_ENUM_VALUE = 2
_SERVICE_METHOD = 2


def compile_descriptor() -> Any:
    """The FileDescriptorProto of arena.proto, with comments."""
    from google.protobuf import descriptor_pb2
    from grpc_tools import protoc  # dev dependency (grpcio-tools)

    include = Path(protoc.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "arena.desc"
        args = [
            "protoc",
            f"-I{PROTO_ROOT}",
            f"-I{include}",
            f"--descriptor_set_out={out}",
            "--include_source_info",
            PROTO,
        ]
        if protoc.main(args) != 0:
            raise SystemExit("protoc failed")
        fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    (fd,) = [f for f in fds.file if f.name == PROTO]
    return fd


def _comments(fd: Any) -> dict[tuple[int, ...], str]:
    out = {}
    for loc in fd.source_code_info.location:
        text = loc.leading_comments.strip()
        if loc.trailing_comments.strip():
            text = (text + " " + loc.trailing_comments.strip()).strip()
        if text:
            out[tuple(loc.path)] = " ".join(line.strip() for line in text.splitlines())
    return out


def _type_name(field: Any, package: str) -> str:
    if field.type in (_MESSAGE, _ENUM):
        name = field.type_name.lstrip(".")
        short = name.removeprefix(package + ".")
        return f"[`{short}`](#{short.lower()})"
    return f"`{_SCALARS.get(field.type, str(field.type))}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|") or " "


def render(fd: Any) -> str:
    notes = _comments(fd)
    pkg = fd.package
    lines: list[str] = [BEGIN, ""]
    lines += [
        f"Package `{pkg}`, file `proto/{fd.name}`. Generated from the .proto: each entry",
        "carries the comment written above it there.",
        "",
    ]
    for si, svc in enumerate(fd.service):
        lines += [f"### service `{svc.name}`", ""]
        lines += [notes.get((_FILE_SERVICE, si), ""), ""]
        lines += ["| method | request | response | description |", "| --- | --- | --- | --- |"]
        for mi, m in enumerate(svc.method):
            req = m.input_type.lstrip(".").removeprefix(pkg + ".")
            resp = m.output_type.lstrip(".").removeprefix(pkg + ".")
            req = ("stream " if m.client_streaming else "") + f"[`{req}`](#{req.lower()})"
            resp = ("stream " if m.server_streaming else "") + f"[`{resp}`](#{resp.lower()})"
            note = notes.get((_FILE_SERVICE, si, _SERVICE_METHOD, mi), "")
            lines.append(f"| `{m.name}` | {req} | {resp} | {_cell(note)} |")
        lines.append("")
    lines += ["### Messages", ""]
    for mi, msg in enumerate(fd.message_type):
        lines += [f"#### {msg.name}", ""]
        note = notes.get((_FILE_MESSAGE, mi), "")
        if note:
            lines += [note, ""]
        if not msg.field:
            lines += ["(no fields)", ""]
            continue
        lines += ["| # | field | type | description |", "| --- | --- | --- | --- |"]
        for fi, f in enumerate(msg.field):
            kind = _type_name(f, pkg)
            if f.label == _LABEL_REPEATED:
                kind = "repeated " + kind
            if f.HasField("oneof_index") and not f.proto3_optional:
                kind += f" (oneof `{msg.oneof_decl[f.oneof_index].name}`)"
            desc = notes.get((_FILE_MESSAGE, mi, _MSG_FIELD, fi), "")
            lines.append(f"| {f.number} | `{f.name}` | {kind} | {_cell(desc)} |")
        if msg.reserved_range or msg.reserved_name:
            spans = [
                str(r.start) if r.end - 1 == r.start else f"{r.start}-{r.end - 1}"
                for r in msg.reserved_range
            ]
            lines += ["", "Reserved: " + ", ".join(spans + list(msg.reserved_name))]
        lines.append("")
    lines += ["### Enums", ""]
    for ei, enum in enumerate(fd.enum_type):
        lines += [f"#### {enum.name}", ""]
        note = notes.get((_FILE_ENUM, ei), "")
        if note:
            lines += [note, ""]
        lines += ["| value | name | description |", "| --- | --- | --- |"]
        for vi, v in enumerate(enum.value):
            desc = notes.get((_FILE_ENUM, ei, _ENUM_VALUE, vi), "")
            lines.append(f"| {v.number} | `{v.name}` | {_cell(desc)} |")
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def updated(doc: str, section: str) -> str:
    try:
        start = doc.index(BEGIN)
        end = doc.index(END, start) + len(END)
    except ValueError:
        raise SystemExit(f"{DOC}: the BEGIN/END GENERATED markers are missing") from None
    return doc[:start] + section + doc[end:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if the doc is out of date")
    args = ap.parse_args()
    doc = DOC.read_text(encoding="utf-8")
    new = updated(doc, render(compile_descriptor()))
    if args.check:
        if new != doc:
            diff = difflib.unified_diff(
                doc.splitlines(),
                new.splitlines(),
                "docs/protocol-reference.md",
                "generated",
                lineterm="",
            )
            print("\n".join(list(diff)[:60]))
            print(
                "docs/protocol-reference.md is out of date: run python scripts/gen_protocol_doc.py",
                file=sys.stderr,
            )
            return 1
        print("docs/protocol-reference.md is current")
        return 0
    if new != doc:
        DOC.write_text(new, encoding="utf-8")
        print(f"wrote {DOC.relative_to(ROOT)}")
    else:
        print(f"{DOC.relative_to(ROOT)} already current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
