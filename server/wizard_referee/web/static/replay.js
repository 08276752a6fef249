// A finished game step by step: the table with every hand face up, each bid,
// trump choice and card, the trick's winning card, running scores, faults
// marked; play/pause at a chosen speed; the score pad (each round's bids,
// tricks, points and running totals, as Wizard players keep it on paper)
// and a chart of the totals, both up to the step shown.
// The steps (and their text, as `wizard-arena replay` prints it) come from
// /api/games/{id}: the server re-reads the record through the rules core.
// Each bid and card's loss against the best, and the best, come from
// /api/analysis/games/{id} (graded on demand; the replay works without).
import { api, card, el, entrantLink, fail, faultBadges, nav, pathName } from "./common.js";

const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs", none: "no trump" };
const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"];
const STEP_MS = 900; // one step a second or so at 1x
let game = null;
let at = 0;
let scores = []; // the score steps: [{index, round, bids, tricks, points, totals}]
let timer = null;
let grades = null; // the analysis's graded moves by "round:move", once loaded
let moveKeys = []; // each step's "round:move" (null: not a decision)
const drawn = { pad: null, chart: null }; // what the score pad and the chart show now

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
  const won = step.kind === "trick" ? step.winner : null;
  const slots = step.trick.map(([seat, text]) => {
    const face = card(text);
    if (seat === won) face.classList.add("win");
    return el("div", { class: seat === won ? "slot win" : "slot", "data-seat": seat },
      face, el("div", { class: "who" }, game.seats[seat], seat === won ? " wins" : ""));
  });
  const trump = step.trump ? SUIT_NAMES[step.trump] || step.trump : "being chosen";
  return el("div", { class: "centre" },
    el("div", { class: "slot" }, step.turned ? card(step.turned) : "-", el("div", { class: "who" }, "turned")),
    el("div", { class: "slot" }, el("div", {}, `round ${step.round}`), el("div", { class: "who" }, `trump: ${trump}`)),
    el("div", { id: "trick", "data-winner": won === null ? "" : won }, ...slots));
}

// The score pad up to step `index`: a row per round scored, and the round
// being played with the bids made so far.
function scorePad(index) {
  const n = game.players;
  const head1 = el("tr", {}, el("th", { rowspan: 2 }, "round"),
    ...game.seats.map((s, i) => el("th", { colspan: 4, class: "player", style: `border-top:3px solid ${COLOURS[i % COLOURS.length]}` }, s)));
  const head2 = el("tr", {}, ...game.seats.flatMap(() => ["bid", "won", "pts", "total"].map((h) => el("th", {}, h))));
  const rows = scores.filter((s) => s.index <= index).map((s) => el("tr", { "data-round": s.round },
    el("td", {}, s.round),
    ...Array.from({ length: n }, (_, i) => [
      el("td", { "data-seat": i, "data-field": "bid" }, s.bids[i]),
      el("td", { "data-seat": i, "data-field": "won" }, s.tricks[i]),
      el("td", { "data-seat": i, "data-field": "points", class: s.points[i] < 0 ? "minus" : "plus" },
        s.points[i] > 0 ? `+${s.points[i]}` : s.points[i]),
      el("td", { "data-seat": i, "data-field": "total", class: "total" }, s.totals[i]),
    ]).flat()));
  const step = game.steps[index];
  const open = scores.find((s) => s.index > index);
  if (open && open.round === step.round && step.kind !== "score") {
    rows.push(el("tr", { class: "playing", "data-round": step.round }, el("td", {}, step.round),
      ...Array.from({ length: n }, (_, i) => [
        el("td", {}, step.bids[i] === null || step.bids[i] === undefined ? "" : step.bids[i]),
        el("td", {}, step.won[i]), el("td", {}, ""), el("td", {}, "")]).flat()));
  }
  return [head1, head2, ...rows];
}

