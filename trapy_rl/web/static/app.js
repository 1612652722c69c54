// The page: one game per tab through the JSON API, analysis on demand, records replayed.
"use strict";

const $ = (id) => document.getElementById(id);
const PLAYER = { 1: "blue", 2: "yellow" };
const defaults = JSON.parse($("defaults").textContent);
const page = { geometry: null, game: null, view: 0, shown: null, analysis: null, curve: null, poll: null, busy: false, openings: null };

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (method !== "GET" && method !== "DELETE") {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body || {});
  }
  const answer = await fetch(path, options);
  const data = await answer.json().catch(() => ({ error: `HTTP ${answer.status}` }));
  if (!answer.ok) throw new Error(data.error || `HTTP ${answer.status}`);
  return data;
}

function showError(error) { $("error").textContent = error ? String(error.message || error) : ""; }

async function guarded(action) {
  showError(null);
  try { await action(); } catch (error) { showError(error); }
}

const latest = () => page.view === page.game.moves.length;
const pageToMove = (game) => !game.winner && !game.agent_to_move;

async function loadGeometry(side) {
  if (!page.geometry || page.geometry.side !== side) page.geometry = await api("GET", `/api/board?side=${side}`);
}

async function setGame(game) {
  await loadGeometry(game.side);
  if (!page.game || page.game.id !== game.id || page.game.moves.length !== game.moves.length) {
    page.analysis = null;
  }
  page.game = game;
  page.view = game.moves.length;
  page.shown = game;
  render();
}

async function showPly(ply) {
  const game = page.game;
  ply = Math.max(0, Math.min(ply, game.moves.length));
  page.view = ply;
  page.shown = ply === game.moves.length ? game : await api("GET", `/api/games/${game.id}?ply=${ply}`);
  page.analysis = null;
  render();
}

function statusText(game, shown) {
  if (shown.winner) {
    const how = shown.resigned ? "by resignation" : `in ${shown.ply} moves`;
    return `${PLAYER[shown.winner]} wins ${how}`;
  }
  if (shown.ply !== game.moves.length) return `move ${shown.ply + 1}: ${PLAYER[shown.to_move]} to move (reviewing)`;
  if (page.busy) return `${game.agent} is thinking…`;
  const who = game.agent === null ? "" : game.agent_to_move ? ` (${game.agent})` : " (you)";
  return `move ${shown.ply + 1}: ${PLAYER[shown.to_move]} to move${who}`;
}

function heat() {
  const analysis = page.analysis;
  const mode = document.querySelector("input[name=heat]:checked").value;
  if (mode === "openings") return openingHeat();
  if (!analysis) return null;
  const format = (v, digits) => (v === null || v === undefined ? "" : v.toFixed(digits));
  const marks = {};
  (analysis.pv || []).forEach((name, i) => {
    const cell = page.geometry.names.indexOf(name);
    if (cell >= 0 && marks[cell] === undefined) marks[cell] = String(i + 1);
  });
  if (mode === "policy" && analysis.policy) {
    const cells = analysis.policy.slice(0, page.geometry.num_cells);
    return { values: cells, labels: cells.map((p) => (p === null ? "" : Math.round(100 * p))), marks };
  }
  if (mode === "visits" && analysis.visits) {
    const cells = analysis.visits.slice(0, page.geometry.num_cells).map((v) => (v ? v : null));
    // Colour by the square root: a few cells take most visits, and the rest should still show.
    const shades = cells.map((v) => (v === null ? null : Math.sqrt(v)));
    return { values: shades, labels: cells.map((v) => (v ? String(v) : "")), marks };
  }
  if (mode === "q" && analysis.q) {
    const cells = analysis.q.slice(0, page.geometry.num_cells);
    return { values: cells, labels: cells.map((q) => format(q, 2)), marks };
  }
  return { values: null, labels: null, marks };
}

function render() {
  const game = page.game, shown = page.shown, geometry = page.geometry;
  drawBoard($("board"), geometry, shown, heat(), onCell, (cell) => { $("hover").textContent = geometry.names[cell]; });
  const status = $("status");
  status.textContent = statusText(game, shown);
  status.className = shown.winner ? "over" : "";
  $("swap").hidden = !(latest() && shown.swap_allowed && pageToMove(game) && !page.busy);
  $("undo").disabled = page.busy || game.moves.length === 0;
  $("resign").disabled = page.busy || !!game.winner;
  const download = $("download");
  download.classList.toggle("disabled", !game.winner);
  download.href = game.winner ? `/api/games/${game.id}/record` : "#";
  $("ply-label").textContent = `move ${page.view} / ${game.moves.length}`;
  const list = $("move-list");
  list.replaceChildren(...game.moves.map((move, i) => {
    const item = document.createElement("li");
    item.textContent = move;
    item.className = i + 1 === page.view ? "current" : "";
    item.addEventListener("click", () => guarded(() => showPly(i + 1)));
    return item;
  }));
  const analysis = page.analysis;
  if (analysis && analysis.value_blue !== undefined) {
    const share = ((analysis.value_blue + 1) / 2 * 100).toFixed(1);
    $("value").textContent = `Value: ${analysis.value_blue.toFixed(3)} for blue (blue wins ${share}%)`;
  } else if (!analysis) {
    $("value").textContent = "Value: –";
  }
  $("pv").textContent = analysis && analysis.pv ? `Line: ${analysis.pv.join(" ") || "–"}` : "Line: –";
  drawPlot();
}

