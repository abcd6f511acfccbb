"""The historical-analogy set of Li et al. (2024, "Past Meets Present: Creating Historical
Analogy with Large Language Models") → ``retrieval`` items.

The three published files (``dataset/`` in the authors' repository), told apart by their keys:

* ``event_pool.jsonl`` (variant ``pool``): the candidate historical events — ``url``,
  ``history_event_text`` (the name), ``history_time_text``, ``history_intro_text``;
* ``popular_analogy.jsonl`` (variant ``popular``): ``event_name``, ``event_intro`` and
  ``target_event`` — the historical event commonly compared with it;
* ``general_analogy.jsonl`` (variant ``general``): ``event_name``, ``event_intro``,
  ``event_type`` — no reference analogue (the authors judge answers for these with a language
  model on several similarity dimensions, which we do not reproduce: the file is counted, not
  scored).

The scored task is the authors' retrieval setting on the popular analogies: rank the event pool
by the target's description (``event_intro``); the gold are the pool events whose name equals
``target_event`` (case and white space ignored); the target's own event is taken out of its
candidates. Pool events with no name (the published pool has one) are skipped and counted, as
are targets whose analogue is not in the pool.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from analogist.bench.external.base import (
    Benchmark,
    RetrievalItem,
    choose_variant,
    clean,
    find_files,
    read_jsonl,
)
from analogist.bench.external.sample import subsample
from analogist.errors import AnalogistError
from analogist.io import json_depth_check

POOL = ("history_event_text", "history_intro_text")
POPULAR = ("event_name", "event_intro", "target_event")
GENERAL = ("event_name", "event_intro", "event_type")
VARIANTS = ("popular", "general", "pool")


def _key(name: str) -> str:
    return " ".join(name.lower().split())


def _kind(path: Path) -> str | None:
    """The variant a JSON-lines file holds, from the keys of its first object."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(1 << 22).decode("utf-8")
        json_depth_check(first)          # a sniff: too deep is "not this kind", not a crash
        obj = json.loads(first)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AnalogistError):
        return None
    if not isinstance(obj, dict):
        return None
    keys = set(obj)
    for v, req in (("pool", POOL), ("popular", POPULAR), ("general", GENERAL)):
        if set(req) <= keys:
            return v
    return None


def variants_in(path: Path) -> dict[str, Path]:
    """Variant → file for the historical-analogy files at ``path``."""
    found: dict[str, Path] = {}
    for f in find_files(path, ["*.jsonl"]):
        k = _kind(f)
        if k is not None:
            found.setdefault(k, f)
    return found


def _pool(f: Path, skipped: Counter[str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    rows, bad = read_jsonl(f, POOL, "historical event pool")
    skipped.update(bad)
    pool: dict[str, str] = {}
    ids_by_name: dict[str, list[str]] = {}
    for line, r in rows:
        name, intro = clean(r.get("history_event_text")), clean(r.get("history_intro_text"))
        if not name:
            skipped["pool event with an empty history_event_text"] += 1
            continue
        pid = f"pool{line}"
        pool[pid] = intro or name
        ids_by_name.setdefault(_key(name), []).append(pid)
    return pool, ids_by_name


def load_historical(path: Path, *, seed: int = 0, limit: int | None = None,
                    variant: str | None = None) -> Benchmark:
    """Load one file of the historical-analogy set (see the module docstring)."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    found = variants_in(path)
    if path.is_file() and not found:
        read_jsonl(path, POPULAR, "historical-analogy file")     # raises the expected keys
        raise AnalogistError("not a file of the historical-analogy set; expected the keys "
                             f"{', '.join(POOL)} or {', '.join(POPULAR)} or "
                             f"{', '.join(GENERAL)}", source=str(path))
    variant, f = choose_variant(found, variant, "historical-analogy", VARIANTS, path)
    skipped: Counter[str] = Counter()
    if variant == "pool":
        pool, _ = _pool(f, skipped)
        return Benchmark("historical", "retrieval", (), str(f), variant="pool",
                         counts={"events": len(pool)}, skipped=dict(skipped), scorable=False)
    req = POPULAR if variant == "popular" else GENERAL
    rows, bad = read_jsonl(f, req, f"historical {variant}-analogy file")
    skipped.update(bad)
    if variant == "general":
        n = sum(1 for _, r in rows if clean(r.get("event_name")) and clean(r.get("event_intro")))
        if len(rows) > n:
            skipped["target without a name or description"] += len(rows) - n
        return Benchmark("historical", "retrieval", (), str(f), variant="general",
                         counts={"targets": n}, skipped=dict(skipped), scorable=False,
                         notes=("no reference analogues in this file (the authors judge "
                                "answers with a language model): counted, not scored",))
    pool_file = variants_in(folder).get("pool")
    if pool_file is None:
        raise AnalogistError("the popular analogies are ranked against the event pool; put "
                             "event_pool.jsonl (keys " + ", ".join(POOL) + ") beside it",
                             source=str(folder))
    pool, ids_by_name = _pool(pool_file, skipped)
    items = []
    for line, r in rows:
        name, intro = clean(r.get("event_name")), clean(r.get("event_intro"))
        tgt = r.get("target_event")
        names = [tgt] if isinstance(tgt, str) else tgt if isinstance(tgt, list) else []
        names = [n for n in names if isinstance(n, str) and n.strip()]
        if not (name and intro and names):
            skipped["target without a name, description or target_event"] += 1
            continue
        own = set(ids_by_name.get(_key(name), []))
        gold = {pid for n in names for pid in ids_by_name.get(_key(n), [])} - own
        if not gold:
            skipped["target whose analogue is not in the pool"] += 1
            continue
        cands = tuple(pid for pid in pool if pid not in own)
        items.append(RetrievalItem(f"historical-{line}", intro, cands, frozenset(gold)))
    if not items:
        raise AnalogistError("no target has its analogous event in the pool", source=str(f))
    counts = {"targets": len(rows), "scored targets": len(items), "pool events": len(pool)}
    return Benchmark("historical", "retrieval", tuple(subsample(items, limit, seed)), str(f),
                     pool, variant="popular", counts=counts, skipped=dict(skipped))