// The running totals round by round up to step `index`, as an SVG chart.
function chart(index) {
  const done = scores.filter((s) => s.index <= index);
  const rounds = Math.max(1, scores.length);
  const all = [0, ...scores.flatMap((s) => s.totals)];
  const lo = Math.min(...all), hi = Math.max(...all, lo + 10);
  const W = 420, H = 200, L = 40, R = 10, T = 10, B = 24;
  const x = (r) => L + ((W - L - R) * r) / rounds;
  const y = (v) => T + ((H - T - B) * (hi - v)) / (hi - lo);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "each player's total after each round");
  const add = (tag, attrs, text) => {
    const node = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    svg.append(node);
    return node;
  };
  add("line", { x1: L, x2: W - R, y1: y(0), y2: y(0), stroke: "#bbb" });
  for (const v of [lo, hi]) add("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end", "font-size": 11 }, v);
  for (const r of [0, rounds]) add("text", { x: x(r), y: H - 6, "text-anchor": "middle", "font-size": 11 }, r);
  add("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", "font-size": 11 }, "round");
  game.seats.forEach((name, i) => {
    const points = [[0, 0], ...done.map((s) => [s.round, s.totals[i]])];
    const line = add("polyline", { fill: "none", stroke: COLOURS[i % COLOURS.length], "stroke-width": 2,
      "data-seat": i, points: points.map(([r, v]) => `${x(r).toFixed(1)},${y(v).toFixed(1)}`).join(" ") });
    const title = document.createElementNS(ns, "title");
    title.textContent = name;
    line.append(title);
  });
  return svg;
}

function show(index) {
  at = Math.max(0, Math.min(game.steps.length - 1, index));
  const step = game.steps[at];
  const table = document.getElementById("table");
  table.style.setProperty("--seats", game.players);
  table.replaceChildren(...game.seats.map((_, s) => seatPanel(step, s)), centre(step));
  document.getElementById("log").textContent = step.text.join("\n");
  document.getElementById("log").dataset.kind = step.kind;
  showGrade(at);
  document.getElementById("position").textContent = `step ${at + 1} of ${game.steps.length}, round ${step.round}`;
  document.getElementById("position").dataset.step = at;
  // the pad and the chart change only when a bid, a trick or a score does
  const done = scores.filter((s) => s.index <= at).length;
  const padKey = `${done}|${step.round}|${step.kind}|${step.bids}|${step.won}`;
  if (padKey !== drawn.pad) {
    document.getElementById("scorepad").replaceChildren(...scorePad(at));
    drawn.pad = padKey;
  }
  if (done !== drawn.chart) {
    document.getElementById("chart").replaceChildren(chart(at));
    drawn.chart = done;
  }
  if (location.hash !== `#${at}`) history.replaceState(null, "", `#${at}`);
  if (at >= game.steps.length - 1) pause();
}

function showGrade(index) {
  const where = document.getElementById("grade");
  const g = grades && moveKeys[index] ? grades[moveKeys[index]] : null;
  where.dataset.grade = g ? g.grade || "good" : "";
  if (!g) { where.textContent = ""; return; }
  const best = g.best === g.chosen ? "the best" : `best: ${g.kind} ${g.best}`;
  where.textContent = `${game.seats[g.seat]}'s ${g.kind} ${g.chosen}: loss ${g.loss.toFixed(2)} expected points${g.grade ? ` (${g.grade})` : ""}, ${best}`;
}

async function loadGrades(id) {
  try {
    const a = await api(`/api/analysis/games/${encodeURIComponent(id)}`);
    grades = a.moves;
    showGrade(at);
  } catch (error) {
    document.getElementById("grade").textContent = `no analysis: ${error.message || error}`;
  }
}

function roundStart(index, direction) {
  let i = index + direction;
  while (i > 0 && i < game.steps.length && game.steps[i].kind !== "deal") i += direction;
  return i;
}

function speed() {
  return Number(document.getElementById("speed").value) || 1;
}

