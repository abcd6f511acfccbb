"""Cross-domain narratives through the real CLI path: does text find its analogue, not its decoy?

The set (``benchmarks/narratives/cross_domain.yaml``) has eight mechanisms, each told in two
domains; every story has a same-words surface decoy (another mechanism, same domain) and a
minimal-pair decoy (one causal edge reversed or flipped). All texts (48 in that set, 96 in
``cross_domain_v2.yaml``; ``--set`` picks the set) are stored with ``analogist add --from-text``
in a temporary store; then each story is the target of ``analogist find --from-text`` (the full
story, and the story without its last, outcome sentence), asking for the whole store or the
CLI's ``--k`` cap when the store is larger. The story's own stored copy is left out of its
ranking.

Reported per variant (full / no outcome):

* ``partner_first`` — the other-domain story of the same mechanism ranks first;
  ``partner_mrr`` — the mean reciprocal rank of the partner (0 when not returned), which moves
  before ``partner_first`` does;
* ``above_both_decoys`` — the partner ranks above both of the story's own decoys (a decoy that
  is not returned counts as below);
* ``decoy_transfers`` — how many of the story's own decoys the judge would transfer from
  (conclusions transferred; should be 0);
* ``analogue_first`` — the first hit is a cross-domain analogue: a text of the story's
  mechanism from another domain, the partner or another story's surface decoy that tells the
  same mechanism (each decoy's ``surface_mechanism``; several decoys tell one of the set's other
  mechanisms, so ranking one of them first is not a surface error); and
  ``analogue_above_both_decoys`` — such an analogue ranks above both of the story's own decoys;
* diagnostics: ``partner_first_without_minimal`` (the partner first once the story's own
  minimal pair is left out), ``partner_above_surface`` and ``minimal_contradicted`` (the judge
  finds the story's minimal pair contradicting it — a reversed or flipped edge in the mapping —
  so that retrieval ranks it below every consistent candidate; where it does not, the encoding
  shows no reversal for the ranking to act on).

And, from the encoder alone, ``minimal_pairs``: the share of stories whose minimal pair encodes
to other causal edges, and the share where a difference is the reversed (or sign-flipped) edge,
predicates compared with role tags left out, and again with each role tag replaced by the role's
description (so that "A masks B" / "B masks A" differ), a reversal counted also where the
minimal pair's chain runs from the edge's effect back to its cause (as the judge reads it); and ``predicate_overlap``: per story, the weighted
Jaccard overlap of its predicate multiset (relation and state atoms, and both ends of every
causal edge, role tags left out) with its partner's, its surface decoy's and its minimal pair's,
their means, the share of stories whose partner overlaps more than the surface decoy, and the
share of proposed (not vocabulary) predicates among all. Two tellings of one mechanism can only
be aligned on the predicates they share, so the partner overlap is the number that has to rise
before retrieval can rank the partner first. ``--overlap-only`` runs these encoder diagnostics
alone (seconds, no store).

Also the encoding speed of the ``add`` step (texts per second, wall and CPU).
Writes ``benchmarks/results/encoder_narratives.json`` (+ ``.png``).

    python benchmarks/encoder_narratives.py [--out benchmarks/results/encoder_narratives.json]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.progress import Progress
from rich.table import Table
from typer.testing import CliRunner

from analogist.app import LIMITS
from analogist.cli import app

HERE = Path(__file__).parent
SET = HERE / "narratives" / "cross_domain.yaml"
RESULTS = HERE / "results"


def load_set(path: Path = SET) -> list[dict[str, Any]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))["stories"]


def without_outcome(text: str) -> str:
    sents = re.split(r"(?<=[.!?])\s+", text.strip())
    return " ".join(sents[:-1]) if len(sents) > 1 else text


class CliFailed(Exception):
    pass


def _invoke(runner: CliRunner, args: list[str]) -> str:
    r = runner.invoke(app, args, catch_exceptions=False)
    if r.exit_code != 0:
        raise CliFailed(r.output.strip())
    return r.stdout


def _skeleton(sig: dict[str, Any]) -> set[tuple[str, str, int, str]]:
    """The causal edges of a signature with role tags left out: (cause predicate, edge, sign,
    effect predicate)."""
    def pred(atom: str) -> str:
        return atom.split("(", 1)[0]
    return {(pred(e["cause"]), e["edge"], int(e.get("sign", 1)), pred(e["effect"]))
            for e in sig.get("causal_chain") or []}


def _role_edges(sig: dict[str, Any]) -> set[tuple[str, str, int, str]]:
    """The causal edges of a signature with each role tag replaced by the role's description,
    so that the same participants in the other order ("the drums mask the buzz" / "the buzz
    masks the drums") are other atoms: (cause, edge, sign, effect)."""
    roles = sig.get("roles") or {}

    def named(atom: str) -> str:
        name, _, rest = atom.partition("(")
        args = [roles.get(a.strip(), a.strip()) for a in rest.rstrip(")").split(",") if a]
        return f"{name}({', '.join(args)})"
    return {(named(e["cause"]), e["edge"], int(e.get("sign", 1)), named(e["effect"]))
            for e in sig.get("causal_chain") or []}


def _runs_back(edges: set[tuple[str, str, int, str]], cause: str, effect: str) -> bool:
    """Whether ``edges`` lead from ``effect`` to ``cause`` and not from ``cause`` to
    ``effect`` (a reversed edge, or a chain run the other way)."""
    nxt: dict[str, set[str]] = {}
    for c, _, _, e in edges:
        nxt.setdefault(c, set()).add(e)

    def reaches(a: str, b: str) -> bool:
        seen, todo = {a}, [a]
        while todo:
            for y in nxt.get(todo.pop(), ()):
                if y == b:
                    return True
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return False
    return reaches(effect, cause) and not reaches(cause, effect)


def minimal_pairs(stories: list[dict[str, Any]]) -> dict[str, Any]:
    """Does each story's minimal pair encode differently, and is a difference the reversed or
    sign-flipped edge? (Encoder only, no retrieval.)"""
    from analogist.encode.deterministic import DeterministicEncoder

    enc = DeterministicEncoder()
    rows = []
    for s in stories:
        sa = enc.encode(s["text"]).signature.to_data()
        sb = enc.encode(s["minimal"]).signature.to_data()
        a, b = _skeleton(sa), _skeleton(sb)
        ra, rb = _role_edges(sa), _role_edges(sb)
        reversed_roles = any(_runs_back(rb, c, e) for c, _, _, e in ra - rb) or any(
            _runs_back(ra, c, e) for c, _, _, e in rb - ra)
        flipped_roles = any((c, ed, -sg, e) in rb for c, ed, sg, e in ra - rb)
        reversed_ = any((e, ed, sg, c) in b and (c, ed, sg, e) not in b
                        for c, ed, sg, e in a - b)
        flipped = any((c, ed, -sg, e) in b for c, ed, sg, e in a - b)
        rows.append({"story": s["id"], "differs": a != b, "reversed": reversed_,
                     "flipped": flipped, "reversed_with_roles": reversed_roles,
                     "flipped_with_roles": flipped_roles, "edges": len(a), "only_story": len(a - b),
                     "only_minimal": len(b - a)})
    n = len(rows)
    return {"differs": round(sum(r["differs"] for r in rows) / n, 4),
            "reversed_or_flipped": round(sum(r["reversed"] or r["flipped"] for r in rows) / n,
                                         4),
            "reversed_or_flipped_with_roles": round(sum(
                r["reversed_with_roles"] or r["flipped_with_roles"] for r in rows) / n, 4),
            "rows": rows}


def _predicates(sig: dict[str, Any]) -> Counter[str]:
    """The predicate multiset of a signature: one per relation or state atom, one per end of
    each causal edge (role tags left out)."""
    out: Counter[str] = Counter(r[0] for r in sig.get("relations") or [])
    for e in sig.get("causal_chain") or []:
        out[e["cause"].split("(", 1)[0]] += 1
        out[e["effect"].split("(", 1)[0]] += 1
    return out


def _jaccard(a: Counter[str], b: Counter[str]) -> float:
    """Weighted (multiset) Jaccard: shared counts over the counts of either."""
    union = sum((a | b).values())
    return sum((a & b).values()) / union if union else 0.0


def predicate_overlap(stories: list[dict[str, Any]]) -> dict[str, Any]:
    """Per story, the Jaccard overlap of its predicate multiset with its partner's, its own
    surface decoy's and its own minimal pair's (encoder only)."""
    from analogist.encode.deterministic import DeterministicEncoder

    enc = DeterministicEncoder()
    preds: dict[str, Counter[str]] = {}
    proposed = total = 0
    for s in stories:
        for key, suffix in (("text", ""), ("surface", "__surface"), ("minimal", "__minimal")):
            res = enc.encode(s[key])
            c = _predicates(res.signature.to_data())
            preds[s["id"] + suffix] = c
            total += sum(c.values())
            proposed += sum(n for name, n in c.items() if name in res.proposed_terms)
    rows = []
    for s in stories:
        p = next(o["id"] for o in stories if o["mechanism"] == s["mechanism"]
                 and o["id"] != s["id"])
        me = preds[s["id"]]
        rows.append({"story": s["id"], "partner": p,
                     "partner_overlap": round(_jaccard(me, preds[p]), 4),
                     "surface_overlap": round(_jaccard(me, preds[s["id"] + "__surface"]), 4),
                     "minimal_overlap": round(_jaccard(me, preds[s["id"] + "__minimal"]), 4),
                     "shared_with_partner": sorted((me & preds[p]).elements())})
    n = len(rows)
    return {"partner": round(sum(r["partner_overlap"] for r in rows) / n, 4),
            "surface": round(sum(r["surface_overlap"] for r in rows) / n, 4),
            "minimal": round(sum(r["minimal_overlap"] for r in rows) / n, 4),
            "partner_above_surface": round(sum(r["partner_overlap"] > r["surface_overlap"]
                                               for r in rows) / n, 4),
            "proposed_share": round(proposed / total, 4) if total else 0.0, "rows": rows}


def run(stories: list[dict[str, Any]], work: Path) -> dict[str, Any]:
    runner = CliRunner()
    store = work / "store.db"
    files = []
    for s in stories:
        for kind, key in (("", "text"), ("__surface", "surface"), ("__minimal", "minimal")):
            f = work / "texts" / f"{s['id']}{kind}.txt"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(s[key], encoding="utf-8")
            files.append(f)
    t0, c0 = time.perf_counter(), time.process_time()
    batch_error, refused = None, []
    try:
        _invoke(runner, ["add", "--from-text", "--store", str(store), *map(str, files)])
    except CliFailed as e:            # the batch was refused: store what stores, one by one
        batch_error = str(e)
        for f in files:
            try:
                _invoke(runner, ["add", "--from-text", "--store", str(store), str(f)])
            except CliFailed as e1:
                refused.append({"file": f.name, "error": str(e1)})
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    # every stored text's mechanism and domain: a story, its minimal pair (the same), its
    # surface decoy (``surface_mechanism``, same domain)
    told = {}
    for s in stories:
        told[s["id"]] = (s["mechanism"], s["domain"])
        told[f"{s['id']}__minimal"] = (None, s["domain"])
        told[f"{s['id']}__surface"] = (s.get("surface_mechanism"), s["domain"])
    partner = {}
    for s in stories:
        other = [o for o in stories if o["mechanism"] == s["mechanism"] and o["id"] != s["id"]]
        partner[s["id"]] = other[0]["id"]
    out: dict[str, Any] = {"add": {"texts": len(files), "wall_s": round(wall, 2),
                                   "cpu_s": round(cpu, 2),
                                   "texts_per_s": round(len(files) / wall, 2),
                                   "batch_error": batch_error, "refused_one_by_one": refused},
                           "variants": {}}
    # the whole store when the CLI allows it; past its cap, a text not returned ranks below
    k = min(len(files), LIMITS.k[1])
    out["find_k"] = k
    with Progress(transient=True) as bar:
        task = bar.add_task("finding", total=2 * len(stories))
        for variant in ("full", "no_outcome"):
            rows = []
            for s in stories:
                q = work / "queries" / f"query_{s['id']}_{variant}.txt"
                q.parent.mkdir(parents=True, exist_ok=True)
                q.write_text(s["text"] if variant == "full" else without_outcome(s["text"]),
                             encoding="utf-8")
                res = json.loads(_invoke(runner, ["find", "--from-text", str(q), "--store",
                                                  str(store), "--k", str(k),
                                                  "--json", "--no-critic"]))
                hits = [h for h in res["results"] if h["episode_id"] != s["id"]]
                ids = [h["episode_id"] for h in hits]
                rank = {e: i for i, e in enumerate(ids)}
                p = partner[s["id"]]
                own = {f"{s['id']}__surface", f"{s['id']}__minimal"}
                pr = rank.get(p)
                above = pr is not None and all(pr < rank.get(d, len(ids) + 1) for d in own)
                no_min = [e for e in ids if e != f"{s['id']}__minimal"]
                analogues = [i for i, e in enumerate(ids) if told[e][0] == s["mechanism"]
                             and told[e][1] != s["domain"]]
                rows.append({"story": s["id"], "partner": p, "top": ids[:3],
                             "partner_first_without_minimal": bool(no_min) and no_min[0] == p,
                             "partner_above_surface": pr is not None and pr < rank.get(
                                 f"{s['id']}__surface", len(ids) + 1),
                             "partner_rank": None if pr is None else pr + 1,
                             "surface_rank": rank.get(f"{s['id']}__surface"),
                             "minimal_rank": rank.get(f"{s['id']}__minimal"),
                             "partner_first": bool(ids) and ids[0] == p,
                             "analogue_first": bool(analogues) and analogues[0] == 0,
                             "analogue_above_both_decoys": bool(analogues) and all(
                                 analogues[0] < rank.get(d, len(ids) + 1) for d in own),
                             "above_both_decoys": above,
                             "decoy_transfers": sum(1 for h in hits
                                                    if h["episode_id"] in own and h["transfer"]),
                             "partner_transfers": any(h["transfer"] for h in hits
                                                      if h["episode_id"] == p),
                             "minimal_contradicted": any(
                                 h["report"]["contradictions"] for h in hits
                                 if h["episode_id"] == f"{s['id']}__minimal"),
                             "no_match": res["no_match"]})
                bar.update(task, advance=1)
            n = len(rows)
            out["variants"][variant] = {
                "partner_first": round(sum(r["partner_first"] for r in rows) / n, 4),
                "partner_mrr": round(sum(1 / r["partner_rank"] for r in rows
                                         if r["partner_rank"]) / n, 4),
                "above_both_decoys": round(sum(r["above_both_decoys"] for r in rows) / n, 4),
                "analogue_first": round(sum(r["analogue_first"] for r in rows) / n, 4),
                "analogue_above_both_decoys": round(
                    sum(r["analogue_above_both_decoys"] for r in rows) / n, 4),
                "decoy_transfers": sum(r["decoy_transfers"] for r in rows),
                "partner_transfers": round(sum(r["partner_transfers"] for r in rows) / n, 4),
                "partner_first_without_minimal": round(
                    sum(r["partner_first_without_minimal"] for r in rows) / n, 4),
                "partner_above_surface": round(sum(r["partner_above_surface"] for r in rows) / n,
                                               4),
                "minimal_contradicted": round(sum(r["minimal_contradicted"] for r in rows) / n,
                                              4),
                "n": n, "rows": rows}
    return out


def _plot(out: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    vs = list(out["variants"])
    fig, ax = plt.subplots(figsize=(6, 3.5))
    w = 0.35
    for j, key in enumerate(("partner_first", "above_both_decoys")):
        ax.bar([i + j * w for i in range(len(vs))], [out["variants"][v][key] for v in vs], w,
               label=key.replace("_", " "))
    ax.axhline(0.9, ls="--", c="grey", lw=1)
    ax.set_xticks([i + w / 2 for i in range(len(vs))], vs)
    ax.set_ylim(0, 1.05)
    ax.set_title("cross-domain narratives (find --from-text)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _print_encoder_diagnostics(ov: dict[str, Any], mp: dict[str, Any]) -> None:
    Console().print(f"predicate overlap (mean Jaccard): partner {ov['partner']:.3f}, surface "
                    f"decoy {ov['surface']:.3f}, minimal pair {ov['minimal']:.3f}; partner above "
                    f"surface {ov['partner_above_surface']:.2f}; proposed predicates "
                    f"{ov['proposed_share']:.2f}")
    Console().print(f"minimal pairs: encoded differently {mp['differs']:.2f}, the difference a "
                    f"reversed or flipped edge {mp['reversed_or_flipped']:.2f} (predicates "
                    f"alone), {mp['reversed_or_flipped_with_roles']:.2f} (with the roles' "
                    "descriptions, through chains)")


def default_out(set_path: Path) -> Path:
    """The result file of a set when ``--out`` is not given, so each set keeps its own file:
    cross_domain.yaml -> encoder_narratives.json, cross_domain_v2.yaml -> encoder_narratives_v2.json,
    held_out.yaml -> encoder_narratives_held_out.json."""
    stem = set_path.stem
    if stem == SET.stem:
        return RESULTS / "encoder_narratives.json"
    suffix = stem.removeprefix(SET.stem + "_")
    return RESULTS / f"encoder_narratives_{suffix}.json"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=None,
                    help="result file (default: results/encoder_narratives.json for the default "
                         "set, results/encoder_narratives_<set suffix>.json for "
                         "cross_domain_<suffix>.yaml or <name>.yaml otherwise)")
    ap.add_argument("--no-plot", action="store_true")
    ap.add_argument("--set", type=Path, default=SET, help="narrative set (YAML)")
    ap.add_argument("--overlap-only", action="store_true",
                    help="only the encoder diagnostics (predicate overlap, minimal pairs); "
                         "nothing is written")
    a = ap.parse_args()
    stories = load_set(a.set)
    if a.out is None:
        a.out = default_out(a.set)
    if a.overlap_only:
        _print_encoder_diagnostics(predicate_overlap(stories), minimal_pairs(stories))
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = run(stories, Path(tmp))
    out["minimal_pairs"] = minimal_pairs(stories)
    out["predicate_overlap"] = predicate_overlap(stories)
    out["command"] = "python benchmarks/encoder_narratives.py " + " ".join(sys.argv[1:])
    out["set"] = {"stories": len(stories), "texts": 3 * len(stories),
                  "mechanisms": len({s["mechanism"] for s in stories}),
                  "domains": len({s["domain"] for s in stories})}
    out["git"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False, cwd=HERE).stdout.strip()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    if not a.no_plot:
        _plot(out, a.out.with_suffix(".png"))
    t = Table(title="cross-domain narratives")
    for c in ("variant", "partner first", "partner MRR", "above both decoys", "analogue first",
              "analogue above decoys", "decoy transfers",
              "first w/o minimal", "above surface"):
        t.add_column(c)
    for v, r in out["variants"].items():
        t.add_row(v, f"{r['partner_first']:.2f}", f"{r['partner_mrr']:.3f}",
                  f"{r['above_both_decoys']:.2f}",
                  f"{r['analogue_first']:.2f}", f"{r['analogue_above_both_decoys']:.2f}",
                  str(r["decoy_transfers"]), f"{r['partner_first_without_minimal']:.2f}",
                  f"{r['partner_above_surface']:.2f}")
    Console().print(t)
    _print_encoder_diagnostics(out["predicate_overlap"], out["minimal_pairs"])
    Console().print(f"add --from-text: {out['add']['texts_per_s']} texts/s "
                    f"({out['add']['wall_s']} s wall, {out['add']['cpu_s']} s CPU)")


if __name__ == "__main__":
    main()
