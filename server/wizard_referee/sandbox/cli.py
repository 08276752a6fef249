"""The confinement flags of the verbs that start bots themselves (``compare``,
``check``): ``--sandbox``, ``--memory-limit``, ``--max-processes`` and
``--cpu-limit``, with the names, defaults and bounds of a tournament's keys
(``sandbox``, ``memory_limit``, ``max_processes``, ``cpu_limit``).

>>> parse_size("512M"), parse_size("1G"), parse_size("134217728")
(536870912, 1073741824, 134217728)
"""

from __future__ import annotations

import argparse
import math

from wizard_referee.sandbox.bwrap import SANDBOXES
from wizard_referee.sandbox.cgroups import OUTPUT_LIMIT, Limits, size_text

__all__ = [
    "MIN_MEMORY",
    "add_limit_arguments",
    "add_sandbox_arguments",
    "limits_from_args",
    "parse_size",
]

#: The smallest limits a tournament's keys accept (config_keys.LIMIT_KEYS).
MIN_MEMORY = 16 * 2**20
MIN_PROCESSES = 8
MIN_CPUS = 0.01

_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30}


def parse_size(text: str) -> int:
    """Bytes, or a number with K, M or G (KiB, MiB, GiB): ValueError otherwise."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = _UNITS.get(t[-1:], 1)
    number = t[:-1] if t[-1:] in _UNITS else t
    value = float(number)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(text)
    return int(value * unit)


def _memory(text: str) -> int:
    try:
        n = parse_size(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected bytes or a size such as 512M or 1G, not {text!r}"
        ) from None
    if n < MIN_MEMORY:
        raise argparse.ArgumentTypeError(f"at least {size_text(MIN_MEMORY)}, not {text}")
    return n


def _output(text: str) -> int:
    if text.strip() == "0":
        return 0
    try:
        return parse_size(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected bytes or a size such as 10M, or 0 (no limit), not {text!r}"
        ) from None


def _processes(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if n < MIN_PROCESSES:
        raise argparse.ArgumentTypeError(f"at least {MIN_PROCESSES}, not {n}")
    return n


def _cpus(text: str) -> float:
    try:
        n = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of CPUs, not {text!r}") from None
    if not math.isfinite(n) or n < MIN_CPUS:
        raise argparse.ArgumentTypeError(f"at least {MIN_CPUS:g}, not {text}")
    return n


def add_sandbox_arguments(group: argparse._ArgumentGroup, what: str) -> None:
    """The flags, ``what`` naming the bots they confine ("the bots", "the bot")."""
    group.add_argument(
        "--sandbox",
        choices=SANDBOXES,
        default="none",
        help=f"how {what} run: bwrap (confined: an unprivileged uid, a read-only folder, "
        "no network, the limits below; needs bubblewrap; docs/untrusted-bots.md) or none "
        "(as this user; the default)",
    )
    add_limit_arguments(group)
    group.add_argument(
        "--output-limit",
        type=_output,
        default=OUTPUT_LIMIT,
        metavar="BYTES",
        help=f"confined or not: bytes of output each start of {what} keeps in its log; the "
        f"rest is dropped, one line saying so (10M; 0: no limit; default {OUTPUT_LIMIT})",
    )


def add_limit_arguments(
    group: argparse._ArgumentGroup, when: str = "with --sandbox bwrap", *, kept: str = ""
) -> None:
    """``--memory-limit``, ``--max-processes`` and ``--cpu-limit`` (``when``:
    in what case they apply, the start of each help text). ``kept``: what
    a limit not given keeps (its value is then None), instead of the default."""
    d = Limits()
    memory, processes, cpus = (
        (f"default: {kept}",) * 3
        if kept
        else (f"default {size_text(d.memory)}", f"default {d.processes}", f"default {d.cpus:g}")
    )
    group.add_argument(
        "--memory-limit",
        type=_memory,
        default=None if kept else d.memory,
        metavar="BYTES",
        help=f"{when}: memory of each bot process, its /tmp included (512M, 1G; {memory})",
    )
    group.add_argument(
        "--max-processes",
        type=_processes,
        default=None if kept else d.processes,
        metavar="N",
        help=f"{when}: processes and threads of each bot at once ({processes})",
    )
    group.add_argument(
        "--cpu-limit",
        type=_cpus,
        default=None if kept else d.cpus,
        metavar="CPUS",
        help=f"{when}: CPUs' worth of time of each bot, as a quota ({cpus})",
    )


def limits_from_args(args: argparse.Namespace) -> Limits:
    """The limits the flags give."""
    return Limits(args.memory_limit, args.max_processes, float(args.cpu_limit))
