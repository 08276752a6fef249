// One entrant of a ladder: its versions (each rated as an entry of its own),
// its live rating over the season and its recent games.
import { api, el, fail, nav, pathName, when } from "./common.js";
import { gamesTable } from "./games.js";

function official(v) {
  if (v.rating === null) return "-";
  const span = v.low === null ? " (no interval)" : ` (${v.low.toFixed(0)}\u2013${v.high.toFixed(0)})`;
  return `${v.rating.toFixed(1)}${span}`;
}

async function draw() {
  const name = pathName("/entrants/");
  await nav(name);
  const where = document.getElementById("versions");
  try {
    const e = await api(`/api/ladder/entrants/${encodeURIComponent(name)}`);
    document.getElementById("title").textContent = `${e.name} (${e.kind})`;
    document.getElementById("about").textContent = `registered ${when(e.created_at)}` +
      (e.retired_at ? `, retired ${when(e.retired_at)}` : "");
    const head = el("tr", {}, ...["version", "entry", "official rating", "live \u03bc \u00b1 \u03c3",
      "sets", "games", "left", "online", "since", "until"].map((h) => el("th", {}, h)));
    const rows = e.versions.map((v) => el("tr", { "data-entry": v.entry, title: v.note || "" },
      el("td", {}, v.number), el("td", {}, v.entry), el("td", {}, official(v)),
      el("td", {}, v.mu === null ? "-" : `${v.mu.toFixed(2)} \u00b1 ${v.sigma.toFixed(2)}`),
      el("td", {}, v.sets), el("td", {}, v.games),
      el("td", { class: "abandons" }, v.abandons || 0), el("td", {}, v.online || "-"),
      el("td", {}, when(v.created_at)), el("td", {}, v.ended_at ? when(v.ended_at) : "current")));
    where.replaceChildren(el("table", { class: "data", id: "versions-table" }, head, ...rows));
    document.getElementById("plot").src =
      `/plot/ladder/${encodeURIComponent(e.name)}?sets=${e.history.games.length}`;
    document.getElementById("entrant-games").replaceChildren(gamesTable(e.game_list, null));
  } catch (error) {
    fail(where, error);
  }
}

draw();
