"""AnaloBench (Ye et al., 2024) T1 and T2 → ``choice`` and ``retrieval`` items.

The published ``data/`` folder of the authors' repository holds, besides model outputs:

* ``clusters.tsv`` — ``cluster, sentence``: the 340 one-sentence stories; row *k* (0-based,
  after the header) is story *k*, and the stories of one cluster are analogous;
* ``stories-10.csv`` / ``stories-30.csv`` — ``cluster, sentence, story``: each sentence
  expanded to a story of about 10 / 30 sentences (matched to story *k* by its sentence);
* ``AnaloBench-T1-{Full,Subset}-Base.csv`` — ``Index, Sentence, Options, CorrectIndex,
  Label``: a query sentence and four candidate story indices, ``CorrectIndex`` the analogous
  one, ``Label`` its letter;
* ``AnaloBench-T1-{Full,Subset}-S1.csv`` — ``Index, Sentence, Options, Label``: the same with
  the four candidates written out as ``A. …`` to ``D. …`` lines;
* ``AnaloBench-T2-Base.csv`` (an earlier name: ``R-Base.csv``) — ``Index, Sentence, Options,
  Indices``: the query story, a bank of 200 candidate indices and, in ``Indices``, the 1-based
  positions in ``Options`` of the analogous ones.

Variants (``--variant``): ``t1-full-base``, ``t1-full-s1``, ``t1-subset-base``,
``t1-subset-s1``, ``t2-base``. T1 is the authors' choose-1-of-4 task (chance 1/4); T2 retrieves
the analogous stories from the bank (MAP and recall@10; chance = expected hit@1). The authors
vary the story length; so do we: a Base variant is scored at every length whose texts are in the
folder — ``S1`` (the sentence), ``S10``, ``S30`` (the stories files) — each length a cell. The
S1 files carry their own texts and give the ``S1`` cell only.

Rows with an unreadable index list, an index with no text, or a key not among the options are
skipped and counted.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from analogist.bench.external.base import (
    Benchmark,
    ChoiceItem,
    RetrievalItem,
    choose_variant,
    clean,
    find_files,
    index_list,
    read_rows,
)
from analogist.bench.external.sample import subsample
from analogist.errors import AnalogistError

T1_BASE = ("index", "sentence", "options", "correctindex", "label")
T1_S1 = ("index", "sentence", "options", "label")
T2_BASE = ("index", "sentence", "options", "indices")
CLUSTERS = ("cluster", "sentence")
STORIES = ("cluster", "sentence", "story")
VARIANTS = ("t1-full-base", "t1-full-s1", "t1-subset-base", "t1-subset-s1", "t2-base")
LETTERS = "ABCDEFGHIJ"
_NAME = re.compile(r"t1-(full|subset)-(base|s1)\.csv$|(?:t2-base|^r-base)\.csv$")
_OPTION = re.compile(r"^\s*([A-J])[.)]\s*(.*)$")


def _variant_of(f: Path) -> str | None:
    m = _NAME.search(f.name.lower())
    if not m:
        return None
    return f"t1-{m.group(1)}-{m.group(2)}" if m.group(1) else "t2-base"


def resolve(path: Path, variant: str | None) -> tuple[str, Path]:
    path = Path(path)
    if path.is_file():
        v = _variant_of(path)
        if v is None:
            lay = read_rows(path, {"t2-base": T2_BASE, "t1-base": T1_BASE, "t1-s1": T1_S1},
                            "AnaloBench T1/T2 CSV").layout
            v = {"t1-base": "t1-subset-base", "t1-s1": "t1-subset-s1"}.get(lay, lay)
        return v, path
    return choose_variant(variants_in(path), variant, "AnaloBench", VARIANTS, path)


def variants_in(folder: Path) -> dict[str, Path]:
    """Variant → file for the AnaloBench T1/T2 files in ``folder`` (by their published
    names)."""
    return {v: f for f in find_files(folder, ["*.csv"]) if (v := _variant_of(f)) is not None}


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def _texts(folder: Path, skipped: Counter[str]) -> tuple[dict[str, dict[int, str]],
                                                         dict[str, int]]:
    """Length → {story index → text}, and sentence → story index (from ``clusters.tsv``)."""
    texts: dict[str, dict[int, str]] = {}
    index_of: dict[str, int] = {}
    cl = folder / "clusters.tsv"
    if cl.is_file():
        t = read_rows(cl, {"clusters": CLUSTERS}, "AnaloBench clusters file")
        skipped.update({f"clusters.tsv: {k}": v for k, v in t.skipped.items()})
        texts["S1"] = {}
        for k, (_, r) in enumerate(t.rows):
            s = clean(r["sentence"])
            if s:
                texts["S1"][k] = s
                index_of.setdefault(_norm(s), k)
    for length, name in (("S10", "stories-10.csv"), ("S30", "stories-30.csv")):
        f = folder / name
        if not f.is_file():
            continue
        t = read_rows(f, {"stories": STORIES}, "AnaloBench stories file")
        skipped.update({f"{name}: {k}": v for k, v in t.skipped.items()})
        by_k: dict[int, str] = {}
        for row_k, (_, r) in enumerate(t.rows):
            story = clean(r["story"])
            k = index_of.get(_norm(r["sentence"]), row_k if not index_of else None)
            if k is None or not story:
                skipped[f"{name}: story not matched to a clusters sentence"] += 1
                continue
            by_k.setdefault(k, story)
        texts[length] = by_k
    return texts, index_of


def _query_index(r: dict[str, str], index_of: dict[str, int], subset: bool) -> int | None:
    k = index_of.get(_norm(r["sentence"]))
    if k is None and subset and r["index"].strip().isdigit():
        k = int(r["index"])
    return k


def _s1_options(raw: str) -> dict[str, str]:
    out: dict[str, str] = {}
    cur = None
    for line in raw.splitlines():
        m = _OPTION.match(line)
        if m:
            cur = m.group(1)
            out[cur] = m.group(2)
        elif cur is not None and line.strip():
            out[cur] += " " + line.strip()
    return {k: clean(v) for k, v in out.items()}


def load_analobench(path: Path, *, seed: int = 0, limit: int | None = None,
                    variant: str | None = None) -> Benchmark:
    """Load one AnaloBench variant from the published ``data/`` folder (or one of its files)."""
    variant, f = resolve(Path(path), variant)
    folder = f.parent
    skipped: Counter[str] = Counter()
    if variant.endswith("-s1"):
        t = read_rows(f, {"t1-s1": T1_S1}, "AnaloBench T1 S1 CSV")
        skipped.update(t.skipped)
        items: list = []
        for line, r in t.rows:
            q, opts = clean(r["sentence"]), _s1_options(r["options"])
            lab = r["label"].strip().upper()
            letters = [c for c in LETTERS if c in opts]
            if not q or len(letters) < 2 or not all(opts[c] for c in letters):
                skipped["row with an unreadable query or options"] += 1
                continue
            if lab not in letters:
                skipped["Label not among the options"] += 1
                continue
            items.append(ChoiceItem(f"analobench-{variant}-{r['index'].strip() or line}", q,
                                    tuple(opts[c] for c in letters), letters.index(lab), "S1"))
        return _bench(variant, "choice", items, f, {}, {"rows": len(items)}, skipped, limit,
                      seed)
    texts, index_of = _texts(folder, skipped)
    subset = "subset" in variant or variant == "t2-base"
    t = read_rows(f, {"t2": T2_BASE} if variant == "t2-base" else {"t1": T1_BASE},
                  f"AnaloBench {variant} CSV")
    skipped.update(t.skipped)
    own_s1 = {int(r["index"]): clean(r["sentence"]) for _, r in t.rows
              if subset and r["index"].strip().isdigit() and clean(r["sentence"])}
    if "S1" not in texts and own_s1:
        texts["S1"] = own_s1                       # a Subset/T2 file alone: its own sentences
        index_of = {_norm(s): k for k, s in own_s1.items()}
    if not texts:
        raise AnalogistError("the Base files hold story indices only; put clusters.tsv "
                             "(columns cluster, sentence) beside this file", source=str(f))
    rows = []
    for line, r in t.rows:
        opts = index_list(r["options"])
        k = _query_index(r, index_of, subset)
        if opts is None or k is None:
            skipped["row with an unreadable index list or an unknown query"] += 1
            continue
        if variant == "t2-base":
            pos = index_list(r["indices"])
            if pos is None or not all(1 <= p <= len(opts) for p in pos):
                skipped["Indices not 1-based positions in Options"] += 1
                continue
            gold = {opts[p - 1] for p in pos} - {k}
            rows.append((line, k, [o for o in opts if o != k], gold))
        else:
            try:
                correct = int(r["correctindex"].strip())
            except ValueError:
                correct = -1
            if correct not in opts:
                skipped["CorrectIndex not among Options"] += 1
                continue
            lab = r["label"].strip().upper()
            if lab in LETTERS and LETTERS.index(lab) != opts.index(correct):
                skipped["Label and CorrectIndex disagree (CorrectIndex used)"] += 1
            rows.append((line, k, opts, {correct}))
    pool: dict[str, str] = {}
    out: list = []
    for length, tx in texts.items():
        for line, k, opts, gold in rows:
            if k not in tx or not all(o in tx for o in opts):
                skipped[f"{length}: item with a story index that has no text"] += 1
                continue
            iid = f"analobench-{variant}-{line}-{length}"
            if variant == "t2-base":
                for o in opts:
                    pool[f"{length}:{o}"] = tx[o]
                if not gold & set(opts):
                    skipped[f"{length}: query without an analogue in its bank"] += 1
                    continue
                out.append(RetrievalItem(iid, tx[k], tuple(f"{length}:{o}" for o in opts),
                                         frozenset(f"{length}:{g}" for g in gold), length))
            else:
                (g,) = gold
                out.append(ChoiceItem(iid, tx[k], tuple(tx[o] for o in opts), opts.index(g),
                                      length))
    counts = {"rows": len(rows), "items": len(out), "lengths": len(texts)}
    task = "retrieval" if variant == "t2-base" else "choice"
    return _bench(variant, task, out, f, pool, counts, skipped, limit, seed)


def _bench(variant: str, task: str, items: list, f: Path, pool: dict[str, str],
           counts: dict[str, int], skipped: Counter[str], limit: int | None,
           seed: int) -> Benchmark:
    if not items:
        raise AnalogistError("no usable item in this file", source=str(f))
    items = subsample(items, limit, seed)
    if pool:
        used = {c for it in items for c in it.candidates}
        pool = {k: v for k, v in pool.items() if k in used}
    return Benchmark("analobench", task, tuple(items), str(f), pool,  # type: ignore[arg-type]
                     variant=variant, counts=counts, skipped=dict(skipped))

