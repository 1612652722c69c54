// The page: a game tree through the JSON API, its id in the address (a reload resumes it), its
// variations navigable, analysis on demand or live (server-sent events), files opened and saved.
"use strict";

const $ = (id) => document.getElementById(id);
const PLAYER = { 1: "blue", 2: "yellow" };
const defaults = JSON.parse($("defaults").textContent);
const SETTINGS = "trapy-web-settings";
const LIVE_SIMULATIONS = 200000;  // a live search runs until stopped or the position changes
const MIN_LABEL_VISITS = 3;  // a cell searched once or twice gets no label
const GAMES_PAGE = 50;
const page = {
  geometry: null, game: null, analysis: null, curve: null, busy: false, loading: "",
  token: 0, events: null, live: false, resuming: false, openings: null, records: null, presets: [],
  gameEvents: null, serverVersion: null, inflight: 0, waiting: null, retry: null, confirmed: null,
  gamesOffset: 0,
};

// ------------------------------------------------------------------ the server
// Every failure becomes an Error with words: `offline` when the server did not answer (stopped
// or restarting), `status` and the server's one line when it refused, `stale` when the game
// changed in another tab or window (the page reloads it).
async function api(method, path, body) {
  const options = { method, headers: {} };
  if (method !== "GET" && method !== "DELETE") {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body || {});
  }
  let answer;
  try {
    answer = await fetch(path, options);
  } catch (cause) {
    const error = new Error("the server did not answer (stopped or restarting?)");
    error.offline = true;
    throw error;
  }
  const data = await answer.json().catch(() => null);
  if (!answer.ok) {
    if (answer.status >= 500 && !(data && data.error)) {  // not this server's words: it broke off
      const error = new Error(`the server broke off the answer (${answer.status}; stopped or restarting?)`);
      error.offline = true;
      throw error;
    }
    const words = data && data.error ? data.error : `the server answered ${answer.status} ${answer.statusText}`.trim();
    const error = new Error(words);
    error.status = answer.status;
    error.stale = !!(data && data.stale);
    throw error;
  }
  if (data === null) throw new Error(`the server's answer to ${method} ${path} was not readable`);
  return data;
}

// The error line, in words, with a Retry button when `retry` is given.
function showError(error, retry) {
  $("error-text").textContent = error ? String(error.message || error) : "";
  page.retry = error && retry ? retry : null;
  $("retry").hidden = !page.retry;
}

// Run a page action: its failure is shown in words (offering to run it again); a change from a
// stale position reloads the game, which another tab or window changed.
async function guarded(action) {
  showError(null);
  try {
    await action();
  } catch (error) {
    if (error.stale && page.game) {
      await reloadGame().catch(() => null);
      showError(new Error("the game was changed in another tab or window: this is how it stands now (your last action was not played)"));
      return;
    }
    showError(error, error.offline || (error.status || 0) >= 500 ? () => guarded(action) : null);
  }
}

// Until the server answers and is ready (after a restart too), with its progress on the page.
// One wait for all who ask.
function waitForServer() {
  if (!page.waiting) {
    page.waiting = (async () => {
      try {
        for (let wait = 200; ; wait = Math.min(2 * wait, 2000)) {
          let ready = null;
          try { ready = await api("GET", "/api/ready"); } catch (error) { ready = null; }
          showReady(ready);
          if (ready && ready.ready) return;
          await sleep(ready ? 300 : wait);
        }
      } finally {
        page.waiting = null;
      }
    })();
  }
  return page.waiting;
}

function showReady(ready) {
  const box = $("ready");
  box.hidden = !!(ready && ready.ready);
  if (box.hidden) return;
  if (!ready) {
    $("ready-text").textContent = "waiting for the server to answer…";
    $("ready-progress").removeAttribute("value");
    return;
  }
  const step = ready.step ? `: ${ready.step}` : "";
  $("ready-text").textContent = `the server is preparing its nets${step} (${ready.done} of ${ready.total} done, ${ready.seconds} s)…`;
  $("ready-progress").max = Math.max(ready.total, 1);
  $("ready-progress").value = ready.done;
}

