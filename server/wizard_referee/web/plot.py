"""The leaderboard's plot: each entrant's rating over the games played, drawn
on the server as SVG (no script, no library in the browser).

>>> svg = ratings_svg({"games": [2, 4], "series": {"a": [10.0, 12.0], "b": [-10.0, None]}})
>>> svg.startswith("<svg") and svg.count("<polyline") == 2
True
>>> "no finished game" in ratings_svg({"games": [], "series": {}})
True

The names at the lines' ends are spread so that no two overlap (at least
:data:`LABEL_GAP` apart, all inside the plot's height) and cut to fit the
margin (the whole name is the label's tooltip):

>>> spread([100.0, 101.0, 102.0], 12, 0, 300)
[89.0, 101.0, 113.0]
>>> label_text("a-very-long-entrant-name-indeed")
'a-very-long-entra…'
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["LABEL_GAP", "PALETTE", "label_text", "ratings_svg", "spread"]

#: Line colours, one per entrant in leaderboard order (then again).
PALETTE = (
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
    "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
)  # fmt: skip

WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 48, 130, 12, 30
#: The least distance between two names at the lines' ends (font size 11).
LABEL_GAP = 12.0
#: The longest name written in the right margin (about 6.5 px a character).
LABEL_CHARS = 18


def spread(ys: list[float], gap: float, top: float, bottom: float) -> list[float]:
    """``ys`` moved as little as this simple pass can so that any two are
    ``gap`` apart and all lie in ``[top, bottom]`` (order kept)."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    placed = [ys[i] for i in order]
    for _ in range(len(placed) + 1):
        # a cluster is centred on its mean, then pushed inside the bounds
        groups: list[list[int]] = []
        for i in range(len(placed)):
            if groups and placed[i] - placed[groups[-1][-1]] < gap - 1e-9:
                groups[-1].append(i)
            else:
                groups.append([i])
        if all(len(g) == 1 for g in groups):
            break
        for g in groups:
            mid = sum(placed[i] for i in g) / len(g)
            start = mid - gap * (len(g) - 1) / 2
            for k, i in enumerate(g):
                placed[i] = start + gap * k
    if placed:
        shift = max(0.0, top - placed[0]) - max(0.0, placed[-1] - bottom)
        placed = [v + shift for v in placed]
        for i in range(1, len(placed)):  # too many names for the height: keep the gap
            placed[i] = max(placed[i], placed[i - 1] + gap)
    out = [0.0] * len(ys)
    for k, i in enumerate(order):
        out[i] = round(placed[k], 1)
    return out


def label_text(name: str) -> str:
    """``name`` cut to fit the margin."""
    return name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "\u2026"


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    step = (hi - lo) / (count - 1) if hi > lo else 1.0
    return [lo + i * step for i in range(count)]


def ratings_svg(history: dict[str, Any], x_label: str = "games played") -> str:
    """The plot of ``history`` (:meth:`.data.StoreData.history`: the games
    counted at each point, and each entrant's rating at each point;
    ``x_label`` names what is counted)."""
    games: list[int] = history["games"]
    series: dict[str, list[float | None]] = history["series"]
    # tall enough for every name at the lines' ends
    height = max(HEIGHT, round(TOP + BOTTOM + LABEL_GAP * (len(series) + 1)))
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" role="img" aria-label="ratings over the games played" '
        'font-family="sans-serif" font-size="11">'
    )
    values = [v for vs in series.values() for v in vs if v is not None]
    if not games or not values:
        return head + '<text x="20" y="40">no finished game yet</text></svg>'
    lo, hi = min(values), max(values)
    if hi - lo < 1:
        lo, hi = lo - 1, hi + 1
    x0, x1 = LEFT, WIDTH - RIGHT
    y0, y1 = height - BOTTOM, TOP
    g_hi = max(games[-1], 1)

    def x(g: float) -> float:
        return x0 + (x1 - x0) * g / g_hi

    def y(v: float) -> float:
        return y0 + (y1 - y0) * (v - lo) / (hi - lo)

    parts = [head, f'<rect x="{x0}" y="{y1}" width="{x1 - x0}" height="{y0 - y1}" fill="#fafafa" '
             'stroke="#ccc"/>']  # fmt: skip
    for v in _ticks(lo, hi):
        parts.append(
            f'<line x1="{x0}" x2="{x1}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#eee"/>'
            f'<text x="{x0 - 4}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.0f}</text>'
        )
    for g in _ticks(0, g_hi):
        parts.append(f'<text x="{x(g):.1f}" y="{y0 + 16}" text-anchor="middle">{g:.0f}</text>')
    parts.append(
        f'<text x="{(x0 + x1) / 2}" y="{height - 2}" text-anchor="middle">{x_label}</text>'
    )
    ends: list[tuple[str, str, float]] = []
    for i, (name, vs) in enumerate(series.items()):
        colour = PALETTE[i % len(PALETTE)]
        points = " ".join(
            f"{x(g):.1f},{y(v):.1f}" for g, v in zip(games, vs, strict=True) if v is not None
        )
        label = html.escape(name)
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}">'
            f"<title>{label}</title></polyline>"
        )
        last = next((v for v in reversed(vs) if v is not None), None)
        if last is not None:
            ends.append((name, colour, y(last) + 4))
    places = spread([e[2] for e in ends], LABEL_GAP, TOP + 8, y0 + 4)
    for (name, colour, _), at in zip(ends, places, strict=True):
        parts.append(
            f'<text x="{x1 + 6}" y="{at:.1f}" fill="{colour}" class="label">'
            f"<title>{html.escape(name)}</title>{html.escape(label_text(name))}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)
