"""The Structural Analogy Brief (seed 001 §4.2): what the analogies say, and how sure we are.

:func:`brief_data` turns a :class:`~analogist.foresight.loop.ForesightResult` into plain data
(written as JSON by :func:`brief_json`), :func:`brief_markdown` renders it for people, and
:func:`coverage_chart` draws the position × analogy coverage chart (PNG). The brief holds:

* **mechanism statements** — for each position hypothesis asserted at 1 − δ, observed or hidden,
  the mechanism class with its definition and how each supporting analogy instantiated it;
* **analogies** — ranked by mapping fidelity, each with its provenance label (``corpus``,
  ``memory``, ``parametric``) and its **limitations**: the difference table (likenesses:
  target factors matched on position and mechanism; differences: factors mapped across
  mechanisms or positions; unknowns: target factors it does not map) plus scale and domain;
* **cross-analogy invariants** — hypotheses confirmed by two or more independent analogies;
* **predicted hidden factors** — asserted hypotheses the target does not yet show, with the
  posterior, the confirming analogies, each one's factor text and its anchor in the target;
* **leading hypotheses below the threshold** — supported but unconfirmed hidden-factor
  hypotheses, most probable first (what to watch for);
* **key uncertainties** — supported but unconfirmed hypotheses, positions no analogy reached,
  rejected candidates and why, skipped steps, and Theorem 5's independence assumption.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from analogist.foresight.confirm import n_star
from analogist.foresight.event import POSITIONS, mechanism_definitions
from analogist.foresight.loop import ForesightResult
from analogist.plots import load_pyplot

__all__ = ["brief_data", "brief_json", "brief_markdown", "coverage_chart", "write_brief"]


def _years(ev: Any) -> str:
    def y(d: str | None) -> str:
        if d is None:
            return ""
        n = int(d.split("-")[1] if d.startswith("-") else d.split("-")[0])
        return f"{n} BCE" if d.startswith("-") else str(n)

    a, b = y(ev.start), y(ev.end)
    if a in ("", "0"):
        return "date unknown"
    return a if not b or b == a else f"{a}–{b}"


def _analogy_entry(rank: int, a: Any, res: ForesightResult) -> dict[str, Any]:
    """One ranked analogy with its provenance label and limitations (the difference table
    against the target, plus scale and domain notes)."""
    d = res.decision
    tgt = res.target.view
    tf = {f.id: f for f in tgt.factors}
    ev = res.events[a.candidate]
    cf = {f.id: f for f in ev.factors}
    mapped_t = {t for _, t in a.pairs}
    return {
        "rank": rank, "event_id": ev.event_id, "name": ev.name, "years": _years(ev),
        "domain": ev.domain, "scale": ev.scale, "provenance": ev.provenance,
        "label": "parametric" if ev.provenance == "parametric" else ev.provenance,
        "fidelity": round(a.fidelity, 4), "group": d.groups.get(a.candidate, a.candidate),
        "likenesses": [{"target": t, "analogy": b, "position": cf[b].position,
                        "mechanism": cf[b].mechanism, "analogy_text": cf[b].text}
                       for b, t in a.matches],
        "differences": [{"target": t, "analogy": b,
                         "target_side": f"{tf[t].position}/{tf[t].mechanism}",
                         "analogy_side": f"{cf[b].position}/{cf[b].mechanism}",
                         "analogy_text": cf[b].text} for b, t in a.differences],
        "unknowns": [{"target": f.id, "position": f.position, "mechanism": f.mechanism}
                     for f in tgt.factors if f.id not in mapped_t],
        "projections": [p.to_json() for p in a.projections],
        "scale_note": None if ev.scale == tgt.scale or None in (ev.scale, tgt.scale)
        else f"scale {ev.scale} vs the target's {tgt.scale}",
        "domain_note": None if ev.domain == tgt.domain
        else f"domain {ev.domain} vs the target's {tgt.domain}",
        "source": ev.source,
    }


def _instances(res: ForesightResult, h: tuple[str, str]) -> list[dict[str, Any]]:
    """How each supporting analogy instantiated hypothesis ``h``: its matched factors and its
    projections at that position and mechanism."""
    d = res.decision
    out = []
    for a in d.ranked:
        if a.candidate not in d.support.get(h, ()):
            continue
        ev = res.events[a.candidate]
        cf = {f.id: f for f in ev.factors}
        for b, t in a.matches:
            if (cf[b].position, cf[b].mechanism) == h:
                out.append({"analogy": ev.event_id, "name": ev.name, "factor": b,
                            "text": cf[b].text, "via": f"matched to target {t}",
                            "label": ev.provenance})
        for p in a.projections:
            if (p.position, p.mechanism) == h:
                anc = ", ".join(f"{x}↔{y}" for x, y in p.anchors)
                out.append({"analogy": ev.event_id, "name": ev.name, "factor": p.factor,
                            "text": p.text, "via": f"anchored at {anc}; " + "; ".join(p.path),
                            "label": ev.provenance})
    return out


def _hyp_entry(res: ForesightResult, defs: dict[str, str],
               h: tuple[str, str]) -> dict[str, Any]:
    """Hypothesis ``h`` with its mechanism definition, posterior, independent groups,
    supporting analogies and their instances."""
    d = res.decision
    p = d.posteriors[h]
    groups = sorted({d.groups.get(x, x) for x in d.support.get(h, ())})
    return {"position": h[0], "mechanism": h[1], "definition": defs.get(h[1], ""),
            **p.to_json(), "independent_groups": len(groups),
            "supporting": list(d.support.get(h, ())), "instances": _instances(res, h)}


def _n_star_by_position(cp: Any, cal: Any) -> dict[str, int] | None:
    """Theorem 5's n* per position under the calibration's least informative rates (None
    without calibrated rates)."""
    if cal is None or not cal.rates:
        return None
    qb, pb = max(cal.rates.values(), key=lambda r: r[0] / r[1])
    return {s: n_star(cp, pi=cal.prior(s, cp.pi), q=qb, p=pb) for s in POSITIONS}


def _uncertainties(res: ForesightResult, open_h: list[dict[str, Any]],
                   analogies: list[dict[str, Any]]) -> list[str]:
    """The key uncertainties: under-confirmed hypotheses, unreached positions, parametric
    analogies, the independence assumption and the skipped steps."""
    d = res.decision
    cp = res.params.confirm
    reached = {h[0] for h, p in d.posteriors.items() if p.confirmations > 0}
    uncertainties = []
    for e in open_h[:10]:
        uncertainties.append(
            f"{e['position']}/{e['mechanism']}: posterior {e['posterior']:.2f} from "
            f"{e['confirmations']} confirming and {e['disconfirmations']} dissenting independent "
            f"analogies — below {1 - cp.delta:.2f}")
    for s in POSITIONS:
        if s not in reached:
            uncertainties.append(f"no aligned analogy reaches the {s} position")
    parametric = [a["event_id"] for a in analogies if a["provenance"] == "parametric"]
    if parametric:
        uncertainties.append("analogies labelled parametric come from the language model's own "
                             "knowledge, not from the corpus: " + ", ".join(parametric))
    uncertainties.append("Theorem 5 assumes the analogies confirm independently given the truth; "
                         "aliases, sub-events and shared histories are merged into one group, "
                         "but analogies may still share causes the corpus does not record")
    uncertainties.extend(res.skipped)
    return uncertainties


def _parameters(res: ForesightResult) -> dict[str, Any]:
    """The confirmation parameters, calibration and loop settings the brief was made with."""
    cp = res.params.confirm
    cal = res.params.calibration
    return {"pi": cp.pi, "q": cp.q, "p": cp.p, "delta": cp.delta,
            "n_star": n_star(cp) if cal is None else None,
            "calibration": None if cal is None else {
                "pi": cal.to_json()["pi"], "rates": cal.to_json()["rates"],
                "source": cal.source},
            "n_star_by_position": _n_star_by_position(cp, cal),
            "rounds": res.params.rounds,
            "per_round": res.params.per_round, "carryover": res.params.carryover,
            "min_fidelity": res.params.min_fidelity,
            "negative_evidence": res.params.negative_evidence}


def brief_data(res: ForesightResult) -> dict[str, Any]:
    """The brief as plain, JSON-ready data (deterministic: sorted keys and orders)."""
    defs = mechanism_definitions()
    tv = res.target
    tgt = tv.view
    d = res.decision
    obs = res.observed()
    analogies = [_analogy_entry(rank, a, res) for rank, a in enumerate(d.ranked, 1)]
    asserted = sorted((h for h, p in d.posteriors.items() if p.asserted),
                      key=lambda h: (POSITIONS.index(h[0]), -d.posteriors[h].log_odds, h[1]))
    statements = [_hyp_entry(res, defs, h) | {"observed": h in obs} for h in asserted]
    invariants = [e for e in statements if e["independent_groups"] >= 2]
    predicted = [_hyp_entry(res, defs, h) for h, _ in res.predicted()]
    open_h = [_hyp_entry(res, defs, h) for h, _ in res.candidates()]
    rejected = [r.to_json() for lg in res.rounds for r in lg.filtered]
    rejected += [r.to_json() for r in d.rejected]
    return {
        "target": {"event_id": tv.event.event_id, "name": tv.event.name,
                   "cutoff": tv.cutoff, "domain": tgt.domain, "scale": tgt.scale,
                   "observed": [{"id": f.id, "position": f.position, "mechanism": f.mechanism,
                                 "text": f.text} for f in tgt.factors]},
        "parameters": _parameters(res),
        "stop_reason": res.stop_reason,
        "mechanism_statements": statements,
        "analogies": analogies,
        "cross_analogy_invariants": invariants,
        "predicted_hidden_factors": predicted,
        "under_confirmed": open_h,
        "rejected": rejected,
        "key_uncertainties": _uncertainties(res, open_h, analogies),
        "rounds": [lg.to_json() for lg in res.rounds],
    }


def brief_json(res: ForesightResult) -> str:
    return json.dumps(brief_data(res), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def brief_markdown(res: ForesightResult, *, chart: str | None = None) -> str:
    """The brief for people (Markdown)."""
    b = brief_data(res)
    t = b["target"]
    pr = b["parameters"]
    out = [f"# Structural Analogy Brief: {t['name']}", ""]
    cut = f"cutoff {t['cutoff']}" if t["cutoff"] else "no cutoff (all factors observed)"
    if pr["calibration"] is None:
        conf = (f"Confirmation: π={pr['pi']}, q={pr['q']}, p={pr['p']}, δ={pr['delta']} → "
                f"n*={pr['n_star']} independent confirmations")
    else:
        c = pr["calibration"]
        rates = ", ".join(f"{k} q={v[0]:.2f} p={v[1]:.2f}" for k, v in c["rates"].items())
        nstar = ", ".join(f"{k} {v}" for k, v in (pr["n_star_by_position"] or {}).items())
        conf = (f"Confirmation: calibrated π per position and (q, p) per analogy strength "
                f"({rates}; {c['source']}), δ={pr['delta']}; strongest-analogy n* by position: "
                f"{nstar}")
    out += [f"Target `{t['event_id']}` ({t['domain']}, {t['scale'] or 'scale unknown'}), "
            f"{cut}. {conf}; "
            f"stopped: {b['stop_reason']}.", ""]
    out += ["## Observed at the cutoff", ""]
    out += [f"- **{f['position']}** `{f['mechanism']}` ({f['id']}): {f['text']}"
            for f in t["observed"]]
    out += ["", "## Predicted hidden factors", ""]
    if not b["predicted_hidden_factors"]:
        out.append("None reaches the confirmation threshold.")
    for e in b["predicted_hidden_factors"]:
        out.append(f"- **{e['position']}: `{e['mechanism']}`** — posterior {e['posterior']:.3f} "
                   f"from {e['independent_groups']} independent analogies. "
                   f"*{e['definition']}*")
        for i in e["instances"]:
            lab = " [parametric]" if i["label"] == "parametric" else ""
            out.append(f"  - {i['name']}{lab}: {i['text']} ({i['via']})")
    out += ["", "## Leading hypotheses below the threshold", ""]
    if not b["under_confirmed"]:
        out.append("None: no analogy projects anything the target does not already show.")
    else:
        out.append(f"Supported by at least one analogy but short of {1 - pr['delta']:.2f}; "
                   f"what to watch for, most probable first.")
        out.append("")
    for e in b["under_confirmed"][:8]:
        names = ", ".join(sorted({i["name"] for i in e["instances"]}))
        out.append(f"- {e['position']}: `{e['mechanism']}` — posterior {e['posterior']:.3f} "
                   f"({e['confirmations']} confirming, {e['disconfirmations']} dissenting "
                   f"independent analogies: {names}). *{e['definition']}*")
    out += ["", "## Mechanism statements", ""]
    if not b["mechanism_statements"]:
        out.append("No position hypothesis reaches the confirmation threshold.")
    for e in b["mechanism_statements"]:
        kind = "observed, confirmed" if e["observed"] else "hidden, inferred"
        names = ", ".join(sorted({i["name"] for i in e["instances"]}))
        out.append(f"- At the **{e['position']}** position, `{e['mechanism']}` ({kind}; "
                   f"posterior {e['posterior']:.3f}): {e['definition']}. Seen in {names}.")
    out += ["", "## Cross-analogy invariants", ""]
    if not b["cross_analogy_invariants"]:
        out.append("No hypothesis is confirmed by two independent analogies.")
    for e in b["cross_analogy_invariants"]:
        out.append(f"- {e['position']}/`{e['mechanism']}` in {e['independent_groups']} "
                   f"independent analogies: " + "; ".join(sorted({i['name'] for i in
                                                                e['instances']})))
    out += ["", "## Analogies and their limitations", ""]
    out += ["| # | analogy | years | domain | fidelity | label | likenesses | differences | "
            "unknowns |", "|---|---|---|---|---|---|---|---|---|"]
    for a in b["analogies"]:
        out.append(f"| {a['rank']} | {a['name']} | {a['years']} | {a['domain']} | "
                   f"{a['fidelity']:.2f} | {a['label']} | {len(a['likenesses'])} | "
                   f"{len(a['differences'])} | {len(a['unknowns'])} |")
    for a in b["analogies"]:
        out += ["", f"### {a['rank']}. {a['name']} ({a['years']})", ""]
        for lk in a["likenesses"]:
            out.append(f"- likeness: {lk['position']}/`{lk['mechanism']}` — target {lk['target']} "
                       f"↔ {lk['analogy']}: {lk['analogy_text']}")
        for df in a["differences"]:
            out.append(f"- difference: target {df['target']} ({df['target_side']}) ↔ "
                       f"{df['analogy']} ({df['analogy_side']}): {df['analogy_text']}")
        for u in a["unknowns"]:
            out.append(f"- unknown: target {u['target']} ({u['position']}/`{u['mechanism']}`) has "
                       f"no counterpart here")
        for note in (a["scale_note"], a["domain_note"]):
            if note:
                out.append(f"- limitation: {note}")
        out.append(f"- source: {a['source']}")
    out += ["", "## Key uncertainties", ""]
    out += [f"- {u}" for u in b["key_uncertainties"]]
    if b["rejected"]:
        out += ["", "## Rejected candidates", ""]
        out += [f"- {r['candidate']}: {r['rule']} — {r['reason']}" for r in b["rejected"]]
    if chart:
        out += ["", f"![position × analogy coverage]({chart})"]
    return "\n".join(out) + "\n"


def coverage_chart(res: ForesightResult, path: str | Path, *, max_rows: int = 24,
                   max_cols: int = 12) -> str | None:
    """Draw the position × analogy coverage chart (PNG). Returns None when written, else why
    not (matplotlib missing, nothing to draw)."""
    d = res.decision
    cols = list(d.ranked[:max_cols])
    hyps = [h for h, p in d.posteriors.items() if p.confirmations > 0 or h in res.observed()]
    hyps.sort(key=lambda h: (POSITIONS.index(h[0]), -d.posteriors[h].log_odds, h[1]))
    hyps = hyps[:max_rows]
    if not cols or not hyps:
        return "nothing to draw: no aligned analogy"

    plt, why = load_pyplot()
    if plt is None:
        return f"chart skipped: {why}"
    from matplotlib.colors import ListedColormap  # optional (the plots extra): load_pyplot found it

    grid = np.full((len(hyps), len(cols)), np.nan)
    for j, a in enumerate(cols):
        for i, h in enumerate(hyps):
            if h in a.evidence:
                grid[i, j] = a.evidence[h]
    obs = res.observed()
    fig_w = 3.2 + 0.55 * len(cols) + 1.2
    fig_h = 1.6 + 0.32 * len(hyps)
    fig, (ax, axp) = plt.subplots(1, 2, figsize=(fig_w, fig_h), sharey=True,
                                  gridspec_kw={"width_ratios": [len(cols), 1.6]})
    cmap = ListedColormap(["#e4a9a0", "#5b9bd5"])
    masked = np.ma.masked_invalid(grid)
    ax.imshow(masked, cmap=cmap, vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels([res.events[a.candidate].name[:28] for a in cols], rotation=60,
                       ha="right", fontsize=7)
    ax.set_yticks(range(len(hyps)))
    ax.set_yticklabels([f"{'● ' if h in obs else '○ '}{h[0]}: {h[1]}" for h in hyps], fontsize=7)
    ax.set_xticks(np.arange(-0.5, len(cols)), minor=True)
    ax.set_yticks(np.arange(-0.5, len(hyps)), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.0)
    ax.tick_params(which="minor", length=0)
    ax.set_title("blue: confirms · red: other mechanism at the position · blank: silent",
                 fontsize=7)
    post = [d.posteriors[h].probability for h in hyps]
    thr = res.params.confirm.threshold
    colors = ["#2e7d32" if p >= thr else "#9e9e9e" for p in post]
    axp.barh(range(len(hyps)), post, color=colors)
    axp.axvline(thr, color="black", linewidth=0.8, linestyle="--")
    axp.set_xlim(0, 1)
    axp.set_xlabel("posterior", fontsize=7)
    axp.tick_params(labelsize=7)
    tname = res.target.event.name
    fig.suptitle(f"{tname}: position × analogy coverage (● observed, ○ hidden)", fontsize=9)
    fig.tight_layout()
    fig.savefig(str(path), dpi=130)
    plt.close(fig)
    return None


def write_brief(res: ForesightResult, out_dir: str | Path, *, stem: str | None = None
                ) -> dict[str, str]:
    """Write ``<stem>.md``, ``<stem>.json`` and ``<stem>.png`` into ``out_dir``; returns the
    paths written (and ``chart_note`` when the chart was skipped)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = stem or f"brief-{res.target.event.event_id}"
    png = out / f"{stem}.png"
    note = coverage_chart(res, png)
    md = brief_markdown(res, chart=png.name if note is None else None)
    (out / f"{stem}.md").write_text(md, encoding="utf-8")
    (out / f"{stem}.json").write_text(brief_json(res), encoding="utf-8")
    paths = {"markdown": str(out / f"{stem}.md"), "json": str(out / f"{stem}.json")}
    if note is None:
        paths["chart"] = str(png)
    else:
        paths["chart_note"] = note
    return paths