// Ask a yes/no question on the page; `action` runs on yes.
function confirmThen(question, action) {
  $("confirm-text").textContent = question;
  $("confirm").hidden = false;
  page.confirmed = action;
  $("confirm-no").focus();
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const gamePath = (suffix = "") => `/api/games/${page.game.id}${suffix}`;

// A change of the game, naming the version this page shows; then the page catches up with
// any change another tab made meanwhile.
async function change(suffix, body = {}) {
  page.inflight++;
  try {
    return await api("POST", gamePath(suffix), { ...body, version: page.game.version });
  } finally {
    page.inflight--;
    setTimeout(catchUp, 0);
  }
}

// ------------------------------------------------------------------ settings, kept per browser
function saveSettings() {
  const settings = {
    side: $("side").value, colour: $("colour").value, agent: $("agent").value,
    evaluator: $("evaluator").value, simulations: $("simulations").value,
    heat: document.querySelector("input[name=heat]:checked").value, live: page.live,
    game: page.game ? page.game.id : null, topK: $("top-k").value, numbers: $("numbers").checked,
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
  $("top-k").value = saved.topK || 5;
  $("numbers").checked = !!saved.numbers;
  const heat = document.querySelector(`input[name=heat][value=${saved.heat || "none"}]`);
  if (heat) heat.checked = true;
  page.live = !!saved.live;
  return saved;
}

// ------------------------------------------------------------------ the tree
// Each node's children, the main continuation first (ids grow with the order they were made).
function children(game, node) {
  if (game.tree.children) return game.tree.children[node];
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
  if (moved) { page.analysis = null; page.lineNote = ""; }
  if (page.game && page.game.id !== game.id) page.curve = null;
  if (page.game && page.game.id !== game.id) page.serverVersion = null;
  page.game = game;
  const address = `${location.pathname}?game=${game.id}`;
  if (location.search !== `?game=${game.id}`) history.replaceState(null, "", address);
  saveSettings();
  followGame(game.id);
  render();
  if (moved) refreshLive();
  refreshGames().catch(() => null);  // the list shows each game's moves and result
}

// The game as the server has it now (another tab changed it, or this one's change was stale).
async function reloadGame() {
  const token = page.token;
  const game = await api("GET", gamePath());
  if (token === page.token) await setGame(game);
}

// Every open tab of a game follows its changes: the game's event stream tells its version, and
// a newer one than shown is read (unless this tab is changing the game itself: it catches up
// once its own request is answered). EventSource reconnects by itself after a restart.
function followGame(id) {
  if (page.gameEvents && page.gameEvents.gameId === id) return;
  if (page.gameEvents) page.gameEvents.close();
  const events = new EventSource(`/api/games/${id}/events`);
  events.gameId = id;
  page.gameEvents = events;
  events.onmessage = (message) => {
    if (page.gameEvents !== events || !page.game || page.game.id !== id) return;
    const data = JSON.parse(message.data);
    if (data.deleted) {
      events.close();
      page.gameEvents = null;
      gameDeleted();
      return;
    }
    page.serverVersion = data.version;
    catchUp();
  };
}

async function catchUp() {
  const game = page.game;
  if (!game || page.inflight || page.busy || page.loading || page.serverVersion === null) return;
  if (page.serverVersion <= game.version) return;
  const token = page.token;
  let fresh;
  try { fresh = await api("GET", gamePath()); } catch (error) { return; }
  if (token !== page.token || !page.game || fresh.id !== page.game.id || fresh.version <= page.game.version) return;
  await setGame(fresh);
}

async function gameDeleted() {
  const listed = await api("GET", "/api/games?limit=1").catch(() => null);
  if (listed && listed.games.length) await guarded(() => openGame(listed.games[0].id));
  else await guarded(() => newGame(gameSettings()));
  if (!$("error-text").textContent) showError(new Error("the game shown before was deleted (here or in another tab or window): this is the most recent other game"));
}

async function deleteGame() {
  const id = page.game.id;
  await api("DELETE", `/api/games/${id}?version=${page.game.version}`);  // the stream says the rest
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
// the old game's reply is saved by the server but no longer shown). A failure leaves the page
// usable and says so: the server gone, the move is asked again once it is back; the agent
// failed, Retry asks again.
async function agentReply(token) {
  while (token === page.token && page.game.agent_to_move && !page.game.winner) {
    page.busy = true;
    render();
    let game;
    try {
      game = await api("POST", gamePath("/agent-move"), { version: page.game.version });
    } catch (error) {
      if (token !== page.token) return;
      page.busy = false;
      render();
      if (error.status === 409 && !error.stale) {
        await sleep(500);  // still thinking on an earlier request (a reload, another tab)
      } else if (error.offline) {
        showError(new Error(`${error.message}: the opponent's move is asked again when it is back`), () => guarded(() => agentReply(token)));
        game = await readGameWhenBack();
        if (token !== page.token) return;
        showError(null);
      } else if (!error.stale) {
        showError(new Error(`the opponent did not move: ${error.message}`), () => guarded(() => agentReply(token)));
        return;
      }
      if (!game) game = await api("GET", gamePath());
    } finally {
      if (token === page.token) page.busy = false;
    }
    if (token !== page.token) return;
    await setGame(game);
  }
  render();
}

// The game shown, read again once the server is back and ready (a server on its way down may
// still answer one request: then wait again).
async function readGameWhenBack() {
  for (;;) {
    await waitForServer();
    try {
      return await api("GET", gamePath());
    } catch (error) {
      if (!error.offline) throw error;
      await sleep(500);
    }
  }
}

function gameSettings() {
  const agent = $("agent").value.trim();
  return { side: Number($("side").value), human: $("colour").value, agent: agent || null };
}

// The list of games, a page of them at a time (the game shown is always in it).
async function refreshGames() {
  const answer = await api("GET", `/api/games?offset=${page.gamesOffset}&limit=${GAMES_PAGE}`);
  if (answer.games.length === 0 && page.gamesOffset > 0) {
    page.gamesOffset = Math.max(0, page.gamesOffset - GAMES_PAGE);
    return refreshGames();
  }
  const when = (t) => new Date(t * 1000).toLocaleString([], { dateStyle: "short", timeStyle: "short" });
  const label = (game) => {
    const result = game.winner ? `${PLAYER[game.winner]} won` : "unfinished";
    return `${when(game.updated)}: side ${game.side}, ${game.agent || "both sides"}, ${game.moves} moves, ${result}`;
  };
  const options = answer.games.map((game) => {
    const option = document.createElement("option");
    option.value = game.id;
    option.textContent = label(game);
    option.selected = page.game && game.id === page.game.id;
    return option;
  });
  if (page.game && !answer.games.some((game) => game.id === page.game.id)) {
    const option = document.createElement("option");
    option.value = page.game.id;
    option.textContent = "the game shown";
    option.selected = true;
    options.unshift(option);
  }
  $("games").replaceChildren(...options);
  const first = answer.total ? answer.offset + 1 : 0;
  $("games-range").textContent = `${first}–${answer.offset + answer.games.length} of ${answer.total}`;
  $("games-newer").disabled = answer.offset === 0;
  $("games-older").disabled = answer.offset + answer.games.length >= answer.total;
}

async function pageGames(step) {
  page.gamesOffset = Math.max(0, page.gamesOffset + step * GAMES_PAGE);
  await refreshGames();
}

// ------------------------------------------------------------------ moves and navigation
async function onCell(cell) {
  const game = page.game;
  if (!game || game.stones[cell]) return;
  await playMove(page.geometry.names[cell]);
}

// The page's move by name (a cell, or swap), where it may play one.
async function playMove(name) {
  const game = page.game;
  if (page.busy || page.loading || game.winner || game.agent_to_move) return;
  const token = page.token;
  await guarded(async () => {
    const answer = await change("/move", { move: name });
    if (token !== page.token) return;
    await setGame(answer);
    await agentReply(token);
  });
}

async function goto(node) {
  const game = page.game;
  if (page.busy || node === undefined || node === game.node) return;
  const token = page.token;
  const answer = await change("/goto", { node });
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
    game = await change("/players", { human: settings.human, agent: settings.agent });
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

// This game's players (not the next game's settings).
function playersText(game) {
  if (game.agent === null) return `This game (side ${game.side}): both sides played here`;
  const you = PLAYER[game.human], them = PLAYER[3 - game.human];
  return `This game (side ${game.side}): ${you}: you, ${them}: ${game.agent}`;
}

function percent(p) {
  const value = 100 * p;
  return value >= 9.95 ? value.toFixed(0) : value.toFixed(1);
}

function topK() {
  const k = Math.round(Number($("top-k").value));
  return Number.isFinite(k) && k >= 1 ? Math.min(k, 20) : 5;
}

// The search's candidate moves: the top few by visits (at least MIN_LABEL_VISITS), best first,
// with the win rate of the player to move (from Q in [-1, 1]); swap included (action K).
function candidates(analysis) {
  if (!analysis || !analysis.visits) return [];
  const names = [...page.geometry.names, "swap"];
  return analysis.visits
    .map((visits, action) => ({ action, visits: visits || 0, name: names[action] }))
    .filter((c) => c.visits >= MIN_LABEL_VISITS && c.name !== undefined)
    .sort((a, b) => b.visits - a.visits)
    .slice(0, topK())
    .map((c) => {
      const q = analysis.q && analysis.q[c.action];
      return { ...c, win: q === null || q === undefined ? null : (q + 1) / 2 };
    });
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
    // The candidates alone, coloured by the square root of their visits: the board stays
    // readable however many cells the search touched once.
    const all = candidates(analysis);
    const shown = all.filter((c) => c.action < cells);
    const values = new Array(cells).fill(null), labels = new Array(cells).fill("");
    for (const c of shown) {
      values[c.action] = Math.sqrt(c.visits);
      labels[c.action] = { text: c.win === null ? "–" : `${percent(c.win)}%`, sub: String(c.visits) };
    }
    const top = Math.sqrt(shown.length ? shown[0].visits : 1);
    // The swap takes the one stone on the board: that stone is outlined when the swap is best.
    const swapBest = all.length > 0 && all[0].action === cells;
    const best = swapBest ? game.stones.findIndex((s) => s) : shown.length ? shown[0].action : null;
    return { values, labels, pv, range: [0, top], best };
  }
  if (mode === "q" && analysis.q) {
    const q = analysis.q.slice(0, cells).map((x, cell) => ((analysis.visits || [])[cell] >= MIN_LABEL_VISITS ? x : null));
    return { values: q, labels: q.map((x) => (x === null ? "" : x.toFixed(2))), pv };
  }
  return { values: null, labels: null, pv };
}

// The move number of each stone of the position shown (the swapped stone keeps number 1).
function moveNumbers(game) {
  if (!$("numbers").checked) return null;
  const numbers = {};
  game.moves.slice(0, game.ply).forEach((name, i) => {
    const cell = page.geometry.names.indexOf(name);
    if (cell >= 0) numbers[cell] = i + 1;
  });
  return numbers;
}

function render() {
  const game = page.game, geometry = page.geometry;
  if (!game || !geometry) {
    $("status").textContent = page.loading;
    $("spinner").hidden = !page.loading;
    return;
  }
  const hover = (cell) => { $("hover").textContent = geometry.names[cell]; };
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.name : null;
  drawBoard($("board"), geometry, game, heat(), onCell, hover, moveNumbers(game));
  if (focused && $(`cell-${focused}`)) $(`cell-${focused}`).focus();  // keyboard play goes on
  $("players").textContent = playersText(game);
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
  $("move-input").disabled = !idle || !!game.winner || game.agent_to_move;
  for (const id of ["first", "prev"]) $(id).disabled = !idle || game.node === 0;
  const line = game.line, here = line.indexOf(game.node);
  for (const id of ["next", "last"]) $(id).disabled = !idle || here === line.length - 1;
  $("download").href = gamePath("/record");
  $("download-sgf").href = gamePath("/sgf");
  $("ply-label").textContent = `move ${game.moves.length} / ${line.length - 1}`;
  renderMoves(game);
  drawTree(game);
  renderValue();
  renderCandidates();
  showLine();
  drawPlot();
}

// The principal variation under the board's analysis, and a note on the search after it.
function showLine(note) {
  if (note !== undefined) page.lineNote = note;
  const line = page.analysis && page.analysis.pv ? `Line: ${page.analysis.pv.join(" ") || "–"}` : "Line: –";
  $("pv").textContent = page.lineNote ? `${line} (${page.lineNote})` : line;
}

function renderCandidates() {
  const shown = candidates(page.analysis);
  const row = (tag, texts, className) => {
    const tr = document.createElement("tr");
    if (className) tr.className = className;
    for (const text of texts) {
      const cell = document.createElement(tag);
      cell.textContent = text;
      tr.append(cell);
    }
    return tr;
  };
  $("candidates").replaceChildren(...(shown.length ? [
    row("th", ["", "move", "win rate", "visits"]),
    ...shown.map((c, i) => row("td", [i + 1, c.name, c.win === null ? "–" : `${percent(c.win)}%`, c.visits], i === 0 ? "best" : "")),
  ] : []));
}

function renderMoves(game) {
  const line = game.line;
  $("move-list").replaceChildren(...line.slice(1).map((node, i) => {
    const item = document.createElement("li");
    const player = PLAYER[i % 2 === 0 ? 1 : 2];  // blue moves first; colours stay through a swap
    item.textContent = game.tree.moves[node];
    item.dataset.node = node;
    item.title = `move ${i + 1}, ${player}`;
    item.className = `${player} ` + (node === game.node ? "current " : "") + (siblings(game, node).length > 1 ? "branch" : "");
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
    next.forEach((child, i) => {
      const button = document.createElement("button");
      button.textContent = game.tree.moves[child];
      button.dataset.node = child;
      button.className = "move" + (onLine.has(child) ? " on-line" : "");
      button.addEventListener("click", () => guarded(() => goto(child)));
      item.append(button);
      if (i > 0) {
        const promote = document.createElement("button");
        promote.textContent = "↑";
        promote.className = "tool promote";
        promote.title = `make ${game.tree.moves[child]} the main line`;
        promote.addEventListener("click", () => guarded(async () => setGame(await change("/promote", { node: child }))));
        item.append(promote);
      }
      const remove = document.createElement("button");
      remove.textContent = "✕";
      remove.className = "tool delete";
      remove.title = `delete the variation from ${game.tree.moves[child]}`;
      remove.addEventListener("click", () => confirmThen(
        `Delete ${game.tree.moves[child]} and every move after it (${subtreeSize(game, child)} positions)?`,
        async () => setGame(await change("/delete-variation", { node: child })),
      ));
      item.append(remove);
    });
    branches.push(item);
  });
  $("variations").replaceChildren(...branches);
}

function subtreeSize(game, node) {
  return 1 + children(game, node).reduce((sum, child) => sum + subtreeSize(game, child), 0);
}

// The game tree, small: one dot a position (in its mover's colour) by move number across, a
// row per variation; the line shown darker, the position shown ringed; a click goes there.
function drawTree(game) {
  const root = $("tree"), step = 14, pad = 8;
  root.replaceChildren();
  const lane = { 0: 0 }, depth = { 0: 0 };
  let lanes = 1, deepest = 0;
  const visit = (node) => {  // depth first, the main continuation first
    children(game, node).forEach((child, i) => {
      lane[child] = i === 0 ? lane[node] : lanes++;
      depth[child] = depth[node] + 1;
      deepest = Math.max(deepest, depth[child]);
    });
    for (const child of children(game, node)) visit(child);
  };
  visit(0);
  const x = (node) => pad + depth[node] * step, y = (node) => pad + lane[node] * step;
  root.setAttribute("width", pad * 2 + deepest * step);
  root.setAttribute("height", pad * 2 + (lanes - 1) * step);
  const onLine = new Set(game.line);
  game.tree.parents.forEach((parent, node) => {
    if (parent < 0) return;
    const path = lane[parent] === lane[node]
      ? `M${x(parent)},${y(parent)} L${x(node)},${y(node)}`
      : `M${x(parent)},${y(parent)} L${x(parent)},${y(node)} L${x(node)},${y(node)}`;
    svg("path", { d: path, class: onLine.has(node) ? "edge on-line" : "edge" }, root);
  });
  game.tree.parents.forEach((_, node) => {
    const colour = node === 0 ? "#8c8474" : page.geometry.palette.stones[String(depth[node] % 2 === 1 ? 1 : 2)];
    const dot = svg("circle", {
      cx: x(node), cy: y(node), r: node === game.node ? 5.5 : 4, fill: colour,
      class: `node${onLine.has(node) ? " on-line" : ""}${node === game.node ? " current" : ""}`,
      "data-node": node,
    }, root);
    svg("title", {}, dot).textContent = node === 0 ? "the empty board" : `move ${depth[node]}: ${game.tree.moves[node]}`;
    dot.addEventListener("click", () => guarded(() => goto(node)));
  });
  const box = $("tree-box"), at = x(game.node);
  if (at < box.scrollLeft || at > box.scrollLeft + box.clientWidth) box.scrollLeft = Math.max(0, at - box.clientWidth / 2);
}

function pathLength(game, node) {
  let length = 0;
  for (let n = node; n > 0; n = game.tree.parents[n]) length++;
  return length;
}

// The value bar: neutral and saying so until something is analysed.
function renderValue() {
  const analysis = page.analysis;
  const value = analysis && analysis.value_blue !== undefined ? analysis.value_blue : null;
  $("value-bar").classList.toggle("neutral", value === null);
  if (value === null) {
    $("value").textContent = "Value: –";
    $("value-blue").style.width = "50%";
    $("value-text").textContent = "not analysed yet";
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
    // "live" only while the live search runs: any other state says what happened.
    const note = job.status === "replaced"
      ? `stopped: another search of this game took over, ${job.done} simulations`
      : live && job.status === "running"
      ? `live, ${job.done} simulations`
      : { running: "searching", done: "search done", cancelled: "search stopped", failed: `search failed: ${job.error}` }[job.status];
    showLine(`${note}${live ? "" : `, ${job.done}/${job.total}`}`);
    if (job.status === "failed") showError(new Error(`the search failed: ${job.error}`));
  };
  update(job);
  const events = new EventSource(`/api/games/${gameId}/search/events`);
  page.events = events;
  events.onmessage = (message) => {
    if (page.events !== events) return;  // stopped, or replaced by this page's next search
    const state = JSON.parse(message.data);
    update(state);
    if (state.status === "running") return;
    stopEvents();
    if (state.status === "replaced") setLive(false);  // another page's: do not take it back
    else if (live && page.live && state.status === "cancelled") resumeLive(gameId, job.node);
  };
  events.onerror = () => {  // the server went away: EventSource's own retry would find no search
    if (page.events !== events) return;
    stopEvents();
    if (live && page.live) resumeLive(gameId, job.node);
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
      showLine("live analysis paused: waiting for the server…");
      await sleep(wait);
      const here = page.game && page.game.id === gameId && page.game.node === node;
      if (!page.live || !here || page.events) return;
      try {
        await startSearch(LIVE_SIMULATIONS, true);
        return;
      } catch (error) {
        if (!error.offline) {  // the server answered, and refused: say so, and stop
          setLive(false);
          showLine(`live analysis stopped: ${error.message}`);
          showError(new Error(`live analysis stopped: ${error.message}`), () => guarded(toggleLive));
          return;
        }
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
  showLine(`search stopped, ${state.done} simulations`);
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
    const state = await api("DELETE", gamePath("/search")).catch(() => null);
    showLine(state ? `live analysis stopped at ${state.done} simulations` : "live analysis stopped");
    return;
  }
  setLive(true);
  await refreshLive();
}

// A live analysis follows the position shown: a new position, a new search.
async function refreshLive() {
  if (!page.live || !page.game) return;
  if (page.game.winner) { stopEvents(); showLine("the game is over: nothing to analyse live"); return; }
  await guarded(async () => {
    try {
      await startSearch(LIVE_SIMULATIONS, true);
    } catch (error) {
      if (error.offline) { resumeLive(page.game.id, page.game.node); return; }
      throw error;
    }
  });
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
    await setGame(await change("/swap"));
    await agentReply(token);
  });
  on("undo", async () => setGame(await change("/undo")));
  $("resign").addEventListener("click", () => confirmThen(
    "Resign this game?", async () => setGame(await change("/resign")),
  ));
  $("delete-game").addEventListener("click", () => confirmThen(
    "Delete the game shown, with all its variations? This cannot be undone.", deleteGame,
  ));
  $("confirm-yes").addEventListener("click", () => {
    const action = page.confirmed;
    page.confirmed = null;
    $("confirm").hidden = true;
    if (action) guarded(action);
  });
  $("confirm-no").addEventListener("click", () => { page.confirmed = null; $("confirm").hidden = true; });
  $("retry").addEventListener("click", () => {
    const retry = page.retry;
    showError(null);
    if (retry) retry();
  });
  on("games-newer", () => pageGames(-1));
  on("games-older", () => pageGames(1));
  $("move-input").addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    const name = $("move-input").value.trim().toLowerCase();
    if (!name) return;
    if (name !== "swap" && !page.geometry.names.includes(name)) {
      showError(new Error(`no cell ${name} on this board (cells run a1 to ${page.geometry.names[page.geometry.num_cells - 1]}), or type swap`));
      return;
    }
    $("move-input").value = "";
    playMove(name);
  });
  for (const id of ["numbers", "top-k"]) $(id).addEventListener("change", () => { saveSettings(); render(); });
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
  await waitForServer();  // the nets prepared: the first requests find them ready
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
