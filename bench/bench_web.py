"""The web pages: how fast a replay renders, how many leaderboard requests a
second the pages serve, and how many games a minute the referee keeps
while page clients poll it.

    python bench/bench_web.py                       # all three parts
    python bench/bench_web.py --only replay         # or leaderboard, referee
    python bench/bench_web.py --clients 200 --phase 30

- ``replay``: a store of 4-player, 15-round games (4 heuristic bots) served
  by ``wizard-arena web``; headless Chromium (``/usr/bin/chromium``,
  Playwright) loads a game's replay ``--loads`` times, then once each the
  deal set's other games. Reported: the time from navigation to the
  replay drawn (the page's ``data-render-ms``: ``performance.now()`` once
  the first step is shown, the fetch included), for a game the server has
  cached and for one it re-reads first (the record through the rules
  core), the browser's very first page apart (it starts the browser's
  renderer); and the time to draw one step with its layout (every step
  of the game shown in turn, as the arrow key does, each followed by a
  forced layout).
- ``leaderboard``: the same server; a load client in a process of its own
  keeps ``--connections`` keep-alive connections each asking for
  ``/api/leaderboard`` as soon as the last answer came, for ``--phase``
  seconds (then the same for ``/``, the page's HTML). Reported: requests
  per second, latency, and the CPU share of the server and of the client
  (CPU seconds over the wall-clock seconds, of one core).
- ``referee``: ``wizard-arena serve --web 0`` (4 players, no pause between
  games) with ``bench_server.py``'s bots process (``--bots`` bots thinking
  ``--think`` seconds a decision, 10 ms by default: fast bots; 0 keeps
  the referee at full load), games per minute from ``/metrics`` over three phases of
  ``--phase`` seconds: without page clients, with ``--clients`` clients
  (a process of its own) each polling ``/api/tables`` once a second as the
  tables page does, and without again. Reported: games per minute and
  decisions per second in each phase, the loaded phase's decisions as a
  share of the mean of the others' (games end nearly together at every
  table, so their count moves in steps), and each process's CPU share.

Linux only (CPU times from /proc). Nothing is fetched from elsewhere.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
TICK = os.sysconf("SC_CLK_TCK")


# -- processes ----------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class Server:
    """A ``wizard-arena`` subprocess whose standard error names its web address."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wizard_arena.cli", *argv],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        self.url = self.grpc = ""
        lines = []
        for line in self.proc.stderr:
            lines.append(line)
            if " serving on " in line:
                self.grpc = line.split(" serving on ", 1)[1].split()[0]
            found = re.search(r"(http://[\d.]+:\d+)/", line)
            if found:
                self.url = found.group(1)
                break
        if not self.url:
            raise RuntimeError("the server did not start:\n" + "".join(lines))
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for _ in self.proc.stderr:
            pass

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def load_process(url: str, path: str, clients: int, interval: float, seconds: float) -> Any:
    """Start this script's load client (``load``) in a process of its own."""
    return subprocess.Popen(
        [
            sys.executable,
            __file__,
            "load",
            *["--url", url, "--path", path, "--clients", str(clients)],
            *["--interval", str(interval), "--seconds", str(seconds)],
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


# -- the load client ----------------------------------------------------------------------------


async def _client(
    host: str, port: int, path: str, interval: float, stop_at: float, out: dict[str, Any]
) -> None:
    loop = asyncio.get_running_loop()
    reader, writer = await asyncio.open_connection(host, port)
    request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\naccept: */*\r\n\r\n".encode()
    due = loop.time() + random.uniform(0, interval)
    try:
        while loop.time() < stop_at:
            if interval:
                await asyncio.sleep(max(0.0, due - loop.time()))
                due += interval
                if loop.time() >= stop_at:
                    break
            start = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            length = re.search(rb"(?i)content-length:\s*(\d+)", head)
            if length is None:
                raise RuntimeError(f"no content-length in {head[:200]!r}")
            await reader.readexactly(int(length.group(1)))
            out["latency"].append(time.perf_counter() - start)
            out["status"][status] = out["status"].get(status, 0) + 1
    except (OSError, asyncio.IncompleteReadError, RuntimeError) as e:
        out["errors"].append(repr(e))
    finally:
        writer.close()


async def run_load(url: str, path: str, clients: int, interval: float, seconds: float) -> Any:
    host, port = url.removeprefix("http://").split(":")
    out: dict[str, Any] = {"latency": [], "status": {}, "errors": []}
    loop = asyncio.get_running_loop()
    start = loop.time()
    stop_at = start + seconds
    await asyncio.gather(
        *(_client(host, int(port), path, interval, stop_at, out) for _ in range(clients))
    )
    wall = loop.time() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    lat = sorted(out["latency"])
    return {
        "requests": len(lat),
        "seconds": wall,
        "per_s": len(lat) / wall,
        "p50_ms": 1000 * lat[len(lat) // 2] if lat else None,
        "p99_ms": 1000 * lat[int(len(lat) * 0.99)] if lat else None,
        "status": out["status"],
        "errors": out["errors"][:5],
        "cpu_s": usage.ru_utime + usage.ru_stime,
    }


# -- the parts ----------------------------------------------------------------------------------


def make_store(folder: Path) -> tuple[Path, list[str]]:
    """A store of a 4-player table's deal set (4 games of 15 rounds)."""
    sys.path.insert(0, str(ROOT))
    from tests.web_support import ENTRANTS  # the tests' store builder
    from tests.web_support import make_store as build
    from wizard_arena.rules import Rules

    heuristic = ENTRANTS["alice"]
    entrants = {f"bot-{i}": heuristic for i in range(4)}
    path = folder / "bench.sqlite"
    store, specs = build(path, rules=Rules(players=4), deal_sets=1, entrants=entrants)
    store.close()
    return path, [s.id for s in specs]


def part_replay(url: str, game_ids: list[str], loads: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})

        def load(game_id: str) -> float:
            page.goto(f"{url}/games/{game_id}")
            page.wait_for_selector("body[data-ready]")
            return float(page.get_attribute("body", "data-render-ms") or "nan")

        game_id, *others = game_ids
        ready = [load(game_id) for _ in range(loads + 1)]  # the first: a cold browser
        cold = [load(g) for g in others]  # games the server has not re-read yet
        per_step = page.evaluate(
            """() => {
              const text = document.querySelector('#position').textContent;
              const steps = Number(text.split(' of ')[1].split(',')[0]);
              const t = performance.now();
              for (let i = 1; i < steps; i++) {
                document.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight' }));
                document.body.offsetHeight;  // the layout of each step
              }
              return [(performance.now() - t) / (steps - 1), steps];
            }"""
        )
        browser.close()
    return {
        "first_load_ms": ready[0],
        "cold_server_ms": statistics.median(cold) if cold else None,
        "load_ms_median": statistics.median(ready[1:]),
        "load_ms_max": max(ready[1:]),
        "step_ms": per_step[0],
        "steps": per_step[1],
    }


def part_leaderboard(server: Server, connections: int, seconds: float) -> list[dict[str, Any]]:
    out = []
    urllib.request.urlopen(server.url + "/api/leaderboard").read()  # computed once, then cached
    for path in ("/api/leaderboard", "/"):
        before = cpu_seconds(server.proc.pid)
        t0 = time.monotonic()
        proc = load_process(server.url, path, connections, 0.0, seconds)
        text, _ = proc.communicate()
        wall = time.monotonic() - t0
        result = json.loads(text)
        result.update(
            path=path,
            server_cpu_share=(cpu_seconds(server.proc.pid) - before) / wall,
            client_cpu_share=result["cpu_s"] / result["seconds"],
        )
        out.append(result)
    return out


def counted(url: str) -> tuple[float, float]:
    """Games finished and decisions made so far, from ``/metrics``."""
    text = urllib.request.urlopen(url + "/metrics").read().decode()
    out = []
    for name in ("games_finished", "decisions"):
        found = re.search(rf"^wizard_arena_{name}_total ([\d.e+]+)$", text, re.M)
        assert found, f"no {name} counter in /metrics"
        out.append(float(found.group(1)))
    return out[0], out[1]


def part_referee(bots: int, clients: int, phase: float, path: str, think: float) -> dict[str, Any]:
    server = Server(
        [
            *["serve", "--port", "0", "--players", "4", "--move-time", "5", "--seed", "1"],
            *["--reseat-delay", "0", "--log-level", "warning", "--web", "0"],
        ]
    )
    total = 3 * phase + 10
    bot_proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "bench" / "bench_server.py"),
            "bots",
            *["--address", server.grpc, "--server-pid", str(server.proc.pid)],
            *["--bots", str(bots), "--think", str(think)],
            *["--warmup", "1", "--window", str(total)],
        ],
        stdout=subprocess.DEVNULL,
    )
    phases = []
    try:
        time.sleep(4)  # seated and playing
        for loaded, name in [
            (False, "without page clients"),
            (True, f"{clients} page clients"),
            (False, "without again"),
        ]:
            load = None
            if loaded:
                load = load_process(server.url, path, clients, 1.0, phase + 1)
                time.sleep(1.5)  # connected
            (g0, d0), t0 = counted(server.url), time.monotonic()
            c0, b0 = cpu_seconds(server.proc.pid), cpu_seconds(bot_proc.pid)
            time.sleep(phase)
            (g1, d1), t1 = counted(server.url), time.monotonic()
            c1, b1 = cpu_seconds(server.proc.pid), cpu_seconds(bot_proc.pid)
            row: dict[str, Any] = {
                "phase": name,
                "games_per_min": 60 * (g1 - g0) / (t1 - t0),
                "decisions_per_s": (d1 - d0) / (t1 - t0),
                "server_cpu_share": (c1 - c0) / (t1 - t0),
                "bots_cpu_share": (b1 - b0) / (t1 - t0),
            }
            if load is not None:
                text, _ = load.communicate()
                polled = json.loads(text)
                row.update(
                    load_cpu_share=polled["cpu_s"] / polled["seconds"],
                    polls_per_s=polled["per_s"],
                    poll_p50_ms=polled["p50_ms"],
                    poll_p99_ms=polled["p99_ms"],
                    poll_status=polled["status"],
                    poll_errors=polled["errors"],
                )
            phases.append(row)
    finally:
        bot_proc.terminate()
        bot_proc.wait(15)
        server.stop()
    # decisions, not games: the games of the tables end nearly together, so a
    # phase's count of games moves in steps of the number of tables
    base = (phases[0]["decisions_per_s"] + phases[2]["decisions_per_s"]) / 2
    return {"phases": phases, "kept": phases[1]["decisions_per_s"] / base if base else None}


# -- main ---------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="role")
    ld = sub.add_parser("load", help="(internal) the load client: print JSON")
    ld.add_argument("--url", required=True)
    ld.add_argument("--path", required=True)
    ld.add_argument("--clients", type=int, default=16)
    ld.add_argument("--interval", type=float, default=0.0, help="0: ask again at once")
    ld.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--only", choices=["replay", "leaderboard", "referee"])
    ap.add_argument("--loads", type=int, default=10, help="replay loads (default 10)")
    ap.add_argument("--connections", type=int, default=16, help="leaderboard (default 16)")
    ap.add_argument("--clients", type=int, default=200, help="page clients (default 200)")
    ap.add_argument("--bots", type=int, default=16, help="bots of the referee part (default 16)")
    ap.add_argument("--phase", type=float, default=20.0, help="seconds per phase (default 20)")
    ap.add_argument(
        "--think",
        type=float,
        default=0.01,
        help="the bots' think time per decision in seconds (default 0.01; 0: a referee "
        "kept at full load)",
    )
    ap.add_argument(
        "--poll", default="/api/tables", help="what the page clients poll (default /api/tables)"
    )
    args = ap.parse_args()
    if args.role == "load":
        result = asyncio.run(
            run_load(args.url, args.path, args.clients, args.interval, args.seconds)
        )
        print(json.dumps(result))
        return
    print(
        f"bench_web: {os.cpu_count()} cores, python {sys.version.split()[0]}, "
        f"load average at the start {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    parts = [args.only] if args.only else ["replay", "leaderboard", "referee"]
    if "replay" in parts or "leaderboard" in parts:
        with tempfile.TemporaryDirectory() as folder:
            path, game_ids = make_store(Path(folder))
            server = Server(["web", "--database", str(path), "--port", "0"])
            try:
                if "replay" in parts:
                    if not CHROMIUM.exists():
                        print("replay: no /usr/bin/chromium, skipped")
                    else:
                        r = part_replay(server.url, game_ids, args.loads)
                        print(
                            f"replay of a 4-player 15-round game ({r['steps']} steps): drawn "
                            f"{r['load_ms_median']:.0f} ms after navigation (median of "
                            f"{args.loads}, max {r['load_ms_max']:.0f}); a game the server "
                            f"re-reads first {r['cold_server_ms']:.0f} ms (median of "
                            f"{len(game_ids) - 1}); the browser's very first page "
                            f"{r['first_load_ms']:.0f} ms; a step with its layout "
                            f"{r['step_ms']:.2f} ms",
                            flush=True,
                        )
                if "leaderboard" in parts:
                    for r in part_leaderboard(server, args.connections, args.phase / 2):
                        print(
                            f"leaderboard {r['path']:<17} {r['per_s']:7.0f} requests/s over "
                            f"{args.connections} connections (p50 {r['p50_ms']:.1f} ms, p99 "
                            f"{r['p99_ms']:.1f} ms; status {r['status']}); CPU: server "
                            f"{r['server_cpu_share']:.0%}, load client "
                            f"{r['client_cpu_share']:.0%} of a core",
                            flush=True,
                        )
            finally:
                server.stop()
    if "referee" in parts:
        r = part_referee(args.bots, args.clients, args.phase, args.poll, args.think)
        for p in r["phases"]:
            line = (
                f"referee {p['phase']:<22} {p['games_per_min']:6.1f} games/min "
                f"({p['decisions_per_s']:.0f} decisions/s); CPU: server "
                f"{p['server_cpu_share']:.0%}, bots {p['bots_cpu_share']:.0%}"
            )
            if "load_cpu_share" in p:
                line += (
                    f", page clients {p['load_cpu_share']:.0%} ({p['polls_per_s']:.0f} "
                    f"polls/s, p50 {p['poll_p50_ms']:.1f} ms, p99 {p['poll_p99_ms']:.1f} ms, "
                    f"status {p['poll_status']}{', errors ' if p['poll_errors'] else ''}"
                    f"{p['poll_errors'] or ''})"
                )
            print(line, flush=True)
        print(f"referee: play kept under page load (decisions/s): {r['kept']:.1%}")
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
