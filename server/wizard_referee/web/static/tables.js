// The tables in progress, redrawn every second from /api/tables. No hand is
// ever in that data while a game runs: each seat shows its cards face down.
// In a tournament, "Just finished" lists the games of each deal set as soon
// as the whole set has ended (their replays open then), newest first.
import { api, back, card, el, entrantLink, fail, faultBadges, gameLink, nav } from "./common.js";

const REFRESH_MS = 1000;
const FEED_MS = 5000;
const FEED_SETS = 8;
const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };

function seat(t, s) {
  const bid = t.bids[s] === null ? (t.phase === "bid" ? "?" : "hidden") : t.bids[s];
  const classes = "seat" + (t.to_act === s ? " acting" : "");
  return el("div", { class: classes, "data-seat": s },
    el("div", { class: "name" }, entrantLink(t.seats[s]), s === t.dealer ? " (dealer)" : "", ...faultBadges(t.faults[s])),
    el("div", { class: "stats" }, `bid ${t.phase === "deal" ? "-" : bid} \u00b7 won ${t.won[s]} \u00b7 total ${t.totals[s]}`),
    el("div", { class: "hand" }, ...Array.from({ length: t.hand_sizes[s] }, back)));
}

function pastRound(t, r) {
  return el("div", { class: "note", "data-round": r.round }, `round ${r.round}: `,
    ...r.hands.flatMap((h, s) => [el("b", {}, ` ${t.seats[s]} `), ...h.map(card)]));
}

function withheldView(t) {
  return el("section", { class: "live", "data-game": t.id },
    el("div", { class: "table-head" }, el("h2", {}, t.id),
      el("span", { class: "muted" }, `${t.rules} \u00b7 round ${t.round} of ${t.rounds}`)),
    el("p", {}, ...t.seats.flatMap((name, s) => [s ? ", " : "", entrantLink(name)])),
    el("p", { class: "note withheld" }, t.withheld));
}

function tableView(t) {
  if (t.withheld) return withheldView(t);
  const trump = t.trump ? SUIT_NAMES[t.trump] : t.phase === "choose_trump" ? "being chosen" : "none";
  const trick = t.trick.map(([s, c]) => el("div", { class: "slot" }, card(c), el("div", { class: "who" }, t.seats[s])));
  const last = t.tricks.length ? t.tricks[t.tricks.length - 1] : null;
  return el("section", { class: "live", "data-game": t.id },
    el("div", { class: "table-head" }, el("h2", {}, t.id),
      el("span", { class: "muted" }, `${t.rules} \u00b7 round ${t.round} of ${t.rounds} (${t.cards} cards) \u00b7 ${t.phase.replace("_", " ")}`)),
    el("div", { class: "felt", style: `--seats:${t.seats.length}` },
      ...t.seats.map((_, s) => seat(t, s)),
      el("div", { class: "centre" },
        el("div", { class: "slot" }, t.turned ? card(t.turned) : "-", el("div", { class: "who" }, "turned")),
        el("div", { class: "slot" }, `trump: ${trump}`),
        el("div", { id: `trick-${t.id}`, class: "trick" }, ...trick),
        last ? el("div", { class: "slot" }, `last trick: ${t.seats[last.winner]}`) : null)),
    ...t.past_rounds.map((r) => pastRound(t, r)));
}

async function draw() {
  const where = document.getElementById("tables");
  try {
    const data = await api("/api/tables");
    where.replaceChildren(...(data.tables.length ? data.tables.map(tableView) : [el("p", { class: "muted" }, "no game is being played now")]));
    where.dataset.updated = String(Date.now());
  } catch (error) {
    fail(where, error);
  }
  setTimeout(draw, REFRESH_MS);
}

// The deal sets whose games have all ended and may be opened, newest first.
function completeSets(games) {
  const sets = new Map();
  for (const g of games) {
    const key = `${g.table}/${g.deal_set}`;
    if (!sets.has(key)) sets.set(key, []);
    sets.get(key).push(g);
  }
  return [...sets.values()]
    .filter((gs) => gs.every((g) => g.status === "finished" && !g.withheld))
    .map((gs) => ({ games: gs, at: Math.max(...gs.map((g) => g.finished_at || 0)) }))
    .sort((a, b) => b.at - a.at).slice(0, FEED_SETS);
}

async function feed() {
  try {
    const data = await api("/api/games");
    const sets = completeSets(data.games);
    document.getElementById("feed").replaceChildren(...(sets.length ? sets.map((s) => {
      const g0 = s.games[0];
      return el("li", { "data-set": `${g0.table}/${g0.deal_set}` },
        `table ${g0.table}, deal set ${g0.deal_set} (${new Date(s.at * 1000).toLocaleTimeString()}): `,
        ...s.games.flatMap((g, i) => [i ? ", " : "", gameLink(g.id, `rotation ${g.rotation}`)]));
    }) : [el("li", { class: "muted" }, "no deal set has ended yet")]));
  } catch (error) {
    fail(document.getElementById("feed"), error);
  }
  setTimeout(feed, FEED_MS);
}

nav("Tables in progress").then((info) => {
  if (info && info.mode === "tournament") {
    document.getElementById("why-withheld").hidden = false;
    document.getElementById("feed-box").hidden = false;
    feed();
  }
  draw();
});
