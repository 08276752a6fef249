"""The referee's memory over thousands of refused connections with big tokens.

    python bench/bench_refused.py                        # 5,000 per server, 60 kB tokens
    python bench/bench_refused.py --connections 1000 --token-bytes 20000

A hostile or broken client may open stream after stream that the server
refuses, each carrying a big token of its choosing. The server must keep
nothing for them. The bench starts a ``wizard-arena serve`` subprocess
(``--tricksy``, so a Hello without ``rule_options`` is refused; log level
warning, so refusals are not logged) and opens ``--connections`` streams,
each on a channel (a TCP connection) of its own, ``--concurrency`` at a
time, cycling through the refusals:

- ``options``: a Hello without the rule option in force, with a distinct
  access token of ``--token-bytes`` (issue #10's case: 600 of them with
  60 kB tokens grew the server by ~33 MB);
- ``version``: no protocol version in common, a distinct big token;
- ``resume``: a distinct big resume token the server never issued;
- ``garbage``: ``--token-bytes`` bytes that do not decode as a BotMessage.

Then the same against a server with a token file (``--token-file``):

- ``token``: a distinct big access token that is not in the file.

It reports the server's VmRSS (``/proc/PID/status``) when it is up, after
every ``--step`` connections, and a few seconds after the last one, with the
status codes the streams ended with. Linux only (reads /proc); loopback
only; every wait is bounded.
"""

from __future__ import annotations

import argparse
import itertools
import json
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc

from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import Hello

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_process import rss_kib, start_serve

OPEN_KINDS = ("options", "version", "resume", "garbage")
TOKEN_KINDS = ("token",)


class Server:
    """A ``wizard-arena serve`` subprocess on a free loopback port."""

    def __init__(self, extra: list[str]) -> None:
        argv = [
            sys.executable,
            *("-m", "wizard_arena.cli", "serve", "--port", "0", "--players", "4"),
            *("--tricksy", "--log-level", "warning", "--log-format", "json", *extra),
        ]
        self.proc, self.address = start_serve(argv)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        return code


def first_message(kind: str, i: int, size: int) -> bytes:
    """The ``i``-th refused first message of ``kind``, with ``size`` bytes of
    token (distinct for each ``i``)."""
    big = f"{i:010d}".ljust(size, "t")
    if kind == "options":
        hello = Hello(f"bench-{i}", token=big)
    elif kind == "version":
        hello = Hello(f"bench-{i}", token=big, min_version=7, max_version=9)
    elif kind == "resume":
        hello = Hello(f"bench-{i}", resume_token=big, rule_options=("tricksy",))
    elif kind == "token":
        hello = Hello(f"bench-{i}", token=big, rule_options=("tricksy",))
    elif kind == "garbage":
        return b"\x0a" + big.encode()[: size - 1]  # a field that runs past the end
    else:
        raise ValueError(kind)
    return bytes(wire.encode_bot(hello).SerializeToString())


def refuse(address: str, raw: bytes) -> str:
    """Open a channel, send ``raw`` as the first message, half-close; the status name."""
    with grpc.insecure_channel(address) as channel:
        play: grpc.StreamStreamMultiCallable[bytes, Any] = channel.stream_stream(
            f"/{wire.SERVICE_NAME}/Play",
            request_serializer=None,
            response_deserializer=wire.pb.ServerMessage.FromString,
        )
        try:
            for _ in play(iter([raw]), timeout=30):
                pass
        except grpc.RpcError as e:
            return str(e.code().name)
        return "OK"


def run_phase(
    name: str,
    server: Server,
    kinds: tuple[str, ...],
    args: argparse.Namespace,
    say: Callable[[str], None],
) -> dict[str, Any]:
    pid = server.proc.pid
    time.sleep(1.0)  # settle after start-up
    start = rss_kib(pid)
    samples = [(0, start)]
    codes: Counter[str] = Counter()
    say(f"{name}: {server.address}, RSS at start {start / 1024:.1f} MiB")
    numbers = itertools.count()
    began = time.monotonic()
    with ThreadPoolExecutor(args.concurrency) as pool:
        done = 0
        while done < args.connections:
            batch = min(args.step, args.connections - done)
            messages = [
                first_message(kinds[i % len(kinds)], i, args.token_bytes)
                for i in itertools.islice(numbers, batch)
            ]
            codes.update(pool.map(lambda raw: refuse(server.address, raw), messages))
            done += batch
            samples.append((done, rss_kib(pid)))
            say(f"  {done:>6} refused: RSS {samples[-1][1] / 1024:.1f} MiB")
    took = time.monotonic() - began
    time.sleep(args.settle)
    end = rss_kib(pid)
    say(f"  {args.settle:g} s later: RSS {end / 1024:.1f} MiB ({dict(codes)})")
    return {
        "server": name,
        "kinds": list(kinds),
        "connections": args.connections,
        "token_bytes": args.token_bytes,
        "seconds": round(took, 2),
        "rss_kib": {"start": start, "samples": samples, "after": end},
        "peak_growth_kib": max(r for _, r in samples) - start,
        "statuses": dict(codes),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--connections", type=int, default=5000, help="per server (default 5000)")
    p.add_argument("--token-bytes", type=int, default=60_000, help="size of each token")
    p.add_argument("--concurrency", type=int, default=8, help="streams open at once")
    p.add_argument("--step", type=int, default=1000, help="sample RSS every N connections")
    p.add_argument("--settle", type=float, default=3.0, help="seconds before the last sample")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)
    say: Callable[[str], None] = (lambda s: print(s, file=sys.stderr)) if args.json else print
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        tokens = Path(tmp) / "tokens.txt"
        tokens.write_text("bench-only-valid-token\n")
        for name, extra, kinds in (
            ("open", [], OPEN_KINDS),
            ("token-file", ["--token-file", str(tokens)], TOKEN_KINDS),
        ):
            server = Server(extra)
            try:
                results.append(run_phase(name, server, kinds, args, say))
            finally:
                code = server.stop()
            results[-1]["exit_code"] = code
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        row = "{:<11} {:<30} {:>6} {:>6} {:>10} {:>10} {:>11}"
        print()
        head = ("server", "kinds", "conns", "token", "start MiB", "peak +MiB", "after +MiB")
        print(row.format(*head))
        for r in results:
            rss = r["rss_kib"]
            print(
                row.format(
                    r["server"],
                    ",".join(r["kinds"]),
                    r["connections"],
                    r["token_bytes"],
                    f"{rss['start'] / 1024:.1f}",
                    f"{r['peak_growth_kib'] / 1024:.1f}",
                    f"{(rss['after'] - rss['start']) / 1024:.1f}",
                )
            )
    bad = [r for r in results if r["exit_code"] != 0 or "OK" in r["statuses"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
