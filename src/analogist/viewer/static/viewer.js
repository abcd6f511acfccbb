// analogist mapping viewer: plain JS, no build step, no network beyond this server.
"use strict";

(function () {
  const API = "/viewer/api";
  const params = new URLSearchParams(window.location.search);
  const namespace = params.get("namespace") || "default";
  const $ = (id) => document.getElementById(id);
  let current = null;            // the last /api/map payload
  let elems = { source: new Map(), target: new Map() };  // key -> element

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function showError(msg) {
    const p = $("error");
    p.textContent = msg;
    p.hidden = !msg;
  }

  async function getJSON(url) {
    const r = await fetch(url, { headers: { Accept: "application/json" } });
    let body = null;
    try { body = await r.json(); } catch (e) { body = null; }
    if (!r.ok) {
      const d = body && body.detail;
      throw new Error(typeof d === "string" ? d : (r.status + " " + r.statusText));
    }
    return body;
  }

  function q(obj) {
    const u = new URLSearchParams(obj);
    if (namespace !== "default") u.set("namespace", namespace);
    return u.toString();
  }

  // -- pickers ---------------------------------------------------------------------------
  function fillSelect(sel, rows, label) {
    sel.textContent = "";
    for (const r of rows) sel.appendChild(el("option", { value: r.id }, label(r)));
  }

  function defaultPair(entries) {
    const byMech = new Map();
    for (const e of entries) {
      if (!e.mechanism || e.decoy_of) continue;
      if (!byMech.has(e.mechanism)) byMech.set(e.mechanism, []);
      byMech.get(e.mechanism).push(e.id);
    }
    for (const ids of byMech.values()) if (ids.length >= 2) return [ids[0], ids[1]];
    return entries.length >= 2 ? [entries[0].id, entries[1].id] : [null, null];
  }

  // -- the two descriptions --------------------------------------------------------------
  function renderSide(side, d, matched) {
    const box = $("side-" + side);
    box.textContent = "";
    elems[side] = new Map();
    box.appendChild(el("h3", {}, side + ": " + d.id + (d.kind ? " (" + d.kind + ")" : "")));
    const groups = [["entities", d.entities.map((e) => ({ ...e, elemKind: "entity" }))]];
    const maxOrder = Math.max(1, ...d.expressions.map((x) => x.order));
    for (let o = 1; o <= maxOrder; o++) {
      const xs = d.expressions.filter((x) => x.order === o).map((x) => ({ ...x, elemKind: "expression" }));
      if (xs.length) groups.push([o === 1 ? "relations and attributes" : "order " + o + " (causal and higher-order)", xs]);
    }
    groups.forEach(([title, items]) => {
      const g = el("div", { class: "group" });
      g.appendChild(el("div", { class: "group-title" }, title));
      for (const it of items) {
        const isMatched = matched.has(it.elemKind + "\u0000" + it.key);
        const cls = ["elem", it.elemKind, isMatched ? "matched" : "unmatched"];
        if (it.elemKind === "expression") cls.push("order-" + it.order, "kind-" + it.kind);
        const div = el("div", {
          class: cls.join(" "),
          "data-side": side,
          "data-kind": it.elemKind,
          "data-key": it.key,
          "data-matched": isMatched ? "1" : "0",
        });
        if (it.elemKind === "entity") {
          div.appendChild(document.createTextNode(it.name));
          if (it.role) div.appendChild(el("span", { class: "role" }, it.role));
        } else {
          div.textContent = it.key;
          if (it.top_level) div.setAttribute("data-top-level", "1");
        }
        g.appendChild(div);
        elems[side].set(it.elemKind + "\u0000" + it.key, div);
      }
      box.appendChild(g);
    });
  }

  function drawLines() {
    const svg = $("links");
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    if (!current) return;
    const c = $("mapping").getBoundingClientRect();
    svg.setAttribute("width", String(c.width));
    svg.setAttribute("height", String(c.height));
    svg.setAttribute("viewBox", "0 0 " + c.width + " " + c.height);
    for (const p of current.correspondences) {
      const s = elems.source.get(p.kind + "\u0000" + p.source);
      const t = elems.target.get(p.kind + "\u0000" + p.target);
      if (!s || !t) continue;
      const a = s.getBoundingClientRect();
      const b = t.getBoundingClientRect();
      const line = document.createElementNS("http://www.w3.org/2000/svg", "line");
      line.setAttribute("x1", String(a.right - c.left));
      line.setAttribute("y1", String(a.top + a.height / 2 - c.top));
      line.setAttribute("x2", String(b.left - c.left));
      line.setAttribute("y2", String(b.top + b.height / 2 - c.top));
      line.setAttribute("class", p.kind);
      line.setAttribute("data-kind", p.kind);
      line.setAttribute("data-source", p.source);
      line.setAttribute("data-target", p.target);
      const title = document.createElementNS("http://www.w3.org/2000/svg", "title");
      title.textContent = p.source + " \u2194 " + p.target;
      line.appendChild(title);
      svg.appendChild(line);
      for (const x of [s, t]) {
        x.addEventListener("mouseenter", () => { line.classList.add("hover"); s.classList.add("hover"); t.classList.add("hover"); });
        x.addEventListener("mouseleave", () => { line.classList.remove("hover"); s.classList.remove("hover"); t.classList.remove("hover"); });
      }
    }
  }

  // -- report ----------------------------------------------------------------------------
  function renderReport(r, inferences) {
    const tb = document.querySelector("#ldu-table tbody");
    tb.textContent = "";
    const row = (kind, s, t) => {
      const tr = el("tr", { class: kind, "data-kind": kind });
      tr.appendChild(el("td", {}, kind));
      tr.appendChild(el("td", {}, s));
      tr.appendChild(el("td", {}, t));
      tb.appendChild(tr);
    };
    for (const [s, t] of r.likenesses) row("likeness", s, t);
    for (const [s, t] of r.differences) row("difference", s, t);
    for (const u of r.unknowns) row("unknown", u, "(unknown in target)");

    const tr = $("transfer");
    tr.textContent = "";
    tr.setAttribute("data-verdict", r.verdict);
    tr.appendChild(el("p", {}, "verdict: " + r.verdict + " \u00b7 score " + r.score.toFixed(3) +
      " (normalized " + r.normalized_score.toFixed(3) + ") \u00b7 " + Math.round(100 * r.coverage) +
      "% of the source's relations and edges mapped"));
    tr.appendChild(el("p", {}, r.mechanism
      ? "mechanism: " + r.mechanism + " \u2192 " + (r.transfer_mechanism ? "transfer" : "do NOT transfer")
      : "mechanism: none stated in the source"));
    const ul = el("ul", { id: "conclusions" });
    for (const c of r.conclusions) {
      ul.appendChild(el("li", { "data-status": c.status },
        c.projected + " \u2192 " + c.status + (c.reasons.length ? " (" + c.reasons.join("; ") + ")" : "")));
    }
    tr.appendChild(ul);
    if (r.blockers.length) tr.appendChild(el("p", {}, "blockers: " + r.blockers.join("; ")));
    if (r.prediction) tr.appendChild(el("p", {}, "predict: " + r.prediction.observable + " \u2014 check: " + r.prediction.check));

    const inf = $("inferences");
    inf.textContent = "";
    for (const ci of inferences) {
      inf.appendChild(el("li", { "data-sexpr": ci.sexpr }, ci.sexpr + "   \u2190 " + ci.base));
    }
    if (!inferences.length) inf.appendChild(el("li", { class: "none" }, "none"));
  }

  async function loadMap(source, target) {
    document.body.setAttribute("data-state", "loading");
    $("mapping").setAttribute("data-state", "loading");
    showError("");
    try {
      current = await getJSON(API + "/map?" + q({ source, target }));
    } catch (e) {
      current = null;
      showError(e.message);
      $("mapping").setAttribute("data-state", "error");
      document.body.setAttribute("data-state", "error");
      return;
    }
    const ms = new Set(), mt = new Set();
    for (const p of current.correspondences) {
      ms.add(p.kind + "\u0000" + p.source);
      mt.add(p.kind + "\u0000" + p.target);
    }
    const sm = $("summary");
    sm.textContent = "";
    sm.appendChild(el("div", { class: "gist" }, "source \u2014 " + current.source.gist));
    sm.appendChild(el("div", { class: "gist" }, "target \u2014 " + current.target.gist));
    renderSide("source", current.source, ms);
    renderSide("target", current.target, mt);
    renderReport(current.report, current.inferences);
    drawLines();
    $("mapping").setAttribute("data-state", "ready");
    $("mapping").setAttribute("data-source", current.source.id);
    $("mapping").setAttribute("data-target", current.target.id);
    document.body.setAttribute("data-state", "ready");
  }

  // -- foresight brief -------------------------------------------------------------------
  async function loadBrief(event) {
    const box = $("brief");
    box.setAttribute("data-state", "loading");
    box.textContent = "running the reflective loop\u2026";
    let b;
    try {
      b = await getJSON(API + "/brief?" + new URLSearchParams({ event }).toString());
    } catch (e) {
      box.textContent = e.message;
      box.setAttribute("data-state", "error");
      return;
    }
    box.textContent = "";
    const t = b.brief.target || {};
    box.appendChild(el("p", {}, "target: " + (t.name || b.event) + " \u00b7 stop: " + b.brief.stop_reason));
    const preds = b.brief.predicted_hidden_factors || [];
    const ul = el("ul", { class: "factors" });
    for (const p of preds.slice(0, 8)) {
      const pos = p.position || (p.hypothesis && p.hypothesis[0]) || "";
      const mech = p.mechanism || (p.hypothesis && p.hypothesis[1]) || "";
      const post = p.posterior !== undefined ? " (posterior " + Number(p.posterior).toFixed(3) + ")" : "";
      ul.appendChild(el("li", {}, pos + " \u00b7 " + mech + post));
    }
    if (preds.length) { box.appendChild(el("p", {}, "predicted hidden factors:")); box.appendChild(ul); }
    if (b.chart_png_base64) {
      const img = el("img", { id: "coverage-chart", alt: "coverage chart for " + b.event, "data-event": b.event });
      img.addEventListener("load", () => box.setAttribute("data-state", "ready"));
      img.addEventListener("error", () => box.setAttribute("data-state", "error"));
      img.src = "data:image/png;base64," + b.chart_png_base64;
      box.appendChild(img);
    } else {
      box.appendChild(el("p", {}, "no chart: " + b.chart_note));
      box.setAttribute("data-state", "ready");
    }
  }

  // -- start -----------------------------------------------------------------------------
  async function start() {
    let list;
    try {
      list = await getJSON(API + "/casebook?" + q({}));
    } catch (e) {
      showError(e.message);
      document.body.setAttribute("data-state", "error");
      return;
    }
    const label = (r) => r.id + (r.mechanism ? "  [" + r.mechanism + (r.decoy_of ? ", decoy" : "") + "]" : "");
    fillSelect($("source-select"), list.entries, label);
    fillSelect($("target-select"), list.entries, label);
    let [s, t] = defaultPair(list.entries);
    s = params.get("source") || s;
    t = params.get("target") || t;
    if (s) $("source-select").value = s;
    if (t) $("target-select").value = t;
    $("pick").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const u = new URLSearchParams(window.location.search);
      u.set("source", $("source-select").value);
      u.set("target", $("target-select").value);
      history.replaceState(null, "", "?" + u.toString());
      loadMap($("source-select").value, $("target-select").value);
    });
    $("brief-pick").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const u = new URLSearchParams(window.location.search);
      u.set("event", $("event-select").value);
      history.replaceState(null, "", "?" + u.toString());
      loadBrief($("event-select").value);
    });
    window.addEventListener("resize", drawLines);
    getJSON(API + "/events").then((ev) => {
      fillSelect($("event-select"), ev.events, (r) => r.id + " \u2014 " + r.name);
      const e = params.get("event");
      if (e) { $("event-select").value = e; loadBrief(e); }
    }).catch((e) => { $("brief").textContent = e.message; });
    if (s && t) await loadMap(s, t);
    else document.body.setAttribute("data-state", "ready");
  }

  start();
})();
