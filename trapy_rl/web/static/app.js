// The page: a game tree through the JSON API, its id in the address (a reload resumes it), its
// variations navigable, analysis on demand or live (server-sent events), files opened and saved.
"use strict";

const $ = (id) => document.getElementById(id);
const PLAYER = { 1: "blue", 2: "yellow" };
const defaults = JSON.parse($("defaults").textContent);
const SETTINGS = "trapy-web-settings";
const LIVE_SIMULATIONS = 200000;  // a live search runs until stopped or the position changes
const page = {
  geometry: null, game: null, analysis: null, curve: null, busy: false, loading: "",
  token: 0, events: null, live: false, resuming: false, openings: null, records: null, presets: [],
};

// ------------------------------------------------------------------ the server
async function api(method, path, body) {
  const options = { method, headers: {} };
  if (method !== "GET" && method !== "DELETE") {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body || {});
  }
  const answer = await fetch(path, options);
  const data = await answer.json().catch(() => ({ error: `HTTP ${answer.status}` }));
  if (!answer.ok) {
    const error = new Error(data.error || `HTTP ${answer.status}`);
    error.status = answer.status;
    throw error;
  }
  return data;
}

function showError(error) { $("error").textContent = error ? String(error.message || error) : ""; }

async function guarded(action) {
  showError(null);
  try { await action(); } catch (error) { showError(error); }
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const gamePath = (suffix = "") => `/api/games/${page.game.id}${suffix}`;

// ------------------------------------------------------------------ settings, kept per browser
function saveSettings() {
  const settings = {
    side: $("side").value, colour: $("colour").value, agent: $("agent").value,
    evaluator: $("evaluator").value, simulations: $("simulations").value,
    heat: document.querySelector("input[name=heat]:checked").value, live: page.live,
    game: page.game ? page.game.id : null,
  };
  try { localStorage.setItem(SETTINGS, JSON.stringify(settings)); } catch (error) { /* private mode */ }
}

function loadSettings() {
  let saved = {};
  try { saved = JSON.parse(localStorage.getItem(SETTINGS) || "{}") || {}; } catch (error) { saved = {}; }
  $("side").value = saved.side || defaults.side;
  $("colour").value = saved.colour || "blue";
  $("agent").value = saved.agent !== undefined ? saved.agent : defaults.agent;
  $("evaluator").value = saved.evaluator || defaults.evaluator;
  $("simulations").value = saved.simulations || 400;
  const heat = document.querySelector(`input[name=heat][value=${saved.heat || "none"}]`);
  if (heat) heat.checked = true;
  page.live = !!saved.live;
  return saved;
}

// ------------------------------------------------------------------ the tree
// Each node's children, the main continuation first (ids grow with the order they were made).
function children(game, node) {
  if (!game.children) {
    game.children = game.tree.parents.map(() => []);
    game.tree.parents.forEach((parent, child) => { if (parent >= 0) game.children[parent].push(child); });
  }
  return game.children[node];
}

function siblings(game, node) {
  return node === 0 ? [0] : children(game, game.tree.parents[node]);
}

// ------------------------------------------------------------------ games
async function loadGeometry(side) {
  if (!page.geometry || page.geometry.side !== side) page.geometry = await api("GET", `/api/board?side=${side}`);
}

async function setGame(game) {
  await loadGeometry(game.side);
  const moved = !page.game || page.game.id !== game.id || page.game.node !== game.node;
  if (moved) page.analysis = null;
  if (page.game && page.game.id !== game.id) page.curve = null;
  page.game = game;
  const address = `${location.pathname}?game=${game.id}`;
  if (location.search !== `?game=${game.id}`) history.replaceState(null, "", address);
  saveSettings();
  render();
  if (moved) refreshLive();
  refreshGames().catch(() => null);  // the list shows each game's moves and result
}

async function openGame(id) {
  const token = ++page.token;
  page.busy = false;
  const game = await api("GET", `/api/games/${id}`);
  if (token !== page.token) return;
  await setGame(game);
  await agentReply(token);
}

async function newGame(body) {
  const token = ++page.token;
  stopEvents();
  page.busy = false;
  page.curve = null;
  page.loading = body.agent ? `loading ${body.agent}…` : "";
  render();
  let game;
  try {
    game = await api("POST", "/api/games", body);
  } finally {
    if (token === page.token) { page.loading = ""; render(); }
  }
  if (token !== page.token) return;  // another game was asked for meanwhile
  await setGame(game);
  await agentReply(token);
}

// The agent's moves while it is to move in the game of `token` (a newer game ends the loop:
// the old game's reply is saved by the server but no longer shown).
async function agentReply(token) {
  while (token === page.token && page.game.agent_to_move && !page.game.winner) {
    page.busy = true;
    render();
    let game;
    try {
      game = await api("POST", gamePath("/agent-move"), {});
    } catch (error) {
      if (error.status !== 409) throw error;
      await sleep(500);  // still thinking on an earlier request (a reload): wait for it
      game = await api("GET", gamePath());
    } finally {
      if (token === page.token) page.busy = false;
    }
    if (token !== page.token) return;
    await setGame(game);
  }
  render();
}

function gameSettings() {
  const agent = $("agent").value.trim();
  return { side: Number($("side").value), human: $("colour").value, agent: agent || null };
}

async function refreshGames() {
  const answer = await api("GET", "/api/games");
  const when = (t) => new Date(t * 1000).toLocaleString([], { dateStyle: "short", timeStyle: "short" });
  $("games").replaceChildren(...answer.games.map((game) => {
    const option = document.createElement("option");
    option.value = game.id;
    const result = game.winner ? `${PLAYER[game.winner]} won` : "unfinished";
    option.textContent = `${when(game.updated)}: side ${game.side}, ${game.agent || "both sides"}, ${game.moves} moves, ${result}`;
    option.selected = page.game && game.id === page.game.id;
    return option;
  }));
}

// ------------------------------------------------------------------ moves and navigation
async function onCell(cell) {
  const game = page.game;
  if (page.busy || page.loading || game.winner || game.agent_to_move || game.stones[cell]) return;
  const token = page.token;
  await guarded(async () => {
    const answer = await api("POST", gamePath("/move"), { move: page.geometry.names[cell] });
    if (token !== page.token) return;
    await setGame(answer);
    await agentReply(token);
  });
}

async function goto(node) {
  const game = page.game;
  if (page.busy || node === undefined || node === game.node) return;
  const token = page.token;
  const answer = await api("POST", gamePath("/goto"), { node });
  if (token === page.token) await setGame(answer);
}

function step(key) {
  const game = page.game, line = game.line, here = line.indexOf(game.node);
  if (key === "ArrowLeft") return goto(line[here - 1]);
  if (key === "ArrowRight") return goto(line[here + 1]);
  if (key === "Home") return goto(0);
  if (key === "End") return goto(line[line.length - 1]);
  if (key === "ArrowUp" || key === "ArrowDown") {
    const others = siblings(game, game.node), at = others.indexOf(game.node);
    return goto(others[at + (key === "ArrowUp" ? -1 : 1)]);
  }
  return null;
}

async function playFromHere() {
  const token = page.token;
  const settings = gameSettings();
  page.loading = settings.agent ? `loading ${settings.agent}…` : "";
  render();
  let game;
  try {
    game = await api("POST", gamePath("/players"), { human: settings.human, agent: settings.agent });
  } finally {
    page.loading = "";
    render();
  }
  if (token !== page.token) return;
  await setGame(game);
  await agentReply(token);
}

async function opponentMoves() {
  await agentReply(page.token);
}

// ------------------------------------------------------------------ drawing
function statusText(game) {
  if (page.loading) return page.loading;
  if (game.winner) {
    const how = game.resigned ? "by resignation" : `in ${game.ply} moves`;
    return `${PLAYER[game.winner]} wins ${how}`;
  }
  if (page.busy) return `${game.agent} is thinking…`;
  const who = game.agent === null ? "" : game.agent_to_move ? ` (${game.agent})` : " (you)";
  return `move ${game.ply + 1}: ${PLAYER[game.to_move]} to move${who}`;
}

function percent(p) {
  const value = 100 * p;
  return value >= 9.95 ? value.toFixed(0) : value.toFixed(1);
}

function heat() {
  const analysis = page.analysis, game = page.game, geometry = page.geometry;
  const mode = document.querySelector("input[name=heat]:checked").value;
  if (mode === "openings") return openingHeat();
  if (!analysis) return null;
  const cells = geometry.num_cells;
  const pv = (analysis.pv || []).map((name, i) => ({
    cell: geometry.names.indexOf(name), number: i + 1,
    player: i % 2 === 0 ? game.to_move : 3 - game.to_move,
  })).filter((s) => s.cell >= 0);
  if (mode === "policy" && analysis.policy) {
    // Colour and a percentage only where it is not ~0: the rest of the board stays quiet.
    const policy = analysis.policy.slice(0, cells).map((p) => (p === null || p < 0.005 ? null : p));
    const labels = policy.map((p) => (p === null ? "" : percent(p)));
    return { values: policy, labels, pv, range: [0, Math.max(...policy.filter((p) => p !== null), 1e-9)] };
  }
  if (mode === "visits" && analysis.visits) {
    const visits = analysis.visits.slice(0, cells).map((v) => (v ? v : null));
    const ranked = visits.map((v, cell) => [v || 0, cell]).sort((a, b) => b[0] - a[0]);
    const top = new Set(ranked.slice(0, 8).filter(([v]) => v > 0).map(([, cell]) => cell));
    const labels = visits.map((v, cell) => {
      if (!v) return "";
      const q = analysis.q && analysis.q[cell];
      // The win rate of the player to move, from Q in [-1, 1], for the top moves.
      const sub = top.has(cell) && q !== null && q !== undefined ? `${percent((q + 1) / 2)}%` : undefined;
      return { text: String(v), sub };
    });
    // Colour by the square root: a few cells take most visits, and the rest should still show.
    return { values: visits.map((v) => (v === null ? null : Math.sqrt(v))), labels, pv };
  }
  if (mode === "q" && analysis.q) {
    const q = analysis.q.slice(0, cells);
    return { values: q, labels: q.map((x) => (x === null ? "" : x.toFixed(2))), pv };
  }
  return { values: null, labels: null, pv };
}

function render() {
  const game = page.game, geometry = page.geometry;
  if (!game || !geometry) {
    $("status").textContent = page.loading;
    $("spinner").hidden = !page.loading;
    return;
  }
  drawBoard($("board"), geometry, game, heat(), onCell, (cell) => { $("hover").textContent = geometry.names[cell]; });
  const status = $("status");
  status.textContent = statusText(game);
  status.className = game.winner ? "over" : "";
  $("spinner").hidden = !(page.busy || page.loading);
  const idle = !page.busy && !page.loading;
  $("swap").hidden = !(game.swap_allowed && !game.agent_to_move && idle);
  $("undo").disabled = !idle || (game.moves.length === 0 && !game.resigned);
  $("resign").disabled = !idle || !!game.winner;
  $("agent-move").disabled = !idle || !game.agent_to_move;
  $("play-here").disabled = !idle || !!game.winner;
  for (const id of ["first", "prev"]) $(id).disabled = !idle || game.node === 0;
  const line = game.line, here = line.indexOf(game.node);
  for (const id of ["next", "last"]) $(id).disabled = !idle || here === line.length - 1;
  $("download").href = gamePath("/record");
  $("download-sgf").href = gamePath("/sgf");
  $("ply-label").textContent = `move ${game.moves.length} / ${line.length - 1}`;
  renderMoves(game);
  renderValue();
  showLine();
  drawPlot();
}

// The principal variation under the board's analysis, and a note on the search after it.
function showLine(note) {
  const line = page.analysis && page.analysis.pv ? `Line: ${page.analysis.pv.join(" ") || "–"}` : "Line: –";
  $("pv").textContent = note ? `${line} (${note})` : line;
}

function renderMoves(game) {
  const line = game.line;
  $("move-list").replaceChildren(...line.slice(1).map((node) => {
    const item = document.createElement("li");
    item.textContent = game.tree.moves[node];
    item.dataset.node = node;
    item.className = (node === game.node ? "current " : "") + (siblings(game, node).length > 1 ? "branch" : "");
    item.addEventListener("click", () => guarded(() => goto(node)));
    return item;
  }));
  const onLine = new Set(line);
  const branches = [];
  game.tree.parents.forEach((_, node) => {
    const next = children(game, node);
    if (next.length < 2) return;
    const item = document.createElement("li");
    item.append(node === 0 ? "move 1: " : `after ${pathLength(game, node)}. ${game.tree.moves[node]}: `);
    for (const child of next) {
      const button = document.createElement("button");
      button.textContent = game.tree.moves[child];
      button.dataset.node = child;
      if (onLine.has(child)) button.className = "on-line";
      button.addEventListener("click", () => guarded(() => goto(child)));
      item.append(button);
    }
    branches.push(item);
  });
  $("variations").replaceChildren(...branches);
}

function pathLength(game, node) {
  let length = 0;
  for (let n = node; n > 0; n = game.tree.parents[n]) length++;
  return length;
}

function renderValue() {
  const analysis = page.analysis;
  const value = analysis && analysis.value_blue !== undefined ? analysis.value_blue : null;
  if (value === null) {
    $("value").textContent = "Value: –";
    $("value-blue").style.width = "50%";
    $("value-text").textContent = "";
    return;
  }
  const share = ((value + 1) / 2) * 100;
  $("value").textContent = `Value: ${value.toFixed(3)} for blue (blue wins ${share.toFixed(1)}%)`;
  $("value-blue").style.width = `${share}%`;
  $("value-text").textContent = `blue ${share.toFixed(1)}% – yellow ${(100 - share).toFixed(1)}%`;
}

// ------------------------------------------------------------------ analysis
function stopEvents() {
  if (page.events) page.events.close();
  page.events = null;
  $("cancel").disabled = true;
}

// Watch the game's search through server-sent events until it ends (or is replaced). A live
// analysis whose stream ends before the page stops it (the server restarted, or cancelled the
// search as it shut down) starts again once the server answers.
function watchSearch(job, live) {
  stopEvents();
  const gameId = page.game.id;
  $("cancel").disabled = false;
  const update = (job) => {
    $("progress").max = job.total;
    $("progress").value = live ? 0 : job.done;
    if (!page.game || page.game.id !== gameId || job.node !== page.game.node) return;
    if (job.result) {
      page.analysis = { ...(page.analysis || {}), ...job.result, value_blue: job.result.root_value_blue };
      render();
    }
    const note = job.status === "replaced"
      ? "another search of this game took over"
      : live
      ? `live, ${job.done} simulations`
      : { running: "searching", done: "search done", cancelled: "search cancelled", failed: `search failed: ${job.error}` }[job.status];
    showLine(`${note}${live ? "" : `, ${job.done}/${job.total}`}`);
    if (job.status === "failed") showError(`the search failed: ${job.error}`);
  };
  update(job);
  const events = new EventSource(`/api/games/${gameId}/search/events`);
  page.events = events;
  events.onmessage = (message) => {
    const state = JSON.parse(message.data);
    update(state);
    if (state.status === "running" || page.events !== events) return;
    stopEvents();
    if (state.status === "replaced") setLive(false);  // another page's: do not take it back
    else if (live && state.status === "cancelled") resumeLive(gameId, job.node);
  };
  events.onerror = () => {  // the server went away: EventSource's own retry would find no search
    if (page.events !== events) return;
    stopEvents();
    if (live) resumeLive(gameId, job.node);
    else showLine("the search stopped: the server went away");
  };
}

// Start the live analysis of `node` again, trying until the server answers, unless the page
// has moved on or stopped it meanwhile.
async function resumeLive(gameId, node) {
  if (page.resuming) return;
  page.resuming = true;
  try {
    for (let wait = 250; ; wait = Math.min(2 * wait, 2000)) {
      showLine("live analysis: waiting for the server…");
      await sleep(wait);
      const here = page.game && page.game.id === gameId && page.game.node === node;
      if (!page.live || !here || page.events) return;
      try {
        await startSearch(LIVE_SIMULATIONS, true);
        return;
      } catch (error) {
        if (error.status) { showError(error); return; }  // the server answered, and refused
      }
    }
  } finally {
    page.resuming = false;
  }
}

async function startSearch(simulations, live) {
  stopEvents();  // the stream of the search this one replaces is no longer watched
  const body = { evaluator: $("evaluator").value, simulations, node: page.game.node };
  const job = await api("POST", gamePath("/search"), body);
  const visits = document.querySelector("input[name=heat][value=visits]");
  if (document.querySelector("input[name=heat]:checked").value === "none") visits.checked = true;
  watchSearch(job, live);
}

async function search() {
  setLive(false);
  await startSearch(Number($("simulations").value), false);
}

async function cancelSearch() {
  setLive(false);
  stopEvents();
  const state = await api("DELETE", gamePath("/search"));
  $("progress").value = state.done;
}

function setLive(on) {
  page.live = on;
  $("live").setAttribute("aria-pressed", String(on));
  $("live").textContent = on ? "Stop live analysis" : "Live analysis";
  saveSettings();
}

async function toggleLive() {
  if (page.live) {
    setLive(false);
    stopEvents();
    await api("DELETE", gamePath("/search")).catch(() => null);
    return;
  }
  setLive(true);
  await refreshLive();
}

// A live analysis follows the position shown: a new position, a new search.
async function refreshLive() {
  if (!page.live || !page.game) return;
  if (page.game.winner) { stopEvents(); return; }
  await guarded(() => startSearch(LIVE_SIMULATIONS, true));
}

async function evaluate() {
  const answer = await api("POST", gamePath("/evaluate"), { evaluator: $("evaluator").value, node: page.game.node });
  if (answer.node !== page.game.node) return;
  page.analysis = { ...(page.analysis || {}), ...answer };
  if (document.querySelector("input[name=heat]:checked").value === "none") document.querySelector("input[name=heat][value=policy]").checked = true;
  render();
}

async function plotValues() {
  const answer = await api("POST", gamePath("/values"), { evaluator: $("evaluator").value });
  page.curve = { id: page.game.id, line: page.game.line.slice(), values: answer.values_blue };
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
  const at = curve.line.indexOf(page.game.node);
  if (at >= 0) svg("line", { x1: x(at), x2: x(at), y1: pad / 2, y2: h - pad / 2, stroke: "#d62728", id: "plot-cursor" }, plot);
  const label = svg("text", { x: pad, y: 12, "font-size": 10 }, plot);
  label.textContent = "value for blue (+1 top, -1 bottom)";
}

function plotClick(event) {
  const curve = page.curve;
  if (!curve || curve.id !== page.game.id) return;
  const box = $("plot").getBoundingClientRect();
  const fraction = (event.clientX - box.left) / box.width;
  const n = curve.values.length - 1;
  const index = Math.max(0, Math.min(n, Math.round(((fraction * 300 - 10) / 280) * n)));
  guarded(() => goto(curve.line[index]));
}

// ------------------------------------------------------------------ files
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
  await newGame({ side: chosen.side, tree: chosen.tree, names: chosen.names });
  await goto(0);
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
  const pct = (x) => (x === null ? "" : (100 * x).toFixed(1));
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
  const interval = (cell) => (map.low[cell] === null ? "" : `${pct(map.low[cell])}-${pct(map.high[cell])}`);
  $("openings-table").replaceChildren(
    row("th", ["rank", "cell", "v %", "95% interval", "swap"]),
    ...cells.map(([rank, cell]) => row("td", [rank, map.side === page.geometry.side ? names[cell] : cell, pct(map.v[cell]), interval(cell), map.swap[cell] ? "yes" : "no"])),
  );
}