async function onCell(cell) {
  const game = page.game;
  if (page.busy || !latest() || !pageToMove(game) || game.stones[cell]) return;
  await guarded(async () => {
    await setGame(await api("POST", `/api/games/${game.id}/move`, { move: page.geometry.names[cell] }));
    await agentReply();
  });
}

async function agentReply() {
  while (page.game.agent_to_move) {
    page.busy = true;
    render();
    try {
      const game = await api("POST", `/api/games/${page.game.id}/agent-move`, {});
      page.busy = false;
      await setGame(game);
    } finally {
      page.busy = false;
    }
  }
  render();
}

async function newGame(body) {
  stopPolling();
  page.curve = null;
  await setGame(await api("POST", "/api/games", body));
  await agentReply();
}

function gameSettings() {
  const agent = $("agent").value.trim();
  return { side: Number($("side").value), human: $("colour").value, agent: agent || null };
}

// ------------------------------------------------------------------ analysis
function stopPolling() {
  if (page.poll) clearInterval(page.poll);
  page.poll = null;
  $("cancel").disabled = true;
}

async function evaluate() {
  const answer = await api("POST", `/api/games/${page.game.id}/evaluate`, { evaluator: $("evaluator").value, ply: page.view });
  page.analysis = { ...(page.analysis || {}), ...answer };
  if (document.querySelector("input[name=heat]:checked").value === "none") document.querySelector("input[name=heat][value=policy]").checked = true;
  render();
}

async function search() {
  stopPolling();
  const body = { evaluator: $("evaluator").value, simulations: Number($("simulations").value), ply: page.view };
  const job = await api("POST", `/api/games/${page.game.id}/search`, body);
  const gameId = page.game.id, ply = page.view;
  document.querySelector("input[name=heat][value=visits]").checked = true;
  $("cancel").disabled = false;
  const update = (job) => {
    $("progress").max = job.total;
    $("progress").value = job.done;
    if (page.game.id !== gameId || page.view !== ply) return;
    if (job.result) {
      page.analysis = { ...(page.analysis || {}), ...job.result, value_blue: job.result.root_value_blue };
      render();
    }
    const note = { running: "searching", done: "search done", cancelled: "search cancelled", failed: `search failed: ${job.error}` }[job.status];
    $("pv").textContent = `${$("pv").textContent} (${note}, ${job.done}/${job.total})`;
  };
  update(job);
  page.poll = setInterval(() => guarded(async () => {
    const state = await api("GET", `/api/games/${gameId}/search`);
    update(state);
    if (state.status !== "running") stopPolling();
  }), 250);
}

async function cancelSearch() {
  const state = await api("DELETE", `/api/games/${page.game.id}/search`);
  stopPolling();
  $("progress").value = state.done;
}

async function plotValues() {
  const answer = await api("POST", `/api/games/${page.game.id}/values`, { evaluator: $("evaluator").value });
  page.curve = { id: page.game.id, values: answer.values_blue };
  drawPlot();
}

function drawPlot() {
  const plot = $("plot");
  plot.replaceChildren();
  const [w, h, pad] = [300, 120, 10];
  svg("line", { x1: pad, x2: w - pad, y1: h / 2, y2: h / 2, stroke: "#bbb" }, plot);
  const curve = page.curve;
  if (!curve || curve.id !== page.game.id) return;
  const n = Math.max(curve.values.length - 1, 1);
  const x = (i) => pad + (i / n) * (w - 2 * pad);
  const y = (v) => h / 2 - v * (h / 2 - pad);
  const line = curve.values.map((v, i) => `${x(i)},${y(v)}`).join(" ");
  svg("polyline", { points: line, fill: "none", stroke: page.geometry.palette.stones["1"], "stroke-width": 2 }, plot);
  svg("line", { x1: x(page.view), x2: x(page.view), y1: pad / 2, y2: h - pad / 2, stroke: "#d62728", id: "plot-cursor" }, plot);
  const label = svg("text", { x: pad, y: 12, "font-size": 10 }, plot);
  label.textContent = "value for blue (+1 top, -1 bottom)";
}

