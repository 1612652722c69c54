// The board as SVG, from the geometry the server sends (/api/board: hexagons, region bands and
// colours of trapy_rl.game.geometry and trapy_rl.game.draw, in cell widths with y up).
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
// Viridis at eight stops: the heatmap's colours, as draw.py's default colormap.
const VIRIDIS = ["#440154", "#46327e", "#365c8d", "#277f8e", "#1fa187", "#4ac16d", "#a0da39", "#fde725"];

function svg(tag, attrs, parent) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

// SVG's y axis points down: every point is drawn at (x, -y).
const points = (corners) => corners.map(([x, y]) => `${x},${-y}`).join(" ");

function viridis(t) {
  const u = Math.min(Math.max(t, 0), 1) * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(u), VIRIDIS.length - 2);
  const mix = (a, b, f) => Math.round(a + (b - a) * f);
  const rgb = (hex) => [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16));
  const [a, b] = [rgb(VIRIDIS[i]), rgb(VIRIDIS[i + 1])];
  return `rgb(${a.map((v, k) => mix(v, b[k], u - i)).join(",")})`;
}

const luminance = (color) => {
  const m = color.match(/\d+/g);
  if (color.startsWith("#")) return luminance(`rgb(${[1, 3, 5].map((k) => parseInt(color.slice(k, k + 2), 16))})`);
  return (0.299 * m[0] + 0.587 * m[1] + 0.114 * m[2]) / 255;
};

// Room around the region bands for the coordinates, in cell widths.
const COORD_PAD = 0.6;

// Row numbers beside each row's first and last cell; the letters (diagonals, climbing up and
// to the right from the bottom row) below the bottom row, down and left along their diagonal.
function drawCoordinates(root, geometry) {
  const rows = {};
  geometry.names.forEach((name, cell) => {
    const [, letters, digits] = name.match(/^([a-z]+)(\d+)$/);
    const [x, y] = geometry.centers[cell];
    const row = (rows[digits] = rows[digits] || { first: [x, y], last: [x, y] });
    if (x < row.first[0]) row.first = [x, y];
    if (x > row.last[0]) row.last = [x, y];
    if (digits === "1") {
      svg("text", { x: x - 0.58, y: -(y - 1.0), class: "coord" }, root).textContent = letters;
    }
  });
  for (const [digits, row] of Object.entries(rows)) {
    svg("text", { x: row.first[0] - 1.15, y: -row.first[1], class: "coord" }, root).textContent = digits;
    svg("text", { x: row.last[0] + 1.15, y: -row.last[1], class: "coord" }, root).textContent = digits;
  }
}

