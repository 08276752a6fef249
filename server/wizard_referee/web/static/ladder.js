// A ladder's standings: each entry's official rating (Bradley-Terry, its 95%
// interval as a bar) beside its live one (OpenSkill mu +- sigma), sets,
// games and whether it is online now; the latest games of complete sets.
import { api, el, entrantLink, fail, gameLink, intervalBar, nav } from "./common.js";

const REFRESH_MS = 5000;

export function standingsTable(data) {
  const values = data.rows.flatMap((r) => [r.low, r.high, r.rating]).filter((v) => v !== null);
  const lo = Math.min(...values), hi = Math.max(...values);
  const head = el("tr", {}, ...["#", "entry", "official rating", "95% interval", "live \u03bc \u00b1 \u03c3",
    "sets", "games", "left", "online", "status"].map((h) => el("th", {}, h)));
  const groups = data.groups || 1;
  const rows = [];
  data.rows.forEach((r, i) => {
    if (groups > 1 && r.group !== null && (i === 0 || data.rows[i - 1].group !== r.group)) {
      rows.push(el("tr", { class: "group" }, el("td", { colspan: 10 },
        `group ${r.group} of ${groups} (order only between groups)`)));
    }
    rows.push(el("tr", { "data-entry": r.entry, title: r.note || "" },
      el("td", {}, r.rank === null ? "" : r.rank),
      el("td", {}, entrantLink(r.entry)),
      el("td", {}, r.rating === null ? "-" : r.rating.toFixed(1)),
      el("td", {}, r.rating === null ? "" : intervalBar(r, lo, hi), " ",
        el("span", { class: "note" }, r.low === null ? (r.rating === null ? "" : "no interval") :
          `${r.low.toFixed(0)}\u2013${r.high.toFixed(0)}`)),
      el("td", {}, r.mu === null ? "-" : `${r.mu.toFixed(2)} \u00b1 ${r.sigma.toFixed(2)}`),
      el("td", {}, r.sets),
      el("td", {}, r.games),
      el("td", { class: "abandons" }, r.abandons || 0),
      el("td", { class: r.online ? "online" : "" }, r.online ? `\u25cf ${r.online}` : "-"),
      el("td", {}, r.active ? "active" : "retired or replaced")));
  });
  return [el("table", { class: "data", id: "standings-table" }, head, ...rows),
    ...data.notes.map((n) => el("p", { class: "note" }, n)),
    el("p", { class: "note" }, "live: OpenSkill Plackett-Luce, one update per finished duplicate " +
      "set; entries without an official rating are listed by \u03bc \u2212 3\u03c3"),
    el("p", { class: "note" }, "left: sets the entry left and did not come back to within the " +
      "return window (the rest of each was played with its seats' default action)")];
}

async function draw() {
  const info = await nav("Standings");
  try {
    const [data, games] = await Promise.all([api("/api/ladder/standings"), api("/api/games")]);
    document.getElementById("title").textContent = `Standings: ${data.name}`;
    const s = data.sets || {};
    document.getElementById("season").textContent = `${data.season}; sets: ${s.finished || 0} ` +
      `finished, ${s.playing || 0} playing, ${s.suspended || 0} waiting for a member, ` +
      `${s.void || 0} void (this page refreshes itself)`;
    document.getElementById("standings").replaceChildren(...standingsTable(data));
    const done = games.games.filter((g) => g.status === "finished" && !g.withheld).slice(0, 10);
    document.getElementById("latest").replaceChildren(el("ul", {}, ...done.map((g) =>
      el("li", {}, gameLink(g.id), ": ", g.seats.map((x, i) => `${x} ${g.totals[i]}`).join(", ")))));
  } catch (error) {
    fail(document.getElementById("standings"), error);
  }
  if (info && info.in_progress) setTimeout(draw, REFRESH_MS);
}

draw();
