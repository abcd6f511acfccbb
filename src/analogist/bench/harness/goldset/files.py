"""A gold set's JSON files: validated loading (one clear error naming the file and field), saving,
and the capped JSON reading the harness's other files share (see
:mod:`analogist.bench.harness.goldset`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from analogist.errors import AnalogistError
from analogist.io import json_depth_check, read_text

from .model import (
    CATEGORIES,
    FORMAT,
    GoldQuery,
    GoldSet,
    GoldSetError,
    GoldSetParams,
)


def _req(d: Mapping[str, Any], key: str, typ: type | tuple[type, ...], where: str,
         source: str) -> Any:
    if key not in d:
        raise GoldSetError(f"missing field {key!r}", source=source, field=f"{where}.{key}"
                           if where else key)
    v = d[key]
    if not isinstance(v, typ) or isinstance(v, bool) and typ is not bool:
        raise GoldSetError(f"field {key!r} has the wrong type ({type(v).__name__})",
                           source=source, field=f"{where}.{key}" if where else key)
    return v


def _ids(v: Any, where: str, source: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise GoldSetError("expected a list of episode ids", source=source, field=where)
    return tuple(v)


def goldset_from_json(data: Any, source: str = "<gold set>") -> GoldSet:
    """Validate and load a gold set's JSON (the inverse of :meth:`GoldSet.to_json`)."""
    if not isinstance(data, dict):
        raise GoldSetError("expected a JSON object", source=source)
    if data.get("format") != FORMAT:
        raise GoldSetError(f"format must be {FORMAT!r}, got {data.get('format')!r}",
                           source=source, field="format")
    ns = _req(data, "namespace", str, "", source)
    fp = _req(data, "store_fingerprint", str, "", source)
    eps = _req(data, "episodes", int, "", source)
    raw_params = _req(data, "params", dict, "", source)
    try:
        params = GoldSetParams(**raw_params)
    except TypeError as e:
        raise GoldSetError(f"bad params: {e}", source=source, field="params") from None
    qs = _req(data, "queries", list, "", source)
    out: list[GoldQuery] = []
    seen: set[str] = set()
    for i, q in enumerate(qs):
        w = f"queries[{i}]"
        if not isinstance(q, dict):
            raise GoldSetError("expected an object", source=source, field=w)
        qid = _req(q, "id", str, w, source)
        if qid in seen:
            raise GoldSetError(f"query id {qid!r} repeats", source=source, field=f"{w}.id")
        seen.add(qid)
        cat = _req(q, "category", str, w, source)
        if cat not in CATEGORIES:
            raise GoldSetError(f"category must be one of {', '.join(CATEGORIES)}, got {cat!r}",
                               source=source, field=f"{w}.category")
        text = _req(q, "text", str, w, source)
        expected = _ids(q.get("expected"), f"{w}.expected", source)
        if cat != "nonsense" and not expected:
            raise GoldSetError("expected must name at least one episode id", source=source,
                               field=f"{w}.expected")
        if cat == "nonsense" and expected:
            raise GoldSetError("a nonsense query expects no episode", source=source,
                               field=f"{w}.expected")
        sig = q.get("signature")
        if sig is not None and not isinstance(sig, dict):
            raise GoldSetError("signature must be an object or null", source=source,
                               field=f"{w}.signature")
        if not text.strip() and sig is None:
            raise GoldSetError("a query needs text or a signature", source=source,
                               field=f"{w}.text")
        chk = q.get("check") or {}
        if not isinstance(chk, dict):
            raise GoldSetError("check must be an object", source=source, field=f"{w}.check")
        out.append(GoldQuery(qid, cat, text, expected, _req(q, "derivation", str, w, source),
                             sig, _ids(q.get("exclude", []), f"{w}.exclude", source),
                             _ids(q.get("stale", []), f"{w}.stale", source), chk))
    if not out:
        raise GoldSetError("the gold set has no queries", source=source, field="queries")
    return GoldSet(ns, fp, eps, params, tuple(out))


def read_json_file(path: str | Path, *, error: type[AnalogistError] = AnalogistError) -> Any:
    """Parse a harness JSON file (gold set or run result) read through
    :func:`analogist.io.read_text` (size cap, UTF-8, no NUL) and
    :func:`analogist.io.json_depth_check` (nesting limit); failures raise ``error`` naming the
    file (and the line for malformed or too deeply nested JSON)."""
    p = Path(path)
    try:
        text = read_text(p)
        json_depth_check(text, source=str(p))
    except AnalogistError as e:
        raise error(e.message, source=str(p), line=e.line) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"not JSON: {e.msg}", source=str(p), line=e.lineno) from None


def load_goldset(path: str | Path) -> GoldSet:
    return goldset_from_json(read_json_file(path, error=GoldSetError), source=str(path))


def save_goldset(gold: GoldSet, path: str | Path) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(gold.to_json(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