function plotClick(event) {
  const curve = page.curve;
  if (!curve || curve.id !== page.game.id) return;
  const box = $("plot").getBoundingClientRect();
  const fraction = (event.clientX - box.left) / box.width;
  const n = curve.values.length - 1;
  guarded(() => showPly(Math.round(((fraction * 300 - 10) / 280) * n)));
}

// ------------------------------------------------------------------ records
async function readRecordFile() {
  const file = $("record-file").files[0];
  if (!file) return;
  const answer = await api("POST", "/api/records", { text: await file.text() });
  page.records = answer.games;
  $("record-games").replaceChildren(...answer.games.map((game, i) => {
    const option = document.createElement("option");
    option.value = i;
    option.textContent = game.label;
    return option;
  }));
  $("replay").disabled = false;
}

async function replay() {
  const chosen = page.records[Number($("record-games").value)];
  await newGame({ record: chosen.record });
  await showPly(0);
}

// ------------------------------------------------------------------ opening map
// v per cell as a heatmap on the 0..1 scale (labels in percent), the five fairest openings
// marked by rank.
function openingHeat() {
  const map = page.openings;
  if (!map || map.side !== page.geometry.side) return null;
  const marks = {};
  map.rank.forEach((rank, cell) => { if (rank <= 5) marks[cell] = `#${rank}`; });
  return { values: map.v, labels: map.v.map((v) => String(Math.round(100 * v))), marks, range: [0, 1] };
}

async function readOpeningsFile() {
  const file = $("openings-file").files[0];
  if (!file) return;
  page.openings = await api("POST", "/api/openings", { text: await file.text() });
  showOpeningsTable();
  document.querySelector("input[name=heat][value=openings]").checked = true;
  render();
  if (page.openings.side !== page.geometry.side) {
    throw new Error(`the opening map is for side ${page.openings.side}; this board is side ${page.geometry.side}`);
  }
}

function showOpeningsTable() {
  const map = page.openings, names = page.geometry.names;
  const percent = (x) => (x === null ? "" : (100 * x).toFixed(1));
  const cells = map.rank.map((rank, cell) => [rank, cell]).sort((a, b) => a[0] - b[0]).slice(0, 10);
  const row = (tag, texts) => {
    const tr = document.createElement("tr");
    for (const text of texts) {
      const td = document.createElement(tag);
      td.textContent = text;
      tr.append(td);
    }
    return tr;
  };
  const interval = (cell) => (map.low[cell] === null ? "" : `${percent(map.low[cell])}-${percent(map.high[cell])}`);
  $("openings-table").replaceChildren(
    row("th", ["rank", "cell", "v %", "95% interval", "swap"]),
    ...cells.map(([rank, cell]) => row("td", [rank, map.side === page.geometry.side ? names[cell] : cell, percent(map.v[cell]), interval(cell), map.swap[cell] ? "yes" : "no"])),
  );
}

// ------------------------------------------------------------------ wiring
function wire() {
  const on = (id, action) => $(id).addEventListener("click", () => guarded(action));
  on("new-game", () => newGame(gameSettings()));
  on("swap", async () => { await setGame(await api("POST", `/api/games/${page.game.id}/swap`, {})); await agentReply(); });
  on("undo", async () => setGame(await api("POST", `/api/games/${page.game.id}/undo`, {})));
  on("resign", async () => setGame(await api("POST", `/api/games/${page.game.id}/resign`, {})));
  on("first", () => showPly(0));
  on("prev", () => showPly(page.view - 1));
  on("next", () => showPly(page.view + 1));
  on("last", () => showPly(page.game.moves.length));
  on("evaluate", evaluate);
  on("search", search);
  on("cancel", cancelSearch);
  on("plot-values", plotValues);
  on("replay", replay);
  $("plot").addEventListener("click", plotClick);
  $("record-file").addEventListener("change", () => guarded(readRecordFile));
  $("openings-file").addEventListener("change", () => guarded(readOpeningsFile));
  for (const radio of document.querySelectorAll("input[name=heat]")) radio.addEventListener("change", render);
  document.addEventListener("keydown", (event) => {
    if (event.target.tagName === "INPUT") return;
    if (event.key === "ArrowLeft") guarded(() => showPly(page.view - 1));
    if (event.key === "ArrowRight") guarded(() => showPly(page.view + 1));
  });
}

$("side").value = defaults.side;
$("agent").value = defaults.agent;
$("evaluator").value = defaults.evaluator;
wire();
guarded(() => newGame(gameSettings()));