function play() {
  if (timer !== null) return;
  if (at >= game.steps.length - 1) show(0);
  const button = document.getElementById("play");
  button.textContent = "\u23F8 pause";
  button.setAttribute("aria-pressed", "true");
  document.body.dataset.playing = "1";
  const tick = () => {
    if (at >= game.steps.length - 1) { pause(); return; }
    show(at + 1);
    if (timer !== null) timer = setTimeout(tick, STEP_MS / speed());
  };
  timer = setTimeout(tick, STEP_MS / speed());
}

function pause() {
  if (timer !== null) clearTimeout(timer);
  timer = null;
  const button = document.getElementById("play");
  button.textContent = "\u25B6 play";
  button.setAttribute("aria-pressed", "false");
  delete document.body.dataset.playing;
}

function toggle() {
  if (timer === null) play(); else pause();
}

function keys(event) {
  const on = event.target && event.target.tagName;
  if (on === "SELECT" || (on === "BUTTON" && (event.key === " " || event.key === "Enter"))) return;
  const moves = {
    ArrowRight: () => at + 1, ArrowLeft: () => at - 1, Home: () => 0, End: () => game.steps.length - 1,
    PageDown: () => roundStart(at, 1), PageUp: () => roundStart(at, -1),
  };
  if (event.key === " ") { event.preventDefault(); toggle(); return; }
  if (moves[event.key]) { event.preventDefault(); pause(); show(moves[event.key]()); }
}

function result() {
  if (!game.totals) return el("p", {}, `status ${game.status}`);
  const order = game.seats.map((_, i) => i).sort((a, b) => game.ranks[a] - game.ranks[b] || a - b);
  const rows = order.map((i) => el("tr", { "data-seat": i }, el("td", {}, game.ranks[i]),
    el("td", {}, entrantLink(game.seats[i])), el("td", {}, game.totals[i]),
    el("td", {}, ...faultBadges(game.faults[i]))));
  return el("table", { class: "data", id: "result-table" },
    el("tr", {}, ...["rank", "bot", "total", "faults"].map((h) => el("th", {}, h))), ...rows);
}

async function draw() {
  const id = pathName("/games/");
  await nav(`Game ${id}`);
  try {
    game = await api(`/api/games/${encodeURIComponent(id)}`);
  } catch (error) {
    fail(document.querySelector("main"), error);
    return;
  }
  let move = 0;
  moveKeys = game.steps.map((s) => {
    if (s.kind === "deal") move = 0;
    if (s.kind !== "bid" && s.kind !== "play" && s.kind !== "trump") return null;
    return `${s.round}:${move++}`;
  });
  scores = game.steps.flatMap((s, index) => s.kind === "score"
    ? [{ index, round: s.round, bids: s.bids, tricks: s.tricks, points: s.points, totals: s.totals }] : []);
  document.getElementById("title").textContent = `Game ${game.id}`;
  document.getElementById("about").textContent = [game.rules, ...game.header].join(" \u00b7 ");
  document.getElementById("result").replaceChildren(result());
  const buttons = { first: () => 0, prev: () => at - 1, next: () => at + 1, last: () => game.steps.length - 1,
    "prev-round": () => roundStart(at, -1), "next-round": () => roundStart(at, 1) };
  for (const [button, to] of Object.entries(buttons)) {
    document.getElementById(button).addEventListener("click", () => { pause(); show(to()); });
  }
  document.getElementById("play").addEventListener("click", toggle);
  document.addEventListener("keydown", keys);
  window.addEventListener("hashchange", () => {
    const wanted = Number(location.hash.slice(1)) || 0;
    if (wanted !== at) show(wanted);
  });
  show(Number(location.hash.slice(1)) || 0);
  document.body.dataset.ready = "1";
  loadGrades(id);
  document.body.dataset.renderMs = performance.now().toFixed(1);
}

draw();
