// The leaderboard: ratings with their 95% interval as a bar, games, faults;
// the ratings plot; the latest games. It refreshes itself while games remain.
import { api, el, entrantLink, faultBadges, fail, gameLink, intervalBar, nav, percent } from "./common.js";

const REFRESH_MS = 5000;

// The comparison with the next row: its rating difference, 95% interval and
// LOS (likelihood of superiority), or "order only" between groups.
function vsNext(row, next) {
  if (!next) return "";
  if (next.group !== row.group) return "order only";
  if (row.vs_next === null) return "";
  const sign = (v) => `${v >= 0 ? "+" : ""}${v.toFixed(0)}`;
  let text = sign(row.vs_next);
  if (row.vs_next_low !== null && row.vs_next_high !== null) {
    text += ` (${sign(row.vs_next_low)} to ${sign(row.vs_next_high)})`;
  }
  return text;
}

function boardTable(board) {
  const values = board.rows.flatMap((r) => [r.low, r.high, r.rating]).filter((v) => v !== null);
  const lo = Math.min(...values), hi = Math.max(...values);
  const bt = board.method !== "elo";
  const head = el("tr", {}, ...["#", "bot", "rating", "95% interval",
    ...(bt ? ["vs next (95% interval)", "LOS"] : []), "games", "mean pts",
    "won", "bid acc.", "faults", ""].map((h) => el("th", {}, h)));
  const groups = new Set(board.rows.map((r) => r.group)).size;
  const rows = [];
  board.rows.forEach((r, i) => {
    const next = board.rows[i + 1];
    if (groups > 1 && (i === 0 || board.rows[i - 1].group !== r.group)) {
      rows.push(el("tr", { class: "group" }, el("td", { colspan: bt ? 12 : 10 },
        `group ${r.group} of ${groups} (order only between groups)`)));
    }
    rows.push(el("tr", { "data-bot": r.name, title: r.note || "" },
      el("td", {}, r.rank),
      el("td", {}, entrantLink(r.name)),
      el("td", {}, r.rating === null ? "-" : r.rating.toFixed(1)),
      el("td", {}, intervalBar(r, lo, hi), " ",
        el("span", { class: "note" }, r.low === null ? (r.note ? "no interval" : "") :
          `${r.low.toFixed(0)}\u2013${r.high.toFixed(0)}`)),
      ...(bt ? [el("td", { class: "vs-next" }, vsNext(r, next)),
        el("td", {}, next && next.group === r.group && r.los !== null ? percent(r.los) : "")] : []),
      el("td", {}, r.games),
      el("td", {}, r.mean_points === null ? "-" : r.mean_points.toFixed(1)),
      el("td", {}, percent(r.tables_won)),
      el("td", {}, percent(r.bid_accuracy)),
      el("td", {}, Object.values(r.faults).reduce((a, b) => a + b, 0) || "0", ...faultBadges(r.faults)),
      el("td", {}, el("a", { href: `/games?entrant=${encodeURIComponent(r.name)}` }, "games"))));
  });
  const notes = board.notes.map((n) => el("p", { class: "note" }, n));
  const method = board.method === "elo" ? "Elo (provisional)" :
    "Bradley-Terry rating, 95% bootstrap interval; vs next: the rating difference to the next bot " +
    "with its 95% interval, LOS: the likelihood that it is the better of the two";
  return [el("table", { class: "data", id: "leaderboard" }, head, ...rows),
    el("p", { class: "note" }, method), ...notes];
}

async function draw() {
  const info = await nav("Leaderboard");
  const progress = document.getElementById("progress");
  try {
    const [board, games] = await Promise.all([api("/api/leaderboard"), api("/api/games")]);
    document.getElementById("title").textContent = info ? `Leaderboard: ${info.name}` : "Leaderboard";
    const g = (info && info.games) || {};
    progress.textContent = `${g.finished || 0} games finished` +
      (g.pending ? `, ${g.pending} to play (this page refreshes itself)` : "");
    document.getElementById("board").replaceChildren(...boardTable(board));
    document.getElementById("plot").src = `/plot/ratings.svg?games=${board.games}`;
    const done = games.games.filter((x) => x.status === "finished" && !x.withheld)
      .sort((a, b) => a.finished_at - b.finished_at).slice(-10).reverse();
    document.getElementById("latest").replaceChildren(el("ul", {}, ...done.map((x) =>
      el("li", {}, gameLink(x.id), ": ", x.seats.map((s, i) => `${s} ${x.totals[i]}`).join(", ")))));
  } catch (error) {
    fail(document.getElementById("board"), error);
  }
  if (info && info.in_progress) setTimeout(draw, REFRESH_MS);
}

draw();
