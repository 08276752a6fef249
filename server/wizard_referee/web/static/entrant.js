// One entrant: its games, bid accuracy, faults and decision latency; the
// summary of its decisions graded by the analysis (/api/analysis/entrants/{name}).
import { api, el, fail, faultBadges, nav, pathName, percent } from "./common.js";
import { gamesTable } from "./games.js";

function loss(m) {
  if (!m || m.n === 0) return "-";
  const range = m.low === null ? "" : ` [${m.low.toFixed(2)}, ${m.high.toFixed(2)}]`;
  return `${m.mean.toFixed(2)}${range} over ${m.n}`;
}

async function analysis(name) {
  const where = document.getElementById("analysis");
  try {
    const a = await api(`/api/analysis/entrants/${encodeURIComponent(name)}`);
    const s = a.summary;
    if (!s) { where.textContent = "no finished game to grade"; return; }
    const grades = (k) => Object.entries(s[k].grades).map(([g, n]) => `${n} ${g}`).join(", ");
    const sizes = (k) => Object.entries(s[k].by_size).map(([c, m]) => `${c}: ${m.mean.toFixed(1)}`).join("  ");
    const rows = [
      ["expected points lost per game", loss(s.per_game)],
      ["loss per bid (95% interval)", loss(s.bid.mean_loss)],
      ["bids graded", grades("bid")],
      ["loss per bid by cards dealt", sizes("bid")],
      ["loss per card (95% interval)", loss(s.card.mean_loss)],
      ["cards graded", grades("card")],
      ["loss per card by cards dealt", sizes("card")],
    ];
    where.classList.remove("muted");
    where.replaceChildren(
      el("p", { class: "muted" }, `its latest ${a.games} game(s), graded by ${a.evaluator.split(":").pop()}: each bid and card's loss in expected points against the best`),
      el("table", { class: "data", id: "entrant-analysis" },
        ...rows.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v)))));
  } catch (error) {
    fail(where, error);
  }
}

function ms(x) { return x === null ? "-" : `${x.toFixed(2)} ms`; }

async function draw() {
  const name = pathName("/entrants/");
  await nav(name);
  const where = document.getElementById("stats");
  try {
    const e = await api(`/api/entrants/${encodeURIComponent(name)}`);
    document.getElementById("title").textContent = `${e.name} (${e.kind})`;
    const lat = e.latency;
    const rows = [
      ["games finished", e.withheld_games ? `${e.games} (and ${e.withheld_games} whose deal set is still being played)` : e.games],
      ["rounds", e.rounds],
      ["bid accuracy (bid = tricks)", percent(e.bid_accuracy)],
      ["mean points per game", e.mean_points === null ? "-" : e.mean_points.toFixed(1)],
      ["faults", el("span", {}, Object.values(e.faults).reduce((a, b) => a + b, 0) || "none", ...faultBadges(e.faults))],
      ["decisions made", lat.decisions],
      ["decisions the referee made for it (faults)", lat.referee_played],
      ["latency mean / median / 95th / max", `${ms(lat.mean_ms)} / ${ms(lat.p50_ms)} / ${ms(lat.p95_ms)} / ${ms(lat.max_ms)}`],
    ];
    where.replaceChildren(el("table", { class: "data", id: "entrant-stats" },
      ...rows.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v)))));
    document.getElementById("entrant-games").replaceChildren(gamesTable(e.game_list, e.name));
    analysis(e.name);
  } catch (error) {
    fail(where, error);
  }
}

draw();
