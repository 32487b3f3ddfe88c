// The pog dashboard: polls the node's /api/v1 every few seconds and draws
// tables and SVG charts. A token, if the API needs one, comes from the
// page's #token=... fragment (never sent to the server in the URL).
"use strict";

const token = new URLSearchParams(location.hash.slice(1)).get("token");
const palette = ["#3b6fd8", "#d8843b", "#3bd88a", "#a13bd8", "#d83b5e", "#8a8f3b", "#3bbad8", "#6b4f2a"];
const svgNS = "http://www.w3.org/2000/svg";
let own = "";

async function get(path) {
  const headers = token ? { Authorization: "Bearer " + token } : {};
  const r = await fetch(path, { headers });
  if (r.status === 404) return null;
  if (!r.ok) throw new Error(path + ": " + r.status + " " + (await r.text()));
  return r.json();
}

const short = (id) => (id && id.length > 10 ? "…" + id.slice(-8) : id || "");
const el = (id) => document.getElementById(id);

function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
}

// fill renders rows into a table's body; an empty table says "none"
// rather than showing nothing.
function fill(tableId, rows, render) {
  const table = el(tableId);
  const body = table.tBodies[0];
  body.replaceChildren();
  if (rows.length === 0) {
    const tr = document.createElement("tr");
    tr.className = "none";
    cell(tr, "none");
    tr.cells[0].colSpan = table.tHead.rows[0].cells.length;
    body.appendChild(tr);
    return;
  }
  for (const r of rows) {
    const tr = document.createElement("tr");
    render(tr, r);
    body.appendChild(tr);
  }
}

function duration(s) {
  s = Math.floor(s);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return (h ? h + "h " : "") + (h || m ? m + "m " : "") + (s % 60) + "s";
}

function showStatus(st) {
  own = st.peer_id;
  el("role").textContent = st.role;
  el("peer-id").textContent = st.peer_id;
  el("version").textContent = st.version;
  el("uptime").textContent = duration(st.uptime_s);
  el("epoch").textContent = st.epoch + " (ends " + new Date(st.epoch_end).toLocaleTimeString() + ")";
  el("own").textContent = st.own_weight
    ? st.own_weight.weight.toFixed(4) + " (incentive " + st.own_weight.incentive.toFixed(4) + ", epoch " + st.own_weight.epoch + ")"
    : "–";
  el("queue").textContent = st.queue_length;
  // Weights, queues and own rounds are a miner's; round evidence a validator's.
  for (const e of document.querySelectorAll(".miner-only")) e.hidden = st.role !== "miner";
  for (const e of document.querySelectorAll(".validator-only")) e.hidden = st.role === "miner";
  const ws = el("warnings");
  ws.replaceChildren();
  for (const w of st.warnings) {
    const li = document.createElement("li");
    li.textContent = w;
    ws.appendChild(li);
  }
  fill("challenges", st.challenges.slice().reverse(), (tr, c) => {
    cell(tr, c.epoch);
    cell(tr, c.round);
    cell(tr, short(c.validator), "id");
    cell(tr, new Date(c.received).toLocaleTimeString());
  });
  fill("peers", st.peers, (tr, p) => {
    cell(tr, short(p.id), "id");
    cell(tr, p.addr);
    cell(tr, p.score.toFixed(2));
    cell(tr, p.validator ? "yes" : "");
  });
}

function showRounds(rounds, epoch) {
  let cur = rounds.filter((r) => r.epoch === epoch);
  let label = "epoch " + epoch;
  if (cur.length === 0 && rounds.length > 0) {
    // Early in an epoch: show the last one that has rounds.
    const last = rounds[rounds.length - 1].epoch;
    cur = rounds.filter((r) => r.epoch === last);
    label = "epoch " + last + " (none yet in " + epoch + ")";
  }
  el("rounds-epoch").textContent = label;
  fill("rounds", cur.slice().reverse(), (tr, r) => {
    if (r.verdict !== "verified") tr.className = "failed";
    if (r.miner === own) tr.classList.add("own");
    cell(tr, r.epoch);
    cell(tr, r.round);
    cell(tr, short(r.miner), "id");
    cell(tr, short(r.validator), "id");
    cell(tr, r.verdict);
    cell(tr, r.tflops.toExponential(3));
    cell(tr, r.commit_ms.toFixed(1));
    cell(tr, r.reason || "");
  });
  showDetections(rounds);
}

