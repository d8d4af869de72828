// rnnsearch-serve's page: translates the sentence as it is typed (POST translate) and draws the
// soft alignment of the chosen hypothesis as Figure 3 does: source words along the top, target
// words down the left, alpha_ij in grayscale (0 black, 1 white), the weight shown on hover. A
// model with an alignment head (alignment.by "head") gets the head's links drawn on the attention's
// heatmap: an outlined cell for each target word's largest a_ij (its heatmap where it has no attention).
// Plain JavaScript and inline SVG: nothing is loaded from anywhere but this server. Text in the
// model's languages carries its language (lang) and is shown in its own direction (dir="auto");
// words quoted inside the page's English are bidi-isolated (U+2068 ... U+2069).
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const CELL = 28; // pixels per word along each axis
const CHARACTER = 7.5; // pixels per character of a label (13px font)
const GAP = 6; // pixels between labels and cells
const DELAY = 250; // milliseconds of quiet typing before translating

const state = { health: null, result: null, chosen: 0, latest: 0, timer: null };
const $ = (id) => document.getElementById(id);
const isolated = (word) => `\u2068${word}\u2069`; // first-strong isolate: an RTL word keeps the sentence in order

function languageName(code) {
  try {
    return new Intl.DisplayNames(["en"], { type: "language" }).of(code);
  } catch {
    return code; // not a language code Intl knows
  }
}

async function call(path, body) {
  const options = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || `${response.status} ${response.statusText}`);
  return data;
}

