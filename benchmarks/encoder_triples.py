"""Relation-triple quality of the deterministic encoder on ParallelPARC silver (development data).

Not a test. For every row of ``parallelparc_silver.csv`` (Sultan et al. 2024, *ParallelPARC*,
ACL) the ``relations`` column lists ``(a, verb, b) like (c, verb, d)`` pairs: the left triple is a
gold relation of ``source_paragraph``, the right one of ``target_paragraph``. Each paragraph is
encoded with :class:`analogist.encode.deterministic.DeterministicEncoder` and its binary relation
triples (states with an empty object are not compared; their count is reported) are aligned with
the paragraph's gold triples, one-to-one and greedily (best-scoring pairs first).

A predicted triple **matches** a gold triple when

* the verbs match: equal lemmas (the gold verb lemmatised with the same spaCy pipeline), or one
  verb phrase contains the other (word-wise), and
* subject and object match softly: equal head words (last word, crude singular), or one head in
  the other's words, or token Jaccard ≥ 0.5 after stopword removal.

Variants: **strict** — subject and object equal as normalised strings (lower case, determiners and
punctuation dropped) and verb lemmas equal; **relaxed** — verbs match and at least one argument
matches softly. Precision, recall and F1 are micro-averaged over all paragraphs of both sides, and
reported per side; a seeded paragraph bootstrap gives a 95 % interval for micro F1.

The gold triples are a partial, silver annotation (about three per paragraph pair), so precision
is a lower bound: many predicted triples are correct relations the annotators did not list. These
are **development results**: heuristics of the encoder were tuned while looking at this set.

    python benchmarks/encoder_triples.py [--data ../shared/data/dev/parallelparc_silver.csv]
        [--limit N] [--boot 1000] [--seed 0] [--out benchmarks/results/encoder_triples.json]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import re
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from _git import git_head  # benchmarks/_git.py (the script's own folder is on sys.path)

from analogist.encode.deterministic import DeterministicEncoder, EncoderParams, load_nlp

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "dev" / "parallelparc_silver.csv"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "encoder_triples.json"
STOP = {"the", "a", "an", "of", "to", "in", "on", "and", "or", "for", "with", "its", "their",
        "his", "her", "this", "that", "these", "those", "by", "from", "as", "at", "into", "it",
        "they", "is", "are", "be", "some", "any", "all"}
_PAIR = re.compile(r"\(([^()]*)\)\s*like\s*\(([^()]*)\)")

Triple3 = tuple[str, str, str]


def parse_triple(inner: str) -> Triple3 | None:
    """``"a, verb, b"`` → (a, verb, b); with extra commas, the split whose middle part (the verb)
    is shortest in words, the earliest on ties."""
    parts = [p.strip() for p in inner.split(",")]
    if len(parts) < 3 or not all(parts):
        return None
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    best: tuple[int, int] | None = None
    for i in range(1, len(parts) - 1):
        n = len(parts[i].split())
        if best is None or n < best[0]:
            best = (n, i)
    assert best is not None
    i = best[1]
    return ", ".join(parts[:i]), parts[i], ", ".join(parts[i + 1:])


def parse_relations(text: str) -> tuple[list[Triple3], list[Triple3], int]:
    """Gold triples of the source and the target paragraph, and the count of unparsed pairs."""
    src, tgt, bad = [], [], 0
    pairs = _PAIR.findall(text or "")
    for a, b in pairs:
        ta, tb = parse_triple(a), parse_triple(b)
        if ta is None or tb is None:
            bad += 1
            continue
        src.append(ta)
        tgt.append(tb)
    expected = (text or "").count(" like ")
    bad += max(0, expected - len(pairs))
    return src, tgt, bad


def words(s: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", s.lower())]


def sing(w: str) -> str:
    if len(w) > 3 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def content(s: str) -> set[str]:
    return {sing(w) for w in words(s) if w not in STOP}


def norm(s: str) -> str:
    return " ".join(w for w in words(s) if w not in {"the", "a", "an", "its", "their"})


def arg_soft(p: str, g: str) -> float:
    """Soft argument similarity in [0, 1]; ≥ 0.5 is a match."""
    cp, cg = content(p), content(g)
    if not cp or not cg:
        return 0.0
    hp, hg = sing(words(p)[-1]), sing(words(g)[-1])
    jac = len(cp & cg) / len(cp | cg)
    if hp == hg:
        return max(0.75, jac)
    if hp in cg or hg in cp:
        return max(0.5, jac)
    return jac


class VerbLemma:
    """Gold verb phrase → lemma words (spaCy, cached)."""

    def __init__(self, nlp: Any) -> None:
        self.nlp = nlp
        self.cache: dict[str, list[str]] = {}

    def __call__(self, verb: str) -> list[str]:
        if verb not in self.cache:
            doc = self.nlp(f"they {verb} it")
            toks = [t for t in doc][1:-1] or list(doc)
            self.cache[verb] = [(t.lemma_ or t.text).lower() for t in toks if t.is_alpha]
        return self.cache[verb]


def verb_match(pred: str, gold_lemmas: list[str], gold_raw: str) -> bool:
    pw = pred.split()
    if not pw or not gold_lemmas:
        return False
    if pw[0] == gold_lemmas[0] or pw == gold_lemmas:
        return True
    ps, gs, gr = " ".join(pw), " ".join(gold_lemmas), " ".join(words(gold_raw))
    return (f" {ps} " in f" {gs} " or f" {gs} " in f" {ps} " or f" {ps} " in f" {gr} "
            or f" {gr} " in f" {ps} ")


def align(pred: list[Triple3], gold: list[Triple3], vl: VerbLemma) -> dict[str, int]:
    """Greedy one-to-one matches (soft, strict, relaxed) between predicted and gold triples."""
    out = {}
    for variant in ("soft", "strict", "relaxed"):
        cands = []
        for i, p in enumerate(pred):
            for j, g in enumerate(gold):
                gl = vl(g[1])
                if not verb_match(p[1], gl, g[1]):
                    continue
                s, o = arg_soft(p[0], g[0]), arg_soft(p[2], g[2])
                if variant == "strict":
                    ok = (norm(p[0]) == norm(g[0]) and norm(p[2]) == norm(g[2])
                          and p[1].split()[0] == gl[0])
                elif variant == "soft":
                    ok = s >= 0.5 and o >= 0.5
                else:
                    ok = s >= 0.5 or o >= 0.5
                if ok:
                    cands.append((-(s + o), i, j))
        cands.sort()
        used_p: set[int] = set()
        used_g: set[int] = set()
        for _score, i, j in cands:
            if i not in used_p and j not in used_g:
                used_p.add(i)
                used_g.add(j)
        out[variant] = len(used_p)
    return out


def prf(tp: int, npred: int, ngold: int) -> dict[str, float]:
    p = tp / npred if npred else 0.0
    r = tp / ngold if ngold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4), "tp": tp,
            "predicted": npred, "gold": ngold}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    raw = args.data.read_bytes()
    sha = hashlib.sha256(raw).hexdigest()
    rows = list(csv.DictReader(raw.decode("utf-8").splitlines(keepends=True)))
    if args.limit:
        rows = rows[:args.limit]
    nlp = load_nlp()
    enc = DeterministicEncoder(nlp=nlp)
    vl = VerbLemma(nlp)
    enc.encode("The cache was stale, so the monitor raised an alarm.")  # warm-up

    git = git_head()  # the code measured: read before the run, which may take a while
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    items: list[dict[str, Any]] = []
    times: list[float] = []
    rows_parsed = triples_parsed = pairs_bad = states = errors = 0
    for ri, row in enumerate(rows):
        gs, gt, bad = parse_relations(row.get("relations", ""))
        pairs_bad += bad
        if not gs:
            continue
        rows_parsed += 1
        triples_parsed += len(gs) + len(gt)
        for side, gold, para in (("source", gs, row["source_paragraph"]),
                                 ("target", gt, row["target_paragraph"])):
            t0 = time.perf_counter()
            try:
                res = enc.encode(para, source=f"row {ri} {side}")
                trs = res.triples
            except Exception as e:  # noqa: BLE001 - counted and reported
                print(f"row {ri} {side}: {e}", file=sys.stderr)
                errors += 1
                trs = []
            times.append(time.perf_counter() - t0)
            pred = [(t.subject, t.verb, t.object) for t in trs if t.object]
            states += sum(1 for t in trs if not t.object)
            m = align(pred, gold, vl)
            items.append({"side": side, "npred": len(pred), "ngold": len(gold), **m})

    def micro(sel: list[dict[str, Any]], variant: str) -> dict[str, float]:
        return prf(sum(x[variant] for x in sel), sum(x["npred"] for x in sel),
                   sum(x["ngold"] for x in sel))

    results: dict[str, Any] = {}
    for variant in ("soft", "strict", "relaxed"):
        results[variant] = {"all": micro(items, variant),
                            "source": micro([x for x in items if x["side"] == "source"], variant),
                            "target": micro([x for x in items if x["side"] == "target"], variant)}
    rng = random.Random(args.seed)
    f1s = []
    for _ in range(args.boot):
        sample = [items[rng.randrange(len(items))] for _ in items]
        f1s.append(micro(sample, "soft")["f1"])
    f1s.sort()
    ci = [f1s[int(0.025 * len(f1s))], f1s[min(len(f1s) - 1, int(0.975 * len(f1s)))]] \
        if f1s else [0.0, 0.0]

    out = {
        "benchmark": "encoder_triples",
        "status": "development results (encoder heuristics were tuned on this set)",
        "command": "python benchmarks/encoder_triples.py" + (
            f" --limit {args.limit}" if args.limit else "") + (
            f" --boot {args.boot}" if args.boot != 1000 else "") + (
            f" --seed {args.seed}" if args.seed else ""),
        "dataset": {"file": args.data.name, "sha256": sha, "rows": len(rows),
                    "rows_parsed": rows_parsed, "gold_triples_parsed": triples_parsed,
                    "pairs_unparsed": pairs_bad, "paragraphs": len(items)},
        "note": ("gold triples are a partial, silver annotation (about 3 per paragraph); "
                 "precision is a lower bound. Only binary predicted triples are compared; "
                 "state triples (empty object) are excluded."),
        "matching": {"soft": "verbs match (lemma equal or containment) and subject and object "
                             "match softly (head word, head in other, or content Jaccard >= 0.5)",
                     "strict": "normalised subject/object strings equal and verb lemmas equal",
                     "relaxed": "verbs match and at least one argument matches softly",
                     "alignment": "greedy one-to-one per paragraph, best pairs first"},
        "results": results,
        "f1_soft_bootstrap_95ci": {"low": ci[0], "high": ci[1], "resamples": args.boot,
                                   "seed": args.seed, "unit": "paragraph"},
        "state_triples_excluded": states,
        "encode_errors": errors,
        "encode_seconds_per_paragraph_median": round(statistics.median(times), 5)
        if times else None,
        "encoder": {"writer": "deterministic-encoder-1", "embedder": "use (default)",
                    "params": asdict(EncoderParams())},
        "git": git,
        "process_cpu_s": round(time.process_time() - t_cpu, 1),
        "wall_s": round(time.perf_counter() - t_wall, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")

    try:
        from rich.console import Console
        from rich.table import Table

        tab = Table(title=f"Encoder triples on ParallelPARC silver ({len(items)} paragraphs)")
        for col in ("variant", "side", "P", "R", "F1", "tp", "pred", "gold"):
            tab.add_column(col)
        for variant, by in results.items():
            for side, r in by.items():
                tab.add_row(variant, side, f"{r['precision']:.3f}", f"{r['recall']:.3f}",
                            f"{r['f1']:.3f}", str(r["tp"]), str(r["predicted"]), str(r["gold"]))
        Console().print(tab)
        Console().print(f"soft micro F1 95% CI [{ci[0]:.3f}, {ci[1]:.3f}]; median encode "
                        f"{out['encode_seconds_per_paragraph_median']}s; wrote {args.out}")
    except ImportError:
        print(json.dumps(out["results"], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