// showDetections lists the latest failed rounds.
function showDetections(rounds) {
  const failed = rounds.filter((r) => r.verdict !== "verified").slice(-20).reverse();
  fill("detections", failed, (tr, r) => {
    tr.className = "failed";
    cell(tr, r.epoch);
    cell(tr, r.round);
    cell(tr, short(r.miner), "id");
    cell(tr, r.reason || "");
  });
}

function svg(tag, attrs, parent) {
  const e = document.createElementNS(svgNS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

// plot draws series [{name, points: [[x, y]...], color, width}] in chart.
function plot(chart, series, xfmt) {
  chart.replaceChildren();
  const pts = series.flatMap((s) => s.points);
  if (pts.length === 0) {
    svg("text", { x: 320, y: 110, "text-anchor": "middle" }, chart).textContent = "no data yet";
    return;
  }
  const W = 640, H = 220, L = 50, B = 20;
  let [x0, x1] = [Math.min(...pts.map((p) => p[0])), Math.max(...pts.map((p) => p[0]))];
  let y1 = Math.max(...pts.map((p) => p[1]));
  if (x1 === x0) x1 = x0 + 1;
  if (!(y1 > 0)) y1 = 1;
  const X = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - 10);
  const Y = (y) => H - B - (y / y1) * (H - B - 10);
  svg("line", { x1: L, y1: H - B, x2: W - 10, y2: H - B, class: "axis" }, chart);
  svg("line", { x1: L, y1: 10, x2: L, y2: H - B, class: "axis" }, chart);
  svg("text", { x: L - 4, y: 14, "text-anchor": "end" }, chart).textContent = y1.toPrecision(3);
  svg("text", { x: L - 4, y: H - B, "text-anchor": "end" }, chart).textContent = "0";
  svg("text", { x: L, y: H - 4 }, chart).textContent = xfmt(x0);
  svg("text", { x: W - 10, y: H - 4, "text-anchor": "end" }, chart).textContent = xfmt(x1);
  for (const s of series) {
    const d = s.points.map((p, i) => (i ? "L" : "M") + X(p[0]).toFixed(1) + "," + Y(p[1]).toFixed(1)).join(" ");
    svg("path", { d, fill: "none", stroke: s.color, "stroke-width": s.width }, chart);
    for (const p of s.points) svg("circle", { cx: X(p[0]), cy: Y(p[1]), r: s.width + 0.5, fill: s.color }, chart);
  }
}

function showWeights(history) {
  const miners = [...new Set(history.flatMap((h) => Object.keys(h.miners)))].sort();
  const series = miners.map((m, i) => ({
    name: m,
    color: m === own ? "#d83b5e" : palette[i % palette.length],
    width: m === own ? 3 : 1.2,
    points: history.filter((h) => m in h.miners).map((h) => [h.epoch, h.miners[m]]),
  }));
  plot(el("weights-chart"), series, (x) => "epoch " + x);
  const legend = el("weights-legend");
  legend.replaceChildren();
  for (const s of series) {
    const span = document.createElement("span");
    span.style.color = s.color;
    span.textContent = (s.name === own ? "● you " : "● ") + short(s.name);
    legend.appendChild(span);
  }
}

const clock = (x) => new Date(x).toLocaleTimeString();
const tf = (x) => x.toPrecision(3);

// showTFLOPS: a validator's measurements of each miner.
function showTFLOPS(rounds) {
  const byMiner = {};
  for (const r of rounds) {
    if (r.verdict !== "verified" || !r.sent_unix_ms) continue;
    (byMiner[r.miner] ||= []).push([r.sent_unix_ms, r.tflops]);
  }
  const series = Object.keys(byMiner).sort().map((m, i) => ({
    name: m,
    color: m === own ? "#d83b5e" : palette[i % palette.length],
    width: m === own ? 2.5 : 1,
    points: byMiner[m],
  }));
  plot(el("tflops-chart"), series, clock);
  el("tflops-summary").textContent = series.length ? series.length + " miners measured" : "";
}

// ownTFLOPSColor draws a miner's own measurements, in no other chart.
const ownTFLOPSColor = "#1a9e6a";

// showOwnTFLOPS: the validators' measurements of this miner's rounds.
function showOwnTFLOPS(rounds) {
  const ok = rounds.filter((r) => r.verdict === "verified");
  const points = ok.map((r) => [Date.parse(r.at), r.tflops]);
  plot(el("tflops-chart"), [{ name: own, color: ownTFLOPSColor, width: 2.5, points }], clock);
  const last = ok[ok.length - 1];
  const sorted = ok.map((r) => r.tflops).sort((a, b) => a - b);
  el("tflops-summary").textContent = last
    ? "latest " + tf(last.tflops) + " TFLOPS (round " + last.round + ", validator " + short(last.validator) + "); median " +
      tf(sorted[Math.floor(sorted.length / 2)]) + " over " + ok.length + " verified rounds"
    : "none yet: no verified round since this node started";
}

// showOwnRounds: a miner's rounds as its validators reported them.
function showOwnRounds(rounds) {
  const count = (v) => rounds.filter((r) => r.verdict === v).length;
  el("own-summary").textContent = rounds.length + " since start: " + count("verified") + " verified, " + count("failed") +
    " failed, " + count("abandoned") + " abandoned";
  fill("own-rounds", rounds.slice(-50).reverse(), (tr, r) => {
    if (r.verdict !== "verified") tr.className = "failed";
    cell(tr, clock(r.at));
    cell(tr, r.epoch);
    cell(tr, r.round + (r.probe ? " (probe)" : ""));
    cell(tr, short(r.validator), "id");
    cell(tr, r.verdict);
    cell(tr, r.verdict === "verified" ? tf(r.tflops) : "");
    cell(tr, r.verdict === "verified" ? tf(r.peak_tflops) : "");
    cell(tr, r.reason || "");
  });
  showDetections(rounds.map((r) => ({ ...r, miner: own })));
}

// showHostRounds: the host rounds validators opened with this miner.
function showHostRounds(hosts) {
  fill("host-rounds", hosts.slice(-20).reverse(), (tr, h) => {
    if (!h.served) tr.className = "failed";
    cell(tr, clock(h.at));
    cell(tr, short(h.validator), "id");
    cell(tr, h.kind || "?");
    cell(tr, h.chains + " × " + h.steps);
    cell(tr, h.served ? h.prove_ms.toFixed(0) : "");
    cell(tr, h.root_by_ms.toFixed(0));
    cell(tr, h.served ? "served" : h.error);
  });
}

// showScore: this miner's breakdown where this node's store has the
// evidence (a validator's), and each validator's weight of it from the
// epoch records every node stores.
async function showScore() {
  const score = await get("api/v1/miners/" + own + "/score");
  el("score-none").hidden = score !== null;
  el("score-epoch").textContent = score
    ? "epoch " + score.epoch + " of " + short(score.validator) + "'s evidence: total " + tf(score.total)
    : "";
  fill("score-parts", score ? score.parts : [], (tr, p) => {
    cell(tr, p.name);
    cell(tr, tf(p.value));
    cell(tr, tf(p.weight));
    cell(tr, tf(p.availability));
    cell(tr, tf(p.penalty));
    cell(tr, tf(p.contribution));
    cell(tr, p.note || "");
  });
  const w = await get("api/v1/weights");
  const mine = w && w.miners.find((m) => m.miner === own);
  el("own-weights-epoch").textContent = mine
    ? "epoch " + w.epoch + ": consensus " + mine.consensus.toFixed(4) + ", incentive " + mine.incentive.toFixed(4)
    : "";
  fill("own-weights", mine ? Object.entries(mine.validators).sort() : [], (tr, [v, x]) => {
    cell(tr, short(v), "id");
    cell(tr, x.toFixed(4));
  });
}

// Weights change once per epoch, and recomputing them replays every
// record: refresh them when the epoch changes or every tenth poll.
let historyEpoch = -1, polls = 0;

async function refresh() {
  try {
    const st = await get("api/v1/status");
    showStatus(st);
    const miner = st.role === "miner";
    if (miner) {
      // A miner keeps no round evidence: its rounds are what validators told it.
      const mine = await get("api/v1/own/rounds");
      showOwnRounds(mine.rounds);
      showOwnTFLOPS(mine.rounds);
      showHostRounds(mine.host_rounds);
    } else {
      const rounds = (await get("api/v1/rounds?since=" + Math.max(0, st.epoch - 20))) || [];
      showRounds(rounds, st.epoch);
      showTFLOPS(rounds);
    }
    if (st.epoch !== historyEpoch || polls++ % 10 === 0) {
      showWeights((await get("api/v1/weights/history?last=30")) || []);
      if (miner) await showScore();
      historyEpoch = st.epoch;
    }
    el("error").hidden = true;
    document.body.dataset.loaded = "1";
  } catch (e) {
    el("error").textContent = String(e);
    el("error").hidden = false;
  }
}

refresh();
setInterval(refresh, 3000);