function element(name, attributes, parent, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

function showError(message) {
  $("error").textContent = message || "";
  $("error").hidden = !message;
}

function schedule() {
  clearTimeout(state.timer);
  state.timer = setTimeout(translate, DELAY);
}

async function translate() {
  const sentence = $("sentence").value.replace(/\s+/g, " ").trim();
  const request = ++state.latest;
  if (!sentence) {
    state.result = null;
    render();
    $("status").textContent = "";
    return;
  }
  $("status").textContent = "translating\u2026";
  const beam = Number($("beam").value), nbest = Math.min(Number($("nbest").value), beam);
  try {
    const data = await call("translate", { sentences: [sentence], beam, nbest });
    if (request !== state.latest) return; // a newer sentence is on its way
    state.result = data.translations[0];
    state.chosen = 0;
    showError("");
    render();
    $("status").textContent = "";
  } catch (error) {
    if (request !== state.latest) return;
    $("status").textContent = "";
    showError(error.message);
  }
}

function render() {
  const list = $("hypotheses");
  list.replaceChildren();
  const hypotheses = state.result ? state.result.hypotheses : [];
  hypotheses.forEach((hypothesis, index) => {
    const item = document.createElement("li");
    item.className = "hypothesis" + (index === state.chosen ? " chosen" : "");
    item.innerHTML = '<span class="score"></span> <span class="translation" dir="auto"></span>';
    item.querySelector(".score").textContent = hypothesis.score.toFixed(3);
    item.querySelector(".translation").textContent = hypothesis.translation;
    item.querySelector(".translation").lang = state.health.target.language;
    item.addEventListener("click", () => { state.chosen = index; render(); });
    list.appendChild(item);
  });
  const chosen = hypotheses[state.chosen];
  drawHeatmap(chosen ? chosen.alignment : null);
}

// the alignment's legend: what the gray is, and what the outlined cells are
function legend(alignment) {
  if (alignment.by !== "head") return "";
  const gray = alignment.attention ? "Gray: the attention\u2019s \u03b1" : "Gray: the alignment head\u2019s a";
  return `${gray}. <span class="link-key"></span> Outlined: the alignment head\u2019s links, ` +
    "for each target word the source word of its largest a (the links rnnsearch-align prints).";
}

// the column of each row's largest weight
const argmax = (rows) => rows.map((row) => row.reduce((best, weight, j) => (weight > row[best] ? j : best), 0));

function drawHeatmap(alignment) {
  const box = $("heatmap");
  box.replaceChildren();
  $("readout").textContent = alignment ? "Hover over a cell to read its weight." : "";
  $("legend").innerHTML = alignment ? legend(alignment) : "";
  $("legend").hidden = !$("legend").innerHTML;
  if (!alignment) return;
  const { source, target } = alignment;
  const weights = alignment.attention || alignment.weights; // the heatmap: alpha, or a head's a without attention
  const symbol = alignment.attention || alignment.by !== "head" ? "\u03b1" : "a";
  const longest = (words) => Math.max(...words.map((word) => word.length));
  const left = GAP * 2 + CHARACTER * longest(target), top = GAP * 2 + CHARACTER * longest(source);
  const root = element("svg", {
    width: left + CELL * source.length + GAP, height: top + CELL * target.length + GAP,
    role: "img", "aria-label": "soft alignment: source words along the top, target words down the left",
  }, box);
  const languages = { source: state.health.source.language, target: state.health.target.language };
  source.forEach((word, j) => {
    const x = left + CELL * (j + 0.5), y = top - GAP;
    element("text", { class: "source-label", x, y, transform: `rotate(-90 ${x} ${y})`,
                      "dominant-baseline": "middle", lang: languages.source }, root, word);
  });
  target.forEach((word, i) => {
    element("text", { class: "target-label", x: left - GAP, y: top + CELL * (i + 0.5), "text-anchor": "end",
                      "dominant-baseline": "middle", lang: languages.target }, root, word);
  });
  weights.forEach((row, i) => row.forEach((weight, j) => {
    const gray = Math.max(0, Math.min(255, Math.round(255 * weight)));
    const cell = element("rect", {
      class: "cell", x: left + CELL * j, y: top + CELL * i, width: CELL, height: CELL,
      fill: `rgb(${gray}, ${gray}, ${gray})`, "data-row": i, "data-col": j, "data-weight": weight,
    }, root);
    element("title", {}, cell, `${isolated(target[i])} \u2190 ${isolated(source[j])}: ${weight.toFixed(3)}`);
    const head = alignment.attention ? `, the head\u2019s a = ${alignment.weights[i][j].toFixed(3)}` : "";
    cell.addEventListener("mouseenter", () => {
      root.querySelectorAll("rect.hover").forEach((other) => other.classList.remove("hover"));
      cell.classList.add("hover");
      $("readout").textContent = `${symbol} = ${weight.toFixed(3)}${head}: target word ${i + 1} \u201c${isolated(target[i])}\u201d ` +
        `${alignment.by === "head" ? "and" : "attending to"} source word ${j + 1} \u201c${isolated(source[j])}\u201d`;
    });
  }));
  if (alignment.by !== "head") return;
  argmax(alignment.weights).forEach((j, i) => {
    element("rect", { class: "link", x: left + CELL * j + 1.5, y: top + CELL * i + 1.5, width: CELL - 3, height: CELL - 3,
                      "data-row": i, "data-col": j }, root);
  });
}

async function start() {
  try {
    state.health = await call("health");
  } catch (error) {
    showError(`the server does not answer: ${error.message}`);
    return;
  }
  const { architecture, source, target, limits, attention, aligned_by: alignedBy } = state.health;
  const aligns = alignedBy === "head" ? ", with an alignment head" : attention ? "" : ": an RNNencdec model, which has no attention to show";
  $("model").textContent = `${architecture}, ${languageName(source.language)} \u2192 ${languageName(target.language)} ` +
    `(${source.language} \u2192 ${target.language}; ${source.size.toLocaleString()} and ` +
    `${target.size.toLocaleString()} subword types)` + aligns;
  $("sentence").lang = source.language;
  $("sentence").placeholder = `Type a sentence in ${languageName(source.language)}`;
  $("beam").max = limits.max_beam;
  $("nbest").max = limits.max_beam;
  for (const id of ["sentence", "beam", "nbest"]) $(id).addEventListener("input", schedule);
  const query = new URLSearchParams(window.location.search);
  for (const id of ["beam", "nbest"]) if (query.has(id)) $(id).value = query.get(id);
  if (query.has("q")) {
    $("sentence").value = query.get("q");
    translate();
  }
}

document.addEventListener("DOMContentLoaded", start);
