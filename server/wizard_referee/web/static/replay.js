// A finished game step by step: the table with every hand face up, each bid,
// trump choice and card, the trick's winner, running scores, faults marked.
// The steps (and their text, as `wizard-arena replay` prints it) come from
// /api/games/{id}: the server re-reads the record through the rules core.
import { api, card, el, entrantLink, fail, faultBadges, nav } from "./common.js";

const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs", none: "no trump" };
let game = null;
let at = 0;

function seatPanel(step, seat) {
  const name = game.seats[seat];
  const classes = ["seat"];
  if (step.seat === seat && step.kind !== "trick") classes.push("acting");
  if (step.kind === "trick" && step.winner === seat) classes.push("winner");
  const bid = step.bids[seat] === null || step.bids[seat] === undefined ? "-" : step.bids[seat];
  const fault = step.seat === seat && step.fault ? el("span", { class: "fault", "data-fault": step.fault }, step.fault) : null;
  return el("div", { class: classes.join(" "), "data-seat": seat },
    el("div", { class: "name" }, entrantLink(name), seat === step.dealer ? " (dealer)" : "", fault),
    el("div", { class: "stats" }, `bid ${bid} \u00b7 won ${step.won[seat]} \u00b7 total `,
      el("span", { class: "total", "data-seat": seat }, step.totals[seat])),
    el("div", { class: "hand", "data-seat": seat }, ...step.hands[seat].map(card)));
}

function centre(step) {
  const slots = step.trick.map(([seat, text]) => el("div", { class: "slot" },
    card(text), el("div", { class: "who" }, game.seats[seat])));
  const trump = step.trump ? SUIT_NAMES[step.trump] || step.trump : "being chosen";
  return el("div", { class: "centre" },
    el("div", { class: "slot" }, step.turned ? card(step.turned) : "-", el("div", { class: "who" }, "turned")),
    el("div", { class: "slot" }, el("div", {}, `round ${step.round}`), el("div", { class: "who" }, `trump: ${trump}`)),
    el("div", { id: "trick", "data-winner": step.kind === "trick" ? step.winner : "" }, ...slots));
}

function show(index) {
  at = Math.max(0, Math.min(game.steps.length - 1, index));
  const step = game.steps[at];
  const table = document.getElementById("table");
  table.style.setProperty("--seats", game.players);
  table.replaceChildren(...game.seats.map((_, s) => seatPanel(step, s)), centre(step));
  document.getElementById("log").textContent = step.text.join("\n");
  document.getElementById("log").dataset.kind = step.kind;
  document.getElementById("position").textContent = `step ${at + 1} of ${game.steps.length}, round ${step.round}`;
  document.getElementById("position").dataset.step = at;
  if (location.hash !== `#${at}`) history.replaceState(null, "", `#${at}`);
}

function roundStart(index, direction) {
  let i = index + direction;
  while (i > 0 && i < game.steps.length && game.steps[i].kind !== "deal") i += direction;
  return i;
}

function keys(event) {
  const moves = {
    ArrowRight: () => at + 1, ArrowLeft: () => at - 1, Home: () => 0, End: () => game.steps.length - 1,
    PageDown: () => roundStart(at, 1), PageUp: () => roundStart(at, -1),
  };
  if (moves[event.key]) { event.preventDefault(); show(moves[event.key]()); }
}

function result() {
  if (!game.totals) return el("p", {}, `status ${game.status}`);
  const rows = game.seats.map((s, i) => el("tr", {}, el("td", {}, game.ranks[i]), el("td", {}, entrantLink(s)),
    el("td", {}, game.totals[i]), el("td", {}, ...faultBadges(game.faults[i]))));
  return el("table", { class: "data" }, el("tr", {}, ...["rank", "bot", "total", "faults"].map((h) => el("th", {}, h))), ...rows);
}

async function draw() {
  const id = decodeURIComponent(location.pathname.split("/").pop());
  await nav(`Game ${id}`);
  try {
    game = await api(`/api/games/${encodeURIComponent(id)}`);
  } catch (error) {
    fail(document.querySelector("main"), error);
    return;
  }
  document.getElementById("title").textContent = `Game ${game.id}`;
  document.getElementById("about").textContent = [game.rules, ...game.header].join(" \u00b7 ");
  document.getElementById("result").replaceChildren(result());
  const buttons = { first: () => 0, prev: () => at - 1, next: () => at + 1, last: () => game.steps.length - 1,
    "prev-round": () => roundStart(at, -1), "next-round": () => roundStart(at, 1) };
  for (const [button, to] of Object.entries(buttons)) {
    document.getElementById(button).addEventListener("click", () => show(to()));
  }
  document.addEventListener("keydown", keys);
  show(Number(location.hash.slice(1)) || 0);
  document.body.dataset.ready = "1";
}

draw();
