"""Honest tables while a stranger without a token hammers the front door.

    python bench/bench_front_door.py                     # the defaults below
    python bench/bench_front_door.py --attack-seconds 20 --streams 1000

A ``wizard-arena serve`` subprocess (4 players, 1 s move time, a token
file, log level warning) runs ``--tables`` tables of honest bots (raw gRPC
bots of :mod:`wizard_arena.testing`, each thinking ``--think`` seconds a
decision, playing game after game), the referee and the honest bots pinned
to CPU 0. After ``--baseline`` seconds of play a separate attacking
process, pinned to CPU 1 (``os.sched_setaffinity``), floods the server for
``--attack-seconds`` (longer if the tokens are not all tried by then) with
three kinds of stream at once, each reopened when the server ends it:

- ``idle``: ``--streams`` Play streams open at once that never send a
  Hello (no token needed), each reopened ``--reopen`` seconds after the
  server ended it;
- ``probes``: streams sending ClockProbeReply messages as fast as they can
  (the first message, then the rest behind it);
- ``tokens``: ``--tokens`` Hellos with wrong access tokens, one stream each.

It reports the honest bots' timeouts (the server's ``fault`` log events
with code ``timeout``) per second of play before and during the attack,
the streams' end statuses, and the server's VmRSS before, at its peak
during and ``--settle`` seconds after the attack. ``--rounds N`` attacks
N times, each followed by ``--settle`` seconds, and gives the RSS after
each (with its anonymous part and the thread count): growth that stays
after the first round only is the first flood's (grpc core's and the
allocator's first use), not each flood's. ``--warm-up SECONDS`` runs a
short flood (then ``--settle``) before the start is measured.
``--trace DIR`` runs the server under tracemalloc and prints what its
Python heap and its objects grew by.

Then the cost of one idle stream without the front door's caps: a fresh
server with ``--max-greeting 0 --max-greeting-per-peer 0 --hello-timeout
120`` and ``--idle`` streams that never say Hello opened at once (and then
cancelled): the server's RSS and CPU time (``/proc/PID/stat``) per stream.

Linux only (reads /proc); loopback only; every wait is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, NoReturn

import grpc

from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import ClockProbeReply, Hello
from wizard_arena.testing import RawBot

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_process import rss_kib, start_serve

TICKS = os.sysconf("SC_CLK_TCK")


#: glibc's arenas of threads other than the main one are heaps of up to
#: 64 MiB, each mapped at an address that is a multiple of it.
MALLOC_HEAP_ALIGN = 64 * 2**20


def memory_map(pid: int) -> dict[str, int]:
    """Process ``pid``'s resident anonymous memory by kind, in KiB, from
    ``/proc/PID/smaps``: ``heap`` (glibc's main arena), ``malloc_arenas``
    (the other threads' glibc heaps) and ``other_anon`` (the rest: CPython's
    pymalloc arenas, blocks mapped on their own, thread stacks)."""
    kinds = {"heap_kib": 0, "malloc_arenas_kib": 0, "other_anon_kib": 0}
    kind: str | None = None
    with contextlib.suppress(OSError), open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and not line[0].isupper():
                start = int(head[0].split("-")[0], 16)
                name = head[5] if len(head) > 5 else ""
                if name == "[heap]":
                    kind = "heap_kib"
                elif name:
                    kind = None  # a file, the stack, vdso...
                elif start % MALLOC_HEAP_ALIGN == 0:
                    kind = "malloc_arenas_kib"
                else:
                    kind = "other_anon_kib"
            elif head[0] == "Rss:" and kind is not None:
                kinds[kind] += int(head[1])
    return kinds


def memory_detail(pid: int) -> dict[str, int]:
    """Where process ``pid``'s RSS is: anonymous and file-backed KiB
    (``/proc/PID/smaps_rollup``), the anonymous part by kind
    (:func:`memory_map`), and its number of threads."""
    detail: dict[str, int] = {}
    with contextlib.suppress(OSError), open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("Rss", "Anonymous", "Pss_Anon", "Pss_File"):
                detail[key.lower() + "_kib"] = int(rest.split()[0])
    detail |= memory_map(pid)
    with contextlib.suppress(OSError):
        detail["threads"] = len(os.listdir(f"/proc/{pid}/task"))
    return detail


def grown(before: dict[str, int], after: dict[str, int]) -> str:
    """The change of each kind of anonymous memory, for a line."""
    return ", ".join(
        f"{key.removesuffix('_kib').replace('_', ' ')} {after[key] - before[key]:+,} KiB"
        for key in ("heap_kib", "malloc_arenas_kib", "other_anon_kib")
        if key in before and key in after
    )


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def pin(pid: int, cpu: int) -> bool:
    """Pin ``pid`` to ``cpu`` if the machine has it."""
    if cpu >= (os.cpu_count() or 1):
        return False
    os.sched_setaffinity(pid, {cpu})
    return True


class Server:
    """A ``wizard-arena serve`` subprocess on a free loopback port, its log
    (JSON lines) read in a thread."""

    def __init__(self, extra: list[str], trace: str | None = None) -> None:
        run = ("-m", "wizard_arena.cli") if trace is None else (__file__, "--traced-serve", trace)
        self.trace = trace
        self.snapshots = 0
        argv = [
            sys.executable,
            *run,
            *("serve", "--port", "0", "--players", "4"),
            *("--move-time", "1", "--log-level", "warning", "--log-format", "json", *extra),
        ]
        self.proc, self.address = start_serve(argv, stdout=subprocess.PIPE)
        pin(self.proc.pid, 0)
        self.events: list[tuple[float, dict[str, Any]]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    self.events.append((time.monotonic(), json.loads(line)))

    def timeouts(self, start: float, end: float) -> int:
        return sum(
            1
            for t, e in list(self.events)
            if start <= t < end and e.get("event") == "fault" and e.get("code") == "timeout"
        )

    def count(self, event: str) -> int:
        return sum(1 for _, e in list(self.events) if e.get("event") == event)

    def snapshot(self) -> None:
        """With ``--trace``: the server writes a tracemalloc snapshot and
        its objects counted by type (:func:`traced_serve`)."""
        if self.trace is not None:
            self.proc.send_signal(signal.SIGUSR1)
            self.snapshots += 1
            time.sleep(3.0)  # (taking one takes a while)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def traced_serve(directory: str, argv: list[str]) -> NoReturn:
    """``wizard-arena`` with ``argv`` under tracemalloc: at each SIGUSR1 a
    snapshot (``snap-N.pickle``) and the live objects counted by type
    (``types-N.json``) in ``directory``, after a garbage collection."""
    import gc
    import tracemalloc

    from wizard_arena.cli import main as cli_main

    tracemalloc.start(8)
    taken = 0

    def dump(_sig: int, _frame: Any) -> None:
        nonlocal taken
        gc.collect()
        tracemalloc.take_snapshot().dump(f"{directory}/snap-{taken}.pickle")
        types = Counter(type(o).__qualname__ for o in gc.get_objects())
        Path(f"{directory}/types-{taken}.json").write_text(json.dumps(dict(types.most_common())))
        taken += 1

    signal.signal(signal.SIGUSR1, dump)
    sys.exit(cli_main(argv))


def compare_snapshots(directory: str, last: int) -> None:
    """Print what the Python heap and the object counts grew by, from the
    first snapshot to the last."""
    import tracemalloc

    first = tracemalloc.Snapshot.load(f"{directory}/snap-0.pickle")
    final = tracemalloc.Snapshot.load(f"{directory}/snap-{last}.pickle")
    size = [sum(s.size for s in snap.statistics("filename")) for snap in (first, final)]
    print(f"traced Python heap: {size[0] / 1024:.0f} -> {size[1] / 1024:.0f} KiB")
    for stat in final.compare_to(first, "lineno")[:15]:
        print(f"  {stat}")
    types = [json.loads(Path(f"{directory}/types-{i}.json").read_text()) for i in (0, last)]
    grown = sorted(((n - types[0].get(t, 0), t) for t, n in types[1].items()), reverse=True)
    print("objects by type, grown: " + ", ".join(f"{t} {d:+d}" for d, t in grown[:15] if d))


# -- the attacker (a process of its own) ---------------------------------------------------


#: Each channel its own TCP connection (grpc shares one between a process's
#: channels to the same address otherwise).
OWN_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]


def _play(channel: grpc.aio.Channel) -> Any:
    return channel.stream_stream(
        f"/{wire.SERVICE_NAME}/Play",
        request_serializer=None,
        response_deserializer=None,
    )


def _raw(msg: Any) -> bytes:
    return bytes(wire.encode_bot(msg).SerializeToString())


async def _one(play: Any, first: list[bytes], hold: asyncio.Event | None) -> str:
    """One stream: send ``first`` (then wait on ``hold`` if given); its end status."""

    async def requests() -> Any:
        for raw in first:
            yield raw
        if hold is not None:
            await hold.wait()

    call = play(requests(), timeout=300)
    try:
        async for _ in call:
            pass
    except grpc.aio.AioRpcError as e:
        return str(e.code().name)
    except asyncio.CancelledError:
        call.cancel()
        raise
    return "OK"


async def attack(address: str, args: argparse.Namespace) -> dict[str, Any]:
    """The floods of the module's docstring, for ``args.attack_seconds``."""
    stop = time.monotonic() + args.attack_seconds
    statuses: dict[str, Counter[str]] = {k: Counter() for k in ("idle", "probes", "tokens")}
    channels = [
        grpc.aio.insecure_channel(address, options=OWN_CONNECTION) for _ in range(args.channels)
    ]
    plays = [_play(c) for c in channels]
    never = asyncio.Event()
    probe_burst = [_raw(ClockProbeReply(f"p{i}")) for i in range(200)]
    tried = 0

    async def idle(i: int) -> None:
        while going():
            statuses["idle"][await _one(plays[i % len(plays)], [], never)] += 1
            await asyncio.sleep(args.reopen)

    async def probes(i: int) -> None:
        while going():
            statuses["probes"][await _one(plays[i % len(plays)], probe_burst, None)] += 1
            await asyncio.sleep(0.01)

    async def tokens(i: int) -> None:
        nonlocal tried
        while tried < args.tokens and time.monotonic() < stop + 2 * args.attack_seconds:
            tried += 1
            hello = _raw(Hello(f"guess-{tried}", token=f"guess-{tried:08d}"))
            statuses["tokens"][await _one(plays[i % len(plays)], [hello], None)] += 1

    async def until_stop(coro: Any, extra: float = 10.0) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(coro, max(0.0, stop - time.monotonic()) + extra)

    # the idle streams and the probe floods go on until all tokens were tried
    # (at most 3 attack times): each kind in full while the others run
    def going() -> bool:
        tokens_left: bool = tried < args.tokens
        return time.monotonic() < stop or (
            tokens_left and time.monotonic() < stop + 2 * args.attack_seconds
        )

    jobs = [until_stop(idle(i), 2 * args.attack_seconds + 10) for i in range(args.streams)]
    jobs += [until_stop(probes(i), 2 * args.attack_seconds + 10) for i in range(8)]
    jobs += [until_stop(tokens(i), 2 * args.attack_seconds + 10) for i in range(32)]
    with contextlib.suppress(TimeoutError):
        # (the streams still open are not waited for: the process ends)
        await asyncio.wait(
            [asyncio.ensure_future(j) for j in jobs], timeout=3 * args.attack_seconds + 20
        )
    return {k: dict(v) for k, v in statuses.items()} | {"tokens_tried": tried}


async def hold_idle(address: str, n: int, ready: Any, release: Any) -> dict[str, Any]:
    """Open ``n`` streams that never say Hello; hold them until ``release``."""
    channels = [
        grpc.aio.insecure_channel(address, options=OWN_CONNECTION) for _ in range(max(1, n // 100))
    ]
    plays = [_play(c) for c in channels]
    never = asyncio.Event()
    tasks = [asyncio.ensure_future(_one(plays[i % len(plays)], [], never)) for i in range(n)]
    await asyncio.sleep(0)
    ready()
    await release()
    statuses = Counter(t.result() for t in tasks if t.done() and not t.exception())
    return {"ended_early": dict(statuses)}


def attacker_main(args: argparse.Namespace) -> NoReturn:
    pinned = pin(0, 1)
    if args.attack_mode == "flood":
        result = asyncio.run(attack(args.attack, args))
    else:
        loop_done = threading.Event()

        async def release() -> None:
            while not loop_done.is_set():
                await asyncio.sleep(0.05)

        def wait_for_go() -> None:
            sys.stdin.readline()
            loop_done.set()

        def ready() -> None:
            print("ready", flush=True)
            threading.Thread(target=wait_for_go).start()

        result = asyncio.run(hold_idle(args.attack, args.idle, ready, release))
    print(json.dumps(result | {"pinned": pinned}), flush=True)
    os._exit(0)  # without waiting for grpc's threads and the streams still open


def attacker(address: str, mode: str, args: argparse.Namespace) -> subprocess.Popen[str]:
    argv = [sys.executable, __file__, "--attack", address, "--attack-mode", mode]
    argv += ["--attack-seconds", str(args.attack_seconds), "--streams", str(args.streams)]
    argv += ["--tokens", str(args.tokens), "--idle", str(args.idle)]
    argv += ["--channels", str(args.channels), "--reopen", str(args.reopen)]
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


# -- the phases ----------------------------------------------------------------------------


def flood_phase(args: argparse.Namespace, say: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        tokens = [f"honest-{i:02d}-token" for i in range(4 * args.tables)]
        token_file = Path(tmp) / "tokens.txt"
        token_file.write_text("\n".join(tokens) + "\n")
        server = Server(
            ["--token-file", str(token_file), "--lag-credit-cap", "0.5"], trace=args.trace
        )
        pid = server.proc.pid
        bots = [
            RawBot(
                server.address,
                f"honest-{i}",
                token=t,
                think=args.think,
                games=None,
                record=False,
                clock_probes=False,
            )
            for i, t in enumerate(tokens)
        ]
        try:
            for b in bots:
                b.start()
            time.sleep(3.0)  # greeted, seated, the first games under way
            warm_up = None
            if args.warm_up:
                rss_cold = rss_kib(pid)
                short = argparse.Namespace(**vars(args))
                short.attack_seconds, short.tokens = args.warm_up, min(args.tokens, 200)
                warm_up = flood_round(server, "warm-up", short, say)
                warm_up = {"rss_before_kib": rss_cold} | warm_up
            t0 = time.monotonic()
            rss_start = rss_kib(pid)
            detail_start = memory_detail(pid)
            server.snapshot()
            cpu0 = cpu_seconds(pid)
            say(f"honest play: {len(bots)} bots, RSS {rss_start / 1024:.1f} MiB")
            time.sleep(args.baseline)
            t1 = time.monotonic()
            cpu1 = cpu_seconds(pid)
            rounds = [flood_round(server, f"attack {r + 1}", args, say) for r in range(args.rounds)]
            t2 = rounds[-1]["attack_end"]
            cpu2 = cpu_seconds(pid)
            t3 = time.monotonic()
            rss_after = rounds[-1]["rss_after_kib"]
            peak = max(r["peak_kib"] for r in rounds)
            down = [b.name for b in bots if b.done.is_set()]
            if args.trace is not None:
                compare_snapshots(args.trace, server.snapshots - 1)
        finally:
            for b in bots:
                b.disconnect()
            code = server.stop()
    before = server.timeouts(t0, t1)
    during = sum(server.timeouts(r["attack_start"], r["attack_end"]) for r in rounds)
    attack_seconds = sum(r["attack_end"] - r["attack_start"] for r in rounds)
    result = {
        "honest_bots": len(bots),
        "baseline_seconds": round(t1 - t0, 1),
        "attack_seconds": round(attack_seconds, 1),
        "timeouts_before": before,
        "timeouts_during": during,
        "timeouts_after": server.timeouts(t2, t3),
        "honest_bots_cut_off": down,
        "referee_cpu_seconds": {"baseline": round(cpu1 - cpu0, 2), "attack": round(cpu2 - cpu1, 2)},
        "rss_kib": {"start": rss_start, "peak": peak, "after": rss_after},
        "memory_start": detail_start,
        "warm_up": warm_up
        and {k: v for k, v in warm_up.items() if k not in ("attack_start", "attack_end")},
        "rounds": [
            {k: v for k, v in r.items() if k not in ("attack_start", "attack_end")} for r in rounds
        ],
        "auth_failed_warnings": server.count("auth_failed"),
        "attacker": [r["attacker"] for r in rounds],
        "exit_code": code,
    }
    say(
        f"timeouts: {before} in {t1 - t0:.0f} s before, {during} in {attack_seconds:.0f} s of "
        f"attack; RSS {rss_start / 1024:.1f} -> peak {peak / 1024:.1f} -> "
        f"{rss_after / 1024:.1f} MiB {args.settle:g} s after the last round"
    )
    say(f"anonymous memory since the start: {grown(detail_start, rounds[-1]['memory_after'])}")
    return result


def flood_round(server: Server, label: str, args: argparse.Namespace, say: Any) -> dict[str, Any]:
    """One attack (the attacker process), then ``--settle`` seconds: its
    times, the server's peak RSS during it and its memory after."""
    pid = server.proc.pid
    say(f"{label}: {args.streams} idle streams, probe replies, {args.tokens} tokens")
    start = time.monotonic()
    proc = None if args.control else attacker(server.address, "flood", args)
    peak = rss_kib(pid)
    hard_stop = start + (args.attack_seconds if proc is None else 3 * args.attack_seconds + 60)
    while (proc is None or proc.poll() is None) and time.monotonic() < hard_stop:
        peak = max(peak, rss_kib(pid))
        time.sleep(0.25)
    end = time.monotonic()
    try:
        out, _ = proc.communicate(timeout=30) if proc is not None else ("{}", "")
        attack_result = json.loads(out.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, IndexError, ValueError):
        if proc is not None:
            proc.kill()
        attack_result = {"error": "the attacker did not report"}
    time.sleep(args.settle)
    after = rss_kib(pid)
    detail = memory_detail(pid)
    server.snapshot()
    say(
        f"  {end - start:.0f} s; RSS peak {peak / 1024:.1f} -> {after / 1024:.1f} MiB "
        f"{args.settle:g} s after (anon {detail.get('anonymous_kib', 0) / 1024:.1f} MiB, "
        f"{detail.get('threads', 0)} threads)"
    )
    return {
        "attack_start": start,
        "attack_end": end,
        "peak_kib": peak,
        "rss_after_kib": after,
        "memory_after": detail,
        "attacker": attack_result,
    }


def idle_cost_phase(args: argparse.Namespace, say: Any) -> dict[str, Any]:
    server = Server(
        ["--max-greeting", "0", "--max-greeting-per-peer", "0", "--hello-timeout", "120"]
    )
    pid = server.proc.pid
    try:
        time.sleep(1.0)
        rss0, cpu0 = rss_kib(pid), cpu_seconds(pid)
        proc = attacker(server.address, "idle", args)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdout.readline()  # ready
        time.sleep(3.0)  # every stream reached the server
        rss1, cpu1 = rss_kib(pid), cpu_seconds(pid)
        time.sleep(5.0)  # idle
        cpu_idle = cpu_seconds(pid)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        proc.wait(60)
        time.sleep(12.0)  # the referee gives freed memory back once a flood is over
        rss2, cpu2 = rss_kib(pid), cpu_seconds(pid)
    finally:
        code = server.stop()
    n = args.idle
    result = {
        "streams": n,
        "rss_kib": {"before": rss0, "open": rss1, "after_close": rss2},
        "bytes_per_stream": round((rss1 - rss0) * 1024 / n),
        "cpu_us_per_stream_open": round((cpu1 - cpu0) * 1e6 / n),
        "cpu_us_per_stream_per_idle_second": round((cpu_idle - cpu1) * 1e6 / n / 5.0, 2),
        "cpu_us_per_stream_open_to_close": round((cpu2 - cpu0) * 1e6 / n),
        "exit_code": code,
    }
    say(
        f"idle streams: {n}: {result['bytes_per_stream']} bytes and "
        f"{result['cpu_us_per_stream_open']} µs of referee CPU each to open, "
        f"{result['cpu_us_per_stream_open_to_close']} µs open to close; RSS "
        f"{rss0 / 1024:.1f} -> {rss1 / 1024:.1f} -> {rss2 / 1024:.1f} MiB"
    )
    return result


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--traced-serve"]:
        traced_serve(argv[1], argv[2:])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--tables", type=int, default=2, help="honest tables of 4 (default 2)")
    p.add_argument("--think", type=float, default=0.5, help="honest bots' seconds a decision")
    p.add_argument("--baseline", type=float, default=30.0, help="seconds of play before")
    p.add_argument("--attack-seconds", type=float, default=40.0, help="seconds of attack")
    p.add_argument("--streams", type=int, default=3000, help="idle streams open at once")
    p.add_argument("--tokens", type=int, default=2000, help="wrong tokens tried")
    p.add_argument("--channels", type=int, default=30, help="attacker's TCP connections")
    p.add_argument(
        "--reopen", type=float, default=0.5, help="seconds before an idle stream is reopened"
    )
    p.add_argument("--idle", type=int, default=2000, help="idle streams for their cost (0: skip)")
    p.add_argument("--settle", type=float, default=10.0, help="seconds after each attack")
    p.add_argument(
        "--rounds", type=int, default=1, help="attacks one after the other (each then --settle)"
    )
    p.add_argument(
        "--control", action="store_true", help="no attacker: the honest tables alone, as long"
    )
    p.add_argument(
        "--trace",
        metavar="DIR",
        help="run the server under tracemalloc (slower): snapshots in DIR at the start and\n"
        "after each round, what grew printed",
    )
    p.add_argument(
        "--warm-up",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="a first flood this long (200 tokens at most), then --settle, before the\n"
        "start is measured (0: none)",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--attack", help=argparse.SUPPRESS)
    p.add_argument("--attack-mode", default="flood", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.attack:
        attacker_main(args)
    pin(0, 0)
    say = (lambda s: print(s, file=sys.stderr)) if args.json else print
    results = {"flood": flood_phase(args, say)}
    if args.idle:
        results["idle_cost"] = idle_cost_phase(args, say)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(json.dumps(results["flood"]["attacker"]))
        for i, r in enumerate(results["flood"]["rounds"]):
            print(f"round {i + 1}: {json.dumps(r['memory_after'])}")
    return 0 if results["flood"]["exit_code"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
