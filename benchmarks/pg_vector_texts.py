"""Synthetic episodes with abstract-level texts, and their embeddings by the bundled embedder.

The material of ``benchmarks/pg_vector_channel.py``. Each episode is a casebook structure
recombined as in ``benchmarks/retrieve_speed.py`` (fresh role tags, a random subset of its
relations and causal edges, a borrowed relation) whose L2 level is a sentence made here from one
of :data:`MECHANISMS` (a template of a causal mechanism) with its slots filled from word pools, so
texts of one mechanism share a shape and differ in their nouns, verbs and qualifiers, the way
abstract descriptions of many incidents do. No public evaluation set is read.

Embedding is slow (the default embedder, Universal Sentence Encoder in NumPy, takes about 35 ms
of CPU per text on this machine), so :func:`embed_cached` embeds in chunks of 1000 and keeps each
chunk under a cache folder (``chunk_<k>.npy`` with the SHA-256 of its texts beside it): an
interrupted run resumes, and a second benchmark run reuses the vectors.

    nice -n 10 python benchmarks/pg_vector_texts.py --n 100000 --cache /tmp/analogist-pgv-cache
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.retrieve_speed import _casebook_dicts, synth  # noqa: E402

CHUNK = 1000

# word pools (slot name -> choices)
POOLS: dict[str, tuple[str, ...]] = {
    "copy": ("cached summary", "exported sheet", "nightly snapshot", "printed roster",
             "replicated table", "weekly digest", "hand-made extract", "mirrored feed",
             "stale dashboard", "copied checklist", "archived report", "local list"),
    "source": ("registry", "ledger", "master record", "inventory", "chart", "catalogue",
               "database", "logbook", "schedule", "manifest", "census", "account"),
    "actor": ("operator", "clerk", "manager", "nurse", "dispatcher", "analyst", "pilot",
              "supervisor", "auditor", "planner", "steward", "foreman", "teacher", "buyer"),
    "resource": ("capacity", "budget", "bandwidth", "staff time", "stock", "water supply",
                 "fuel", "memory", "shelf space", "attention", "cash", "grazing land"),
    "signal": ("alarm", "warning light", "complaint", "error rate", "queue length",
               "temperature reading", "price", "rumour", "sales figure", "pressure gauge"),
    "growth": ("demand", "traffic", "population", "debt", "backlog", "inflammation",
               "erosion", "panic", "weed cover", "interest"),
    "stage": ("checkpoint", "single loading dock", "narrow bridge", "approval step",
              "only licensed engineer", "one shared printer", "intake desk", "toll gate",
              "central kiln", "final inspection"),
    "fix": ("quick patch", "temporary subsidy", "extra shift", "painkiller", "emergency loan",
            "manual override", "overnight workaround", "price cut", "sandbag wall"),
    "incentive": ("bonus", "quota", "ranking", "commission", "grade", "target", "rating",
                  "league table", "reward"),
    "measure": ("ticket count", "test score", "call time", "number of arrests", "page views",
                "units shipped", "beds filled", "lines of code", "hours logged"),
    "qual": ("slowly", "quietly", "suddenly", "gradually", "repeatedly", "unexpectedly",
             "steadily", "briefly", "eventually"),
    "adj": ("small", "large", "remote", "busy", "new", "old", "regional", "central",
            "seasonal", "private", "public", "shared"),
    "outcome": ("a false claim", "a missed deadline", "a costly recall", "an outage",
                "a shortage", "a collapse", "a lost customer", "an injury", "a fine",
                "a wasted season", "a bad decision"),
}

# mechanism templates: {slot} or {slot2} (a second, different draw of the same pool)
MECHANISMS: tuple[str, ...] = (
    "A {copy} of the {source} was trusted as the {source} itself by the {actor}, who did not "
    "check the {source}, so the {adj} {actor2} acted on {outcome}.",
    "The {actor} drew on the shared {resource} {qual}, as did every other {actor2}; each use "
    "looked harmless alone, and together they exhausted the {resource}, causing {outcome}.",
    "Rising {growth} raised the {signal}, which raised the {growth} further: a loop with no "
    "brake that {qual} ran away until it produced {outcome}.",
    "All work had to pass the {stage}; when {growth} grew, the queue before the {stage} grew "
    "{qual}, and the {adj} team downstream waited idle, leading to {outcome}.",
    "The {actor} applied a {fix} to silence the {signal}; the {signal} went away, the cause "
    "stayed, and the {fix} {qual} made the underlying {growth} worse.",
    "Paid by the {incentive} on the {measure}, the {actor} raised the {measure} while the real "
    "goal suffered, so the {measure} stopped meaning what it once meant and {outcome} followed.",
    "The {actor} ignored the {adj} {signal} because the last ten were false alarms; this time "
    "it was real, and the delay {qual} turned into {outcome}.",
    "Two {actor}s each assumed the other had checked the {source}; neither did, so the gap "
    "between them let {outcome} through.",
    "A {adj} change to the {source} {qual} spread to every {copy} that depended on it, and the "
    "{actor} discovered the problem only after {outcome}.",
    "The {actor} cut the {resource} to save money; the saving was visible at once, the cost "
    "arrived {qual} later as {outcome}.",
    "The {actor} kept adding {resource} to the {stage}, but the limit was elsewhere, so the "
    "extra {resource} changed nothing and {outcome} still came.",
    "Because the {signal} lagged behind the {growth}, the {actor} {qual} overcorrected, then "
    "overcorrected back, and the swings ended in {outcome}.",
    "A {adj} {actor} copied what the most successful {actor2} did without the conditions that "
    "made it work, so the same move produced {outcome}.",
    "The {actor} measured only the {measure}, so the {adj} {growth} that the {measure} could "
    "not see grew {qual} until {outcome}.",
    "Once the {actor} had committed the {resource}, each new {signal} was read as a reason to "
    "commit more rather than stop, and the escalation ended in {outcome}.",
    "The {copy} was rebuilt only {qual}, while the {source} changed every hour; the {actor} "
    "read the {copy} between rebuilds and reported {outcome}.",
)


def _fill(template: str, rng: random.Random) -> str:
    out, used = [], {}
    pos = 0
    while True:
        a = template.find("{", pos)
        if a < 0:
            out.append(template[pos:])
            break
        b = template.index("}", a)
        out.append(template[pos:a])
        slot = template[a + 1:b]
        base = slot.rstrip("0123456789")
        if slot not in used:
            taken = {v for k, v in used.items() if k.rstrip("0123456789") == base}
            used[slot] = rng.choice([w for w in POOLS[base] if w not in taken])
        out.append(used[slot])
        pos = b + 1
    text = "".join(out)
    return text[0].upper() + text[1:]


def episodes(n: int, seed: int, prefix: str = "pgv") -> list[dict[str, Any]]:
    """``n`` signature dicts, each with an L2 text made from a mechanism template."""
    rng = random.Random(seed * 7919 + 1)
    base = _casebook_dicts()
    out = synth(base, n, seed)
    for i, d in enumerate(out):
        d["episode_id"] = f"{prefix}-{i}"
        d["levels"] = {**d["levels"], "L2": _fill(MECHANISMS[rng.randrange(len(MECHANISMS))],
                                                  rng)}
    return out


def abstract_l2(recs: list[dict[str, Any]]) -> list[str]:
    """The L2 abstract text of each record, as the embedding channel embeds it."""
    from analogist.index.embed import abstract_texts  # lazy: the embedder package (httpx)
    from analogist.signature import validate_signature  # lazy: pydantic models, on use

    return [abstract_texts(validate_signature(d))["L2"] for d in recs]


def embed_cached(texts: list[str], cache: Path, embed: Callable[[list[str]], np.ndarray],
                 log: Callable[[str], None] = print) -> tuple[np.ndarray, float, float]:
    """The vectors of ``texts`` (chunks found in ``cache`` are reused; missing ones embedded
    and kept); returns the matrix and the wall and CPU seconds spent embedding in this call."""
    cache.mkdir(parents=True, exist_ok=True)
    parts, wall, cpu = [], 0.0, 0.0
    for k in range(0, len(texts), CHUNK):
        chunk = texts[k:k + CHUNK]
        digest = hashlib.sha256("\n".join(chunk).encode("utf-8")).hexdigest()
        f, meta = cache / f"chunk_{k // CHUNK}.npy", cache / f"chunk_{k // CHUNK}.json"
        if f.is_file() and meta.is_file() and json.loads(meta.read_text())["sha256"] == digest:
            parts.append(np.load(f))
            continue
        t, c = time.perf_counter(), time.process_time()
        vecs = np.asarray(embed(chunk), dtype=np.float32)
        wall += time.perf_counter() - t
        cpu += time.process_time() - c
        np.save(f, vecs)
        meta.write_text(json.dumps({"sha256": digest, "n": len(chunk)}))
        parts.append(vecs)
        log(f"embedded {k + len(chunk)}/{len(texts)} ({wall:.0f} s wall, {cpu:.0f} s CPU)")
    return (np.vstack(parts) if parts else np.zeros((0, 0), np.float32)), wall, cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--cache", type=Path, required=True)
    a = ap.parse_args(argv)
    from analogist.index.embed import default_embedder  # lazy: loads the model weights

    emb = default_embedder()
    q = abstract_l2(episodes(a.queries, a.seed + 1, prefix="q"))
    embed_cached(q, a.cache / "queries", emb.embed)
    texts = abstract_l2(episodes(a.n, a.seed))
    embed_cached(texts, a.cache / "store", emb.embed, log=lambda s: print(s, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
