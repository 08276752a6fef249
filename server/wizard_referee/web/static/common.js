// Shared helpers of the pages: the JSON API, DOM building, cards, the nav bar.

export async function api(path) {
  const response = await fetch(path, { headers: { accept: "application/json" } });
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) {
    throw new Error((data && data.error) || `${response.status} ${response.statusText}`);
  }
  return data;
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "style") node.setAttribute("style", value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };

// A card face up: "13H" is the king of hearts, W a Wizard (WS: a suited one), J a Jester.
export function card(text) {
  const suit = text.length > 1 ? text.slice(-1) : "";
  const rank = text.length > 1 ? text.slice(0, -1) : text;
  const kind = rank === "W" ? "W" : rank === "J" ? "J" : suit;
  const label = (rank === "W" ? "W" : rank) + (SUITS[suit] || "");
  return el("span", { class: `card ${kind} ${suit}`.trim(), "data-card": text, title: text }, label);
}

// A card face down (how many a player still holds, never which).
export function back() {
  return el("span", { class: "card back" }, "?");
}

export function escapeName(name) {
  return encodeURIComponent(name);
}

// Entrants have pages only where there is a results store (not under `serve`):
// nav() learns which from /api/info before a page draws its links.
let entrantPages = true;

export function entrantLink(name) {
  if (!entrantPages) return el("span", { class: "entrant" }, name);
  return el("a", { href: `/entrants/${escapeName(name)}` }, name);
}

// The last part of this page's path, after `prefix` ("/games/"), decoded:
// a game id or an entrant's name, which may hold "/", "%" or "#".
export function pathName(prefix) {
  return decodeURIComponent(location.pathname.slice(prefix.length));
}

export function gameLink(id, text) {
  return el("a", { href: `/games/${encodeURIComponent(id)}` }, text || id);
}

export function faultBadges(faults) {
  return Object.entries(faults || {}).map(([code, n]) =>
    el("span", { class: "fault", title: `${n} x ${code}` }, `${code}${n > 1 ? " x" + n : ""}`));
}

// A rating's 95% interval as a bar between lo and hi, the rating a mark on it.
export function intervalBar(row, lo, hi) {
  const bar = el("span", { class: "bar", title: row.low === null ? row.note || "no interval" :
    `95% interval ${row.low.toFixed(0)} to ${row.high.toFixed(0)}` });
  const at = (v) => `${(100 * (v - lo)) / (hi - lo || 1)}%`;
  if (row.low !== null && row.high !== null) {
    bar.append(el("span", { class: "range", style: `left:${at(row.low)};width:calc(${at(row.high)} - ${at(row.low)})` }));
  }
  if (row.rating !== null) bar.append(el("span", { class: "point", style: `left:${at(row.rating)}` }));
  return bar;
}

export function percent(x) {
  return x === null || x === undefined ? "-" : `${(100 * x).toFixed(1)}%`;
}

export function when(seconds) {
  return seconds ? new Date(seconds * 1000).toLocaleString() : "-";
}

export async function nav(current) {
  const bar = document.querySelector("nav");
  let info = null;
  try { info = await api("/api/info"); } catch (e) { info = null; }
  entrantPages = !info || info.mode !== "server";
  const links = [el("a", { href: "/" }, "Wizard Arena")];
  if (info && info.mode === "ladder") links.push(el("a", { href: "/" }, "Standings"));
  else if (info && info.mode !== "server") links.push(el("a", { href: "/" }, "Leaderboard"));
  links.push(el("a", { href: "/games" }, "Games"));
  if (info && info.live_tables) links.push(el("a", { href: "/tables" }, "Tables in progress"));
  if (info && info.metrics) links.push(el("a", { href: "/metrics" }, "Metrics"));
  const status = info
    ? `${info.name}${info.total ? ` \u2014 ${info.games.finished || 0} of ${info.total} games` : ""}`
    : "";
  bar.replaceChildren(...links, el("span", { class: "status" }, status));
  document.title = `${current} \u2014 Wizard Arena`;
  return info;
}

export function fail(where, error) {
  where.replaceChildren(el("p", { class: "error" }, String(error.message || error)));
}
