"""The historical-analogy set of Li et al. (2024, "Past Meets Present") → ``retrieval`` items.

Files (JSON lines, field names as in the public release):

* **targets** (``*analogy*.jsonl``; e.g. one file of popular and one of general analogies):
  ``event_name``, ``event_intro`` and ``target_event`` — the name of the analogous historical
  event (a list of names is accepted too);
* **event pool** (``event_pool*.jsonl``): ``history_event_text`` (the event's name),
  ``history_intro_text`` (its description; the name stands in when it is empty) and ``url``.

The task: rank the pool for each target by its description (``event_intro``); the gold are the
pool events whose name equals a ``target_event`` (case and white space ignored). The target's own
event is removed from its candidate list. Targets whose gold is not in the pool are skipped and
counted in the notes. Each targets file is a condition (its file stem). PATH may be the folder
or one targets file (the pool is then looked up next to it).
"""

from __future__ import annotations

from pathlib import Path

from analogist.bench.external.base import (
    Benchmark,
    RetrievalItem,
    find_file,
    read_jsonl,
    text_of,
)
from analogist.bench.external.sample import subsample
from analogist.errors import AnalogistError


def _key(name: str) -> str:
    return " ".join(name.lower().split())


def load_historical(path: Path, *, seed: int = 0, limit: int | None = None) -> Benchmark:
    """Load the historical-analogy retrieval task from its targets and event-pool files."""
    path = Path(path)
    if not path.exists():
        raise AnalogistError("no such file or folder", source=str(path))
    folder = path if path.is_dir() else path.parent
    pool_file = find_file(folder, ["event_pool*.jsonl", "*pool*.jsonl"], "event pool file")
    assert pool_file is not None
    if path.is_file():
        if path.resolve() == pool_file.resolve():
            raise AnalogistError("this is the event pool; give the targets file or the folder",
                                 source=str(path))
        target_files = [path]
    else:
        target_files = sorted(p for p in folder.glob("*.jsonl")
                              if p.is_file() and p.resolve() != pool_file.resolve())
        if not target_files:
            raise AnalogistError("no targets file (*.jsonl other than the event pool) found",
                                 source=str(folder))
    pool: dict[str, str] = {}
    ids_by_name: dict[str, list[str]] = {}
    for line, r in read_jsonl(pool_file):
        name = text_of(r, "history_event_text", pool_file, line)
        intro = r.get("history_intro_text")
        text = " ".join(intro.split()) if isinstance(intro, str) and intro.strip() else name
        pid = f"pool{line}"
        pool[pid] = text
        ids_by_name.setdefault(_key(name), []).append(pid)
    rows = []
    for tf in target_files:
        for line, r in read_jsonl(tf):
            rows.append((tf, line, r))
    items = []
    skipped = 0
    for tf, line, r in subsample(rows, limit, seed):
        name = text_of(r, "event_name", tf, line)
        intro = text_of(r, "event_intro", tf, line)
        tgt = r.get("target_event")
        names = [tgt] if isinstance(tgt, str) else tgt
        if not isinstance(names, list) or not names or not all(
                isinstance(n, str) and n.strip() for n in names):
            raise AnalogistError(f"expected 'target_event' as a name or a list of names, got "
                                 f"{tgt!r}"[:200], source=str(tf), line=line)
        gold = {pid for n in names for pid in ids_by_name.get(_key(n), [])}
        own = set(ids_by_name.get(_key(name), []))
        gold -= own
        if not gold:
            skipped += 1
            continue
        cands = tuple(pid for pid in pool if pid not in own)
        items.append(RetrievalItem(f"historical-{tf.stem}-{line}", intro, cands,
                                   frozenset(gold), tf.stem))
    if not items:
        raise AnalogistError("no target has its analogous event in the pool",
                             source=str(pool_file))
    notes = (f"{skipped} targets whose analogous event is not in the pool skipped",) \
        if skipped else ()
    return Benchmark("historical", "retrieval", tuple(items), str(folder), pool, notes)
