"""Plain functions behind ``analogist eval …`` (the typer wrappers in :mod:`analogist.cli` only
parse options, call these and print)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from analogist.errors import AnalogistError
from analogist.io import load_structured
from analogist.memory.sqlite import Memory

from .compare import compare_files, render
from .goldset import (
    GoldSet,
    GoldSetError,
    build_goldset,
    check_goldset,
    load_goldset,
    save_goldset,
)
from .refs import compare_refs
from .runner import run_file


def _existing_store(store: Path | None) -> Path:
    """``store`` (the CLI passes ``$ANALOGIST_STORE`` when ``--store`` is not given, read by
    :func:`analogist.app.env_store`); it must exist."""
    if store is None:
        raise AnalogistError("--store is required (the SQLite store to measure), or set "
                             "ANALOGIST_STORE", field="--store")
    if not Path(store).is_file():
        raise AnalogistError("store file not found", source=str(store))
    return Path(store)


def _paraphrases(path: Path | None) -> list[dict[str, Any]]:
    if path is None:
        return []

    data = load_structured(path)
    if isinstance(data, dict) and isinstance(data.get("paraphrases"), list):
        data = data["paraphrases"]
    if not isinstance(data, list):
        raise GoldSetError("expected a list of {target, text} records (or {paraphrases: [...]})",
                           source=str(path))
    return data


def eval_build(store: Path | None, namespace: str, out: Path,
               paraphrases: Path | None = None,
               progress: Callable[[int, int], None] | None = None) -> GoldSet:
    p = _existing_store(store)
    recs = _paraphrases(paraphrases)
    with Memory.open(p) as m:
        try:
            gold = build_goldset(m, namespace, paraphrases=recs, progress=progress)
        except AnalogistError as e:
            if paraphrases is not None and e.field and e.field.startswith("paraphrases"):
                raise type(e)(e.message, source=str(paraphrases), field=e.field) from None
            raise
    save_goldset(gold, out)
    return gold


def eval_check(gold_path: Path, store: Path | None, namespace: str | None = None) -> list[str]:
    gold = load_goldset(gold_path)
    with Memory.open(_existing_store(store)) as m:
        return check_goldset(gold, m, namespace)


def eval_run(gold_path: Path, store: Path | None, runs: int, retriever: str, out: Path,
             namespace: str | None = None) -> dict[str, Any]:
    return run_file(gold_path, _existing_store(store), retriever, runs, out, namespace)


def eval_compare(a: Path | None, b: Path | None, *, baseline: str | None = None,
                 candidate: str | None = None, gold: Path | None = None,
                 store: Path | None = None, retriever: str = "fused", runs: int = 3,
                 namespace: str | None = None, repo: Path = Path("."),
                 out: Path | None = None) -> tuple[dict[str, Any], str]:
    """Either two result files (``a``, ``b``) or two refs (``baseline``, ``candidate``, with
    ``gold`` and ``store``). Returns the comparison and its text rendering."""
    if baseline is not None or candidate is not None:
        if a is not None or b is not None:
            raise AnalogistError("give either two result files or --baseline/--candidate, "
                                 "not both")
        if not baseline or not candidate:
            raise AnalogistError("--baseline and --candidate go together", field="--candidate"
                                 if baseline else "--baseline")
        if gold is None:
            raise AnalogistError("--gold GOLD.json is required with --baseline/--candidate",
                                 field="--gold")
        cmp = compare_refs(baseline, candidate, gold, _existing_store(store),
                           retriever=retriever, runs=runs, namespace=namespace, repo=repo,
                           out_dir=None if out is None else out.parent)
    else:
        if a is None or b is None:
            raise AnalogistError("give two result files A.json B.json, or --baseline REF "
                                 "--candidate REF")
        cmp = compare_files(a, b)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(cmp, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return cmp, render(cmp)