// Draw `position` (stones [K], winning_group, last_cell) on `root`, with an optional heatmap:
// heat = {values: [K] numbers or null, labels: [K] (a string, or {text, sub} for two lines) or
// null, marks: {cell: text}, range: [lo, hi] of the colour scale (optional),
// pv: [{cell, number, player}] the principal variation's stones, drawn small above the labels,
// best: the cell of the best candidate (outlined)}; numbers: {cell: move number} on the stones.
// Every cell is a button: focusable, Enter or Space plays it.
function drawBoard(root, geometry, position, heat, onCell, onHover, numbers) {
  const [xMin, xMax, yMin, yMax] = geometry.box;
  const pad = COORD_PAD;
  root.setAttribute("viewBox", `${xMin - pad} ${-yMax - pad / 2} ${xMax - xMin + 2 * pad} ${yMax - yMin + 1.5 * pad}`);
  root.replaceChildren();
  const palette = geometry.palette;
  geometry.bands.forEach((quads, region) => {
    for (const quad of quads) {
      svg("polygon", { points: points(quad), fill: palette.regions[region], class: "band" }, root);
    }
  });
  drawCoordinates(root, geometry);
  const winning = new Set(position.winning_group || []);
  const values = heat && heat.values;
  const finite = values ? values.filter((v) => v !== null && Number.isFinite(v)) : [];
  // The colours span heat.range where given (a probability's 0..1), else the values' own.
  const lo = heat && heat.range ? heat.range[0] : finite.length ? Math.min(...finite) : 0;
  const hi = heat && heat.range ? heat.range[1] : finite.length ? Math.max(...finite) : 1;
  const faces = [];
  geometry.corners.forEach((corners, cell) => {
    let face = palette.cell_face;
    if (values && values[cell] !== null && values[cell] !== undefined) {
      face = viridis(hi > lo ? (values[cell] - lo) / (hi - lo) : 1);
    } else if (winning.has(cell)) {
      face = palette.group_tints[String(position.stones[cell])];
    }
    faces.push(face);
    const hex = svg("polygon", {
      points: points(corners), fill: face, class: "cell",
      "data-cell": cell, "data-name": geometry.names[cell], id: `cell-${geometry.names[cell]}`,
    }, root);
    const stone = position.stones[cell];
    hex.setAttribute("tabindex", "0");
    hex.setAttribute("role", "button");
    hex.setAttribute("aria-label", `${geometry.names[cell]}: ${stone ? { 1: "blue", 2: "yellow" }[stone] : "empty"}`);
    svg("title", {}, hex).textContent = geometry.names[cell];
    hex.addEventListener("click", () => onCell(cell));
    hex.addEventListener("mouseenter", () => onHover(cell));
    hex.addEventListener("focus", () => onHover(cell));
    hex.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      onCell(cell);
    });
  });
  for (const cell of winning) {  // the winning group's outline: its cells' edges, thick
    svg("polygon", { points: points(geometry.corners[cell]), class: "win-edge" }, root);
  }
  if (heat && heat.best !== undefined && heat.best !== null) {  // the best candidate, outlined
    svg("polygon", { points: points(geometry.corners[heat.best]), class: "best", "data-name": geometry.names[heat.best] }, root);
  }
  const radius = 0.36;  // the same with or without a heatmap: labels go on empty cells
  position.stones.forEach((stone, cell) => {
    if (!stone) return;
    const [x, y] = geometry.centers[cell];
    svg("circle", {
      cx: x, cy: -y, r: radius, fill: palette.stones[String(stone)],
      stroke: palette.stone_edges[String(stone)], "stroke-width": 0.035, class: "stone",
      "data-stone": stone, "data-name": geometry.names[cell],
    }, root);
    if (numbers && numbers[cell] !== undefined) {
      const fill = luminance(palette.stones[String(stone)]) > 0.5 ? "#1a1a1a" : "white";
      svg("text", { x, y: -y, fill, class: "move-number" }, root).textContent = String(numbers[cell]);
    }
  });
  if (position.last_cell !== null && position.last_cell !== undefined) {
    const cell = position.last_cell;
    const [x, y] = geometry.centers[cell];
    const stone = position.stones[cell];
    svg("circle", {
      cx: x, cy: -y, r: stone ? 0.72 * radius : 0.3, fill: "none", class: "ring",
      stroke: { 0: "#d0021b", 1: "white", 2: "#222222" }[stone], "stroke-width": 0.05,
    }, root);
  }
  const pvCells = new Set();
  for (const step of (heat && heat.pv) || []) {  // small numbered stones in the upper part
    if (pvCells.has(step.cell) || position.stones[step.cell]) continue;
    pvCells.add(step.cell);
    const [x, y] = geometry.centers[step.cell];
    svg("circle", {
      cx: x, cy: -y - 0.25, r: 0.17, fill: palette.stones[String(step.player)],
      stroke: palette.stone_edges[String(step.player)], "stroke-width": 0.03, class: "pv",
      "data-name": geometry.names[step.cell], "data-number": step.number,
    }, root);
    const number = svg("text", { x, y: -y - 0.25, class: "pv-number", fill: luminance(palette.stones[String(step.player)]) > 0.5 ? "#1a1a1a" : "white" }, root);
    number.textContent = String(step.number);
  }
  const labels = (heat && heat.labels) || [];
  const marks = (heat && heat.marks) || {};
  geometry.centers.forEach(([x, y], cell) => {
    let label = marks[cell] !== undefined ? marks[cell] : labels[cell];
    if (label === undefined || label === null || label === "") return;
    if (numbers && numbers[cell] !== undefined) return;  // the stone's number is there
    if (typeof label !== "object") label = { text: String(label) };
    const stone = position.stones[cell];
    const under = stone ? palette.stones[String(stone)] : faces[cell];
    const fill = luminance(under) > 0.5 ? "#1a1a1a" : "white";
    const low = pvCells.has(cell) ? 0.12 : label.sub ? -0.06 : 0;  // below a line stone
    const node = svg("text", { x, y: -y + low, fill }, root);
    if (marks[cell] !== undefined) node.setAttribute("font-weight", "bold");
    node.textContent = label.text;
    if (label.sub) svg("text", { x, y: -y + low + 0.24, fill, class: "sub" }, root).textContent = label.sub;
  });
}
