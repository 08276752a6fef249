"""``wizard-arena ARGS`` run in the test's own process (:func:`cli_here`), for
tests about arguments, messages and output: a CLI subprocess costs 0.2-0.5 s
of CPU just to start. Tests of the end-to-end path (the console entry, exit
statuses, stdout and stderr of a real process) and of anything that needs a
process of its own (signals, a bot that crashes, a verb that starts a referee
and bot processes) keep a real subprocess.

What a verb may change in the process is put back afterwards, so nothing
leaks into the worker's later tests: ``sys.path`` (a bot file's folder),
the working directory (through ``monkeypatch``), the environment, structlog's
configuration and the root logger's handlers and level (``configure_logging``),
and the garbage collector's frozen objects (``freeze_startup_objects``).
"""

from __future__ import annotations

import gc
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import structlog

from wizard_arena import cli


@dataclass(frozen=True)
class Ran:
    """What ``wizard-arena ARGS`` did: its exit status and its output."""

    returncode: int
    stdout: str
    stderr: str


def cli_here(
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cwd: Path | None = None,
) -> Ran:
    """``wizard-arena ARGS`` in this process (argparse's SystemExit gives the
    status), in ``cwd`` if given; stdout and stderr as the command wrote them."""
    capsys.readouterr()  # only this command's output
    monkeypatch.setattr(sys, "path", list(sys.path))
    if cwd is not None:
        monkeypatch.chdir(cwd)
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", list(root.handlers))
    monkeypatch.setattr(root, "level", root.level)
    configured, config = structlog.is_configured(), structlog.get_config()
    frozen = gc.get_freeze_count()
    environ = dict(os.environ)  # e.g. serve's grpc settings, set before grpc loads
    try:
        code = cli.main(args)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
    finally:
        if configured:
            structlog.configure(**config)
        else:
            structlog.reset_defaults()
        if not frozen:
            gc.unfreeze()
        if dict(os.environ) != environ:
            os.environ.clear()
            os.environ.update(environ)
    out = capsys.readouterr()
    return Ran(code, out.out, out.err)
