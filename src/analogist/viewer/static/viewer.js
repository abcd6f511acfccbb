// analogist mapping viewer: plain JS, no build step, no network beyond this server.
"use strict";

(function () {
  const API = "/viewer/api";
  const SESSION = "/viewer/session";
  const params = new URLSearchParams(window.location.search);
  let namespace = params.get("namespace") || "default";
  let session = null;            // the signed-in session (null: signed out, or no sign-in here)
  let generation = 0;            // bumped at sign-out: late answers of an old session are dropped
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

  class HttpError extends Error {
    constructor(status, message) { super(message); this.status = status; }
  }

  function messageOf(r, body) {
    if (body && body.error && typeof body.error.message === "string") return body.error.message;
    if (body && typeof body.detail === "string") return body.detail;
    return r.status + " " + r.statusText;
  }

  async function request(method, url, payload, extraHeaders) {
    const headers = { Accept: "application/json", ...(extraHeaders || {}) };
    const init = { method, headers, credentials: "same-origin" };
    if (payload !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(payload);
    }
    const r = await fetch(url, init);
    let body = null;
    try { body = await r.json(); } catch (e) { body = null; }
    if (!r.ok) throw new HttpError(r.status, messageOf(r, body));
    return body;
  }

  async function getJSON(url) {
    const gen = generation;
    try {
      const body = await request("GET", url);
      if (gen !== generation) throw new HttpError(401, "signed out");
      return body;
    } catch (e) {
      if (e.status === 401 && session) signedOut("your session ended (expired, signed out or "
        + "the key was revoked); sign in again");
      throw e;
    }
  }

  function q(obj) {
    const u = new URLSearchParams(obj);
    if (session || namespace !== "default") u.set("namespace", namespace);
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
    tr.appendChild(el("p", {}, "verdict: " + r.verdict + " \u00b7 similarity " +
      r.similarity.toFixed(3) + " (normalized structural score; raw SES " + r.raw_ses.toFixed(3) +
      ") \u00b7 " + Math.round(100 * r.coverage) + "% of the source's relations and edges mapped"));
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
      if (e.status === 401) return;   // signed out meanwhile: the sign-in form is showing
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
      if (e.status === 401) return;
      box.textContent = e.message;
      box.setAttribute("data-state", "error");
      return;
    }
    box.textContent = "";
    const t = b.brief.target || {};
    box.appendChild(el("p", {}, "target: " + (t.name || b.event) + " \u00b7 stop: " + b.brief.stop_reason));
    const hyp = (h) => (h.position || "") + " / " + (h.mechanism || "");
    const num = (x) => (x === undefined || x === null) ? "" : Number(x).toFixed(3);
    function table(id, rows, cols) {
      const tbl = el("table", { id, class: "hypotheses" });
      const head = el("tr");
      for (const [title] of cols) head.appendChild(el("th", {}, title));
      tbl.appendChild(el("thead")).appendChild(head);
      const tb = tbl.appendChild(el("tbody"));
      for (const r of rows) {
        const tr = el("tr", { "data-position": r.position || "", "data-mechanism": r.mechanism || "" });
        for (const [, f] of cols) tr.appendChild(el("td", {}, f(r)));
        tb.appendChild(tr);
      }
      return tbl;
    }
    const cols = [["hypothesis", hyp], ["posterior", (r) => num(r.posterior)],
      ["confirming", (r) => String(r.confirmations)], ["dissenting", (r) => String(r.disconfirmations)],
      ["independent groups", (r) => String(r.independent_groups)],
      ["supporting analogies", (r) => (r.supporting || []).join(", ")]];
    const preds = b.brief.predicted_hidden_factors || [];
    box.appendChild(el("h3", {}, "Predicted hidden factors (" + preds.length + ")"));
    if (preds.length) box.appendChild(table("predicted-table", preds, cols));
    else box.appendChild(el("p", { id: "predicted-none" }, "none: no hypothesis about a hidden factor reached the confirmation threshold"));
    // leading hypotheses: every hypothesis the loop weighed, asserted or still open, by posterior
    const seen = new Set();
    const leading = [];
    for (const h of [...(b.brief.mechanism_statements || []), ...(b.brief.under_confirmed || [])]) {
      const k = hyp(h);
      if (seen.has(k)) continue;
      seen.add(k);
      leading.push({ ...h, status: h.asserted ? (h.observed ? "asserted (observed)" : "asserted") : "open" });
    }
    leading.sort((x, y) => (y.posterior - x.posterior) || hyp(x).localeCompare(hyp(y)));
    const top = leading.slice(0, 12);
    box.appendChild(el("h3", {}, "Leading hypotheses (top " + top.length + " of " + leading.length + ")"));
    box.appendChild(table("leading-table", top, [...cols.slice(0, 5), ["status", (r) => r.status]]));
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

  // -- signing in and out ----------------------------------------------------------------
  function clearAll() {
    current = null;
    elems = { source: new Map(), target: new Map() };
    for (const id of ["summary", "side-source", "side-target", "links", "transfer", "inferences", "brief",
      "source-select", "target-select", "event-select", "namespace-select", "account-name"]) {
      const e = $(id);
      while (e.firstChild) e.removeChild(e.firstChild);
    }
    document.querySelector("#ldu-table tbody").textContent = "";
    for (const a of ["data-source", "data-target", "data-namespace", "data-entries"]) $("mapping").removeAttribute(a);
    $("transfer").removeAttribute("data-verdict");
    $("mapping").setAttribute("data-state", "empty");
    $("brief").setAttribute("data-state", "empty");
  }

  function signedOut(message) {
    generation += 1;
    session = null;
    clearAll();
    $("content").hidden = true;
    $("pick").hidden = true;
    $("account").hidden = true;
    $("sign-in").hidden = false;
    $("key-input").value = "";
    const p = $("sign-in-error");
    p.textContent = message || "";
    p.hidden = !message;
    showError("");
    document.body.setAttribute("data-auth", "signed-out");
    document.body.setAttribute("data-state", "signed-out");
  }

  function signedIn(s) {
    session = s;
    $("sign-in").hidden = true;
    $("sign-in-error").hidden = true;
    $("account").hidden = false;
    $("account-name").textContent = "signed in as " + s.name;
    const sel = $("namespace-select");
    sel.textContent = "";
    for (const n of s.namespaces) sel.appendChild(el("option", { value: n }, n));
    namespace = s.namespaces.includes(params.get("namespace")) ? params.get("namespace") : s.namespaces[0];
    sel.value = namespace;
    document.body.setAttribute("data-auth", "signed-in");
  }

  async function signIn(ev) {
    ev.preventDefault();
    const key = $("key-input").value.trim();
    $("key-input").value = "";
    try {
      const s = await request("POST", SESSION, { key });
      signedIn(s);
      await openViewer();
    } catch (e) {
      signedOut(e.message);
    }
  }

  async function signOut() {
    const token = session ? session.csrf_token : "";
    try {
      await request("DELETE", SESSION, undefined, { "X-CSRF-Token": token });
    } catch (e) {
      showError(e.message);
      return;
    }
    history.replaceState(null, "", window.location.pathname);
    signedOut("signed out");
  }

  async function pickNamespace() {
    namespace = $("namespace-select").value;
    const u = new URLSearchParams();
    u.set("namespace", namespace);
    history.replaceState(null, "", "?" + u.toString());
    clearMapping();
    await loadCasebook(null, null);
  }

  function clearMapping() {
    current = null;
    for (const id of ["summary", "side-source", "side-target", "links", "transfer", "inferences"]) {
      const e = $(id);
      while (e.firstChild) e.removeChild(e.firstChild);
    }
    document.querySelector("#ldu-table tbody").textContent = "";
    for (const a of ["data-source", "data-target"]) $("mapping").removeAttribute(a);
    $("transfer").removeAttribute("data-verdict");
    $("mapping").setAttribute("data-state", "empty");
  }

  // -- start -----------------------------------------------------------------------------
  async function loadCasebook(s, t) {
    let list;
    try {
      list = await getJSON(API + "/casebook?" + q({}));
    } catch (e) {
      if (e.status !== 401) { showError(e.message); document.body.setAttribute("data-state", "error"); }
      return;
    }
    const label = (r) => r.id + (r.mechanism ? "  [" + r.mechanism + (r.decoy_of ? ", decoy" : "") + "]" : "");
    fillSelect($("source-select"), list.entries, label);
    fillSelect($("target-select"), list.entries, label);
    let [ds, dt] = defaultPair(list.entries);
    s = s || ds;
    t = t || dt;
    if (s) $("source-select").value = s;
    if (t) $("target-select").value = t;
    $("mapping").setAttribute("data-namespace", session ? namespace : "");
    $("mapping").setAttribute("data-entries", String(list.entries.length));
    if (s && t) await loadMap(s, t);
    else document.body.setAttribute("data-state", "ready");
  }

  async function openViewer() {
    $("content").hidden = false;
    $("pick").hidden = false;
    getJSON(API + "/events").then((ev) => {
      fillSelect($("event-select"), ev.events, (r) => r.id + " \u2014 " + r.name);
      const e = params.get("event");
      if (e) { $("event-select").value = e; loadBrief(e); }
    }).catch((e) => { if (e.status !== 401) $("brief").textContent = e.message; });
    await loadCasebook(params.get("source"), params.get("target"));
  }

  async function start() {
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
    $("sign-in-form").addEventListener("submit", signIn);
    $("sign-out").addEventListener("click", signOut);
    $("namespace-select").addEventListener("change", pickNamespace);
    window.addEventListener("resize", drawLines);
    // a server with sign-in answers /viewer/session (200 signed in, 401 signed out); a bare
    // viewer (the bundled casebook, no namespaces) has no such route
    let s = null;
    try {
      s = await request("GET", SESSION);
    } catch (e) {
      if (e.status === 401) { signedOut(""); return; }
      if (e.status !== 404) { showError(e.message); document.body.setAttribute("data-state", "error"); return; }
    }
    if (s) signedIn(s);
    else document.body.setAttribute("data-auth", "open");
    await openViewer();
  }

  start();
})();
