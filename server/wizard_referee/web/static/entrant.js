// One entrant: its games, bid accuracy, faults and decision latency.
import { api, el, fail, faultBadges, nav, pathName, percent } from "./common.js";
import { gamesTable } from "./games.js";

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
  } catch (error) {
    fail(where, error);
  }
}

draw();
