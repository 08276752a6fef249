// Every game (of one entrant with ?entrant=NAME), each linked to its replay.
import { api, el, entrantLink, fail, gameLink, nav, when } from "./common.js";

export function gamesTable(games, entrant) {
  const head = el("tr", {}, ...["game", "seats and scores", "status", "finished"].map((h) => el("th", {}, h)));
  const rows = games.map((g) => el("tr", {},
    el("td", {}, g.status === "finished" && !g.withheld ? gameLink(g.id) : g.id),
    el("td", {}, ...g.seats.flatMap((s, i) => [i ? ", " : "",
      s === entrant ? el("b", {}, s) : entrantLink(s),
      g.totals ? ` ${g.totals[i]}` : ""])),
    el("td", { "data-withheld": g.withheld ? "1" : null }, g.status,
      g.withheld ? el("span", { class: "note", title: g.withheld }, " — shown when its deal set ends") : "",
      g.faulted ? el("span", { class: "fault" }, "faults") : ""),
    el("td", {}, when(g.finished_at))));
  return el("table", { class: "data", id: "games-table" }, head, ...rows);
}

async function draw() {
  await nav("Games");
  const entrant = new URLSearchParams(location.search).get("entrant");
  const where = document.getElementById("games");
  try {
    const data = await api("/api/games" + (entrant ? `?entrant=${encodeURIComponent(entrant)}` : ""));
    if (entrant) document.getElementById("title").textContent = `Games of ${entrant}`;
    where.replaceChildren(gamesTable(data.games, entrant));
  } catch (error) {
    fail(where, error);
  }
}

if (document.getElementById("games")) draw();
