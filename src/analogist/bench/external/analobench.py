"""AnaloBench (Ye et al., 2024) T1 and T2 → ``choice`` and ``retrieval`` items.

Files, in the layout of the project's repository (column names as there; a folder may hold all
of them):

* **T1** CSV (``*T1*.csv``): ``Index``, ``Sentence``, ``Options`` (four comma-separated story
  indices), ``CorrectIndex`` (the index of the analogous story, one of ``Options``) and/or
  ``Label`` (``A``–``D``: its position); an optional ``Story`` column holds the query's long
  story.
* **T2** CSV (``*T2*.csv`` or ``R-*.csv``): ``Index``, ``Sentence``, ``Options`` (about 200
  candidate indices), ``Indices`` (the gold, analogous indices). When ``Indices`` is absent the
  gold is the candidates in the query's cluster (from the clusters file).
* **clusters** file (``clusters*.tsv``; ``cluster`` and ``sentence`` columns): one sentence per
  row; the row number (0-based) is the story index, and sentences of one cluster are analogous.
* **stories** file (``stories*.csv``, optional): the long versions; we assume the columns
  ``Index`` and ``Story`` (``Index`` = the story index above). This column layout is our
  assumption.

The text of story *k* is the stories file's ``Story`` for *k* when given; else the T-file's own
``Story``/``Sentence`` for ``Index`` *k*; else the *k*-th clusters sentence. Indices with no text
are an error naming the line. The query is excluded from its own T2 candidate list. T1 chance is
1/4; T2 reports MAP, MRR and hit@k (chance = the expected hit@1 of a random ranking).
"""

from __future__ import annotations

from pathlib import Path

from analogist.bench.external.base import (
    Benchmark,
    ChoiceItem,
    RetrievalItem,
    find_file,
    index_list,
    read_table,
    text_of,
)
from analogist.bench.external.sample import subsample
from analogist.errors import AnalogistError

LETTERS = "ABCDEFGHIJ"


def _side_files(path: Path) -> tuple[Path | None, Path | None]:
    if path.is_file():
        return None, None
    clusters = find_file(path, ["clusters*.tsv", "clusters*.csv"], "clusters file",
                         required=False)
    stories = find_file(path, ["stories*.csv"], "stories file", required=False)
    return clusters, stories


def _texts(main: Path, rows: list[tuple[int, dict[str, str]]], clusters: Path | None,
           stories: Path | None) -> tuple[dict[int, str], dict[int, str]]:
    """Story index → text, and story index → cluster label (when a clusters file is given)."""
    texts: dict[int, str] = {}
    cluster_of: dict[int, str] = {}
    if clusters is not None:
        for k, (line, r) in enumerate(read_table(clusters, ("cluster", "sentence"))):
            texts[k] = text_of(r, "sentence", clusters, line)
            cluster_of[k] = r["cluster"].strip()
    for line, r in rows:
        k = _int(r, "index", main, line)
        col = "story" if (r.get("story") or "").strip() else "sentence"
        texts[k] = text_of(r, col, main, line)
    if stories is not None:
        for line, r in read_table(stories, ("index", "story")):
            texts[_int(r, "index", stories, line)] = text_of(r, "story", stories, line)
    return texts, cluster_of


def _int(r: dict[str, str], col: str, f: Path, line: int) -> int:
    try:
        return int(str(r.get(col, "")).strip())
    except ValueError:
        raise AnalogistError(f"expected an integer in {col!r}, got {r.get(col)!r}",
                             source=str(f), line=line) from None


def _lookup(texts: dict[int, str], k: int, f: Path, line: int) -> str:
    if k not in texts:
        raise AnalogistError(f"story index {k} has no text (not in the T-file's Index column, "
                             f"the clusters file or the stories file)", source=str(f), line=line)
    return texts[k]


def load_analobench_t1(path: Path, *, seed: int = 0, limit: int | None = None) -> Benchmark:
    """AnaloBench T1: pick the analogous story among four."""
    path = Path(path)
    f = find_file(path, ["*T1*.csv", "*t1*.csv"], "AnaloBench T1 CSV file")
    assert f is not None
    rows = read_table(f, ("index", "sentence", "options"),
                      aliases={"correctindex": ("correct_index",), "label": ("answer",)})
    clusters, stories = _side_files(path)
    texts, _ = _texts(f, rows, clusters, stories)
    items = []
    for line, r in subsample(rows, limit, seed):
        k = _int(r, "index", f, line)
        opts = index_list(r["options"], f, line, "Options")
        if (r.get("correctindex") or "").strip():
            correct = _int(r, "correctindex", f, line)
            if correct not in opts:
                raise AnalogistError(f"CorrectIndex {correct} is not among Options {opts}",
                                     source=str(f), line=line)
            answer = opts.index(correct)
        elif (r.get("label") or "").strip().upper() in LETTERS[: len(opts)]:
            answer = LETTERS.index(r["label"].strip().upper())
        else:
            raise AnalogistError("expected CorrectIndex (one of Options) or Label (A–D)",
                                 source=str(f), line=line)
        items.append(ChoiceItem(f"analobench-t1-{k}", _lookup(texts, k, f, line),
                                tuple(_lookup(texts, o, f, line) for o in opts), answer))
    return Benchmark("analobench-t1", "choice", tuple(items), str(f))


def load_analobench_t2(path: Path, *, seed: int = 0, limit: int | None = None) -> Benchmark:
    """AnaloBench T2: rank about 200 candidate stories; the gold are the analogous ones."""
    path = Path(path)
    f = find_file(path, ["*T2*.csv", "*t2*.csv", "R-*.csv"], "AnaloBench T2 CSV file")
    assert f is not None
    rows = read_table(f, ("index", "sentence", "options"), aliases={"indices": ("gold",)})
    clusters, stories = _side_files(path)
    texts, cluster_of = _texts(f, rows, clusters, stories)
    pool: dict[str, str] = {}
    items = []
    skipped = 0
    for line, r in subsample(rows, limit, seed):
        k = _int(r, "index", f, line)
        cands = [o for o in index_list(r["options"], f, line, "Options") if o != k]
        if (r.get("indices") or "").strip():
            gold = set(index_list(r["indices"], f, line, "Indices"))
        elif cluster_of:
            if k not in cluster_of:
                raise AnalogistError(f"index {k} is not in the clusters file", source=str(f),
                                     line=line)
            gold = {o for o in cands if cluster_of.get(o) == cluster_of[k]}
        else:
            raise AnalogistError("expected an Indices column or a clusters file for the gold",
                                 source=str(f), line=line)
        gold &= set(cands)
        if not gold:
            skipped += 1
            continue
        for o in cands:
            pool[str(o)] = _lookup(texts, o, f, line)
        items.append(RetrievalItem(f"analobench-t2-{k}", _lookup(texts, k, f, line),
                                   tuple(str(o) for o in cands),
                                   frozenset(str(g) for g in gold)))
    if not items:
        raise AnalogistError("no item has a gold story among its candidates", source=str(f))
    notes = (f"{skipped} items without a gold candidate skipped",) if skipped else ()
    return Benchmark("analobench-t2", "retrieval", tuple(items), str(f), pool, notes)