// ------------------------------------------------------------------ wiring
async function loadPresets() {
  const answer = await api("GET", "/api/agents");
  page.presets = answer.presets;
  const option = (preset) => {
    const node = document.createElement("option");
    node.value = preset.spec;
    node.label = preset.label;
    return node;
  };
  $("agent-specs").replaceChildren(...answer.presets.map(option));
  const searches = answer.presets.filter((p) => p.spec.startsWith("mcts:") || p.spec.startsWith("uct"));
  $("evaluator-specs").replaceChildren(...searches.map(option));
}

function wire() {
  const on = (id, action) => $(id).addEventListener("click", () => guarded(action));
  on("new-game", () => newGame(gameSettings()));
  on("swap", async () => {
    const token = page.token;
    await setGame(await api("POST", gamePath("/swap"), {}));
    await agentReply(token);
  });
  on("undo", async () => setGame(await api("POST", gamePath("/undo"), {})));
  on("resign", async () => setGame(await api("POST", gamePath("/resign"), {})));
  on("agent-move", opponentMoves);
  on("play-here", playFromHere);
  on("first", () => step("Home"));
  on("prev", () => step("ArrowLeft"));
  on("next", () => step("ArrowRight"));
  on("last", () => step("End"));
  on("evaluate", evaluate);
  on("search", search);
  on("cancel", cancelSearch);
  on("live", toggleLive);
  on("plot-values", plotValues);
  on("replay", replay);
  $("plot").addEventListener("click", plotClick);
  $("games").addEventListener("change", () => guarded(() => openGame($("games").value)));
  $("record-file").addEventListener("change", () => guarded(readRecordFile));
  $("openings-file").addEventListener("change", () => guarded(readOpeningsFile));
  for (const radio of document.querySelectorAll("input[name=heat]")) radio.addEventListener("change", () => { saveSettings(); render(); });
  for (const id of ["side", "colour", "agent", "evaluator", "simulations"]) $(id).addEventListener("change", saveSettings);
  document.addEventListener("keydown", (event) => {
    if (["INPUT", "SELECT", "TEXTAREA"].includes(event.target.tagName) || !page.game) return;
    if (["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"].includes(event.key)) {
      event.preventDefault();
      guarded(() => step(event.key));
    }
  });
}

// The game in the address, else the last one this browser showed, else a new one: a reload
// never starts a new game.
async function start() {
  const saved = loadSettings();
  setLive(page.live);
  wire();
  await loadPresets();
  const wanted = new URLSearchParams(location.search).get("game") || saved.game || (await newestIfReadOnly());
  if (wanted) {
    try {
      await openGame(wanted);
      return;
    } catch (error) {
      if (error.status !== 404) throw error;
    }
  }
  await newGame(gameSettings());
}

// ------------------------------------------------------------------ a games file served read-only
// (trapy-web --read-only): the page says so and offers no move, as none would be saved; it
// opens the newest game where another page would start a new one.
if (defaults.read_only) {
  document.body.classList.add("read-only");
  $("read-only").hidden = false;
}

async function newestIfReadOnly() {
  if (!defaults.read_only) return null;
  const listed = await api("GET", "/api/games");
  return listed.games.length ? listed.games[0].id : null;
}

guarded(start);
