"""PARB private item sets with the holdout rule (seed 000 §14 "Private-history items"; issue 4
item 8).

A private set is a labelled list of targets from an analogist store (your own incidents), with
the earlier episodes that share each target's structure. It is run by :func:`run_private`, a
separate entry point from :func:`analogist.bench.parb.runner.run_parb` (the items are not
generated, and the pool is the whole store, not a per-item pool).

File format (YAML or JSON; ``.json`` is read as JSON, anything else as YAML)::

    store: incidents.db          # an analogist SQLite store, relative to this file
    namespace: default           # the store namespace holding the episodes (default "default")
    items:
      - target: inc-2026-031     # episode id of the target in the store
        keyed: [inc-2025-107, inc-2024-012]   # episode ids that share its structure
        no_match: false          # true: no episode in the store shares its structure
        derived: [inc-2026-031-postmortem]    # optional: episodes derived from the target
      - target: inc-2026-044
        keyed: []
        no_match: true

Rules (violations raise :class:`~analogist.errors.AnalogistError` naming the file and field):
``items`` is a non-empty list; every ``target``, ``keyed`` and ``derived`` id exists in the
store namespace; ``keyed`` is non-empty exactly when ``no_match`` is false; no keyed id equals
the target or is derived from it (it would be held out).

**Holdout rule** (seed 000 §14): "during testing, the target incident and anything derived
from it are removed from the memory snapshot, and the test runs against that snapshot".
Per item the snapshot is every episode of the namespace EXCEPT

* the target itself;
* episodes with the target's ``provenance.source_hash`` (written from the same source text);
* episodes in the target's supersession chain, either direction, transitively
  (:meth:`analogist.memory.sqlite.Memory.supersede` / ``superseded``);
* the item's ``derived`` ids.

The snapshot is checked twice — the pool handed to the arms and the namespace the arms
actually searched — and a violation raises (it is never silently repaired).

Arms: the retrieval arms B, C, D, E by default (any of ``B B' C C' H D E`` may be asked for;
A0/A1 when an LLM ``provider`` is given). The query is the target; the pool the snapshot.
Scoring is :func:`analogist.bench.parb.runner.score_item` on an F3-shaped item (family
``"P"``): recall@k over keyed items (``recall_at_k_all``), historical-claim precision, no-match
specificity, and NAV with U = a keyed source proposed and (D, E) the transfer not blocked;
F = a non-keyed proposal or any proposal on a no-match item; N = 0 (no part keys).

:func:`write_casebook_private` turns the bundled casebook into an example private set.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from analogist.bench.parb import runner as R
from analogist.bench.parb.arms import ArmContext, make_arms
from analogist.bench.parb.report import _ci, _fmt, cost_lines
from analogist.casebook import load_casebook
from analogist.errors import AnalogistError
from analogist.index.embed import default_embedder
from analogist.llm.base import NO_LLM_REASON
from analogist.memory.sqlite import Memory

__all__ = ["PRIVATE_ARMS", "check_holdout", "holdout_ids", "load_private", "run_private",
           "write_casebook_private", "write_casebook_store"]

PRIVATE_ARMS = ("B", "C", "D", "E")
_ALLOWED = ("B", "B'", "C", "C'", "H", "D", "E", "A0", "A1")


def _err(msg: str, path: Path, field: str | None = None) -> AnalogistError:
    return AnalogistError(msg, source=str(path), field=field)


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise _err(f"cannot read private item file: {e}", path) from None
    try:
        return json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        raise _err(f"malformed {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: "
                   f"{str(e)[:300]}", path) from None


def _ids(value: Any, path: Path, field: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
        raise _err("expected a list of episode ids (strings)", path, field)
    return list(value)


def load_private(path: str | Path) -> dict[str, Any]:
    """Parse and validate the shape of a private item file (store ids are checked by
    :func:`run_private`). Returns ``{"path", "store", "namespace", "items"}``."""
    p = Path(path)
    data = _read(p)
    if not isinstance(data, dict):
        raise _err("expected a mapping with 'store', 'namespace' and 'items'", p)
    unknown = sorted(set(data) - {"store", "namespace", "items"})
    if unknown:
        raise _err(f"unknown key(s) {', '.join(unknown)}", p, unknown[0])
    store = data.get("store")
    if not isinstance(store, str) or not store:
        raise _err("'store' must be the path of an analogist SQLite store", p, "store")
    ns = data.get("namespace", "default")
    if not isinstance(ns, str) or not ns:
        raise _err("'namespace' must be a non-empty string", p, "namespace")
    items = data.get("items")
    if not isinstance(items, list) or not items:
        raise _err("'items' must be a non-empty list", p, "items")
    out = []
    for i, it in enumerate(items):
        f = f"items[{i}]"
        if not isinstance(it, dict):
            raise _err("expected a mapping with 'target', 'keyed', 'no_match'", p, f)
        bad = sorted(set(it) - {"target", "keyed", "no_match", "derived"})
        if bad:
            raise _err(f"unknown key(s) {', '.join(bad)}", p, f"{f}.{bad[0]}")
        tgt = it.get("target")
        if not isinstance(tgt, str) or not tgt:
            raise _err("'target' must be an episode id", p, f"{f}.target")
        keyed = _ids(it.get("keyed"), p, f"{f}.keyed")
        nm = it.get("no_match", False)
        if not isinstance(nm, bool):
            raise _err("'no_match' must be true or false", p, f"{f}.no_match")
        if tgt in keyed:
            raise _err(f"keyed id {tgt!r} is the target itself", p,
                       f"{f}.keyed[{keyed.index(tgt)}]")
        if nm and keyed:
            raise _err("a no_match item cannot have keyed sources", p, f"{f}.keyed")
        if not nm and not keyed:
            raise _err("'keyed' is empty: list the matching episodes or set no_match: true",
                       p, f"{f}.keyed")
        out.append({"target": tgt, "keyed": keyed, "no_match": nm,
                    "derived": _ids(it.get("derived"), p, f"{f}.derived")})
    return {"path": p, "store": (p.parent / store), "namespace": ns, "items": out}


def holdout_ids(target: str, episodes: dict[str, Any], superseded: dict[str, str],
                derived: Sequence[str] = ()) -> set[str]:
    """Episode ids held out for ``target``: itself, same source hash, its supersession chain
    (both directions, transitively) and ``derived``. ``episodes``: episode id →
    :class:`~analogist.memory.sqlite.StoredEpisode`; ``superseded``: old id → new id."""
    out = {target, *derived}
    h = episodes[target].source_hash
    if h:
        out |= {e for e, ep in episodes.items() if ep.source_hash == h}
    changed = True
    while changed:                      # close under supersession, both directions
        changed = False
        for old, new in superseded.items():
            if (old in out) != (new in out):
                out |= {old, new}
                changed = True
    return out


def check_holdout(ids: Sequence[str], held_out: set[str], where: str) -> None:
    """Raise if any of ``ids`` is held out (the holdout rule was broken)."""
    bad = sorted(set(ids) & held_out)
    if bad:
        raise AnalogistError(f"holdout violated: {where} contains held-out episode(s) "
                             f"{', '.join(bad[:5])}")


def _build_items(spec: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    p = spec["path"]
    if not spec["store"].exists():
        raise _err(f"store {str(spec['store'])!r} does not exist", p, "store")
    ns = spec["namespace"]
    with Memory.open(spec["store"]) as mem:
        eps = {e.episode_id: e for e in mem.list(ns, include_superseded=True)}
        rowid = {e.id: e.episode_id for e in eps.values()}
        sup = {rowid[a]: rowid[b] for a, b in mem.superseded(ns).items()}
    if not eps:
        raise _err(f"namespace {ns!r} of the store holds no episodes", p, "namespace")
    items, held = [], {}
    for i, it in enumerate(spec["items"]):
        f = f"items[{i}]"
        for fld, ids in (("target", [it["target"]]), ("keyed", it["keyed"]),
                         ("derived", it["derived"])):
            for j, x in enumerate(ids):
                if x not in eps:
                    loc = f"{f}.{fld}" if fld == "target" else f"{f}.{fld}[{j}]"
                    raise _err(f"unknown episode id {x!r} (not in namespace {ns!r} of the "
                               "store)", p, loc)
        out = holdout_ids(it["target"], eps, sup, it["derived"])
        for j, k in enumerate(it["keyed"]):
            if k in out:
                raise _err(f"keyed id {k!r} is derived from the target (same source, "
                           "supersession or 'derived') and would be held out", p,
                           f"{f}.keyed[{j}]")
        pool = [{"episode_id": e, "signature": ep.signature.to_data()}
                for e, ep in eps.items() if e not in out]
        check_holdout([x["episode_id"] for x in pool], out, f"the snapshot of {f}")
        iid = f"private-{i:04d}"
        items.append({"item_id": iid, "family": "P", "split": "private",
                      "template": None, "task": "Have you seen this shape before? Return the "
                      "episodes that share the target's structure, or 'no match'.",
                      "source": None, "target": eps[it["target"]].signature.to_data(),
                      "candidates": [], "pool": pool,
                      "key": {"match_ids": list(it["keyed"]), "no_match": it["no_match"]},
                      "meta": {"target_id": it["target"], "held_out": sorted(out)}})
        held[iid] = sorted(out)
    return items, held


def run_private(path: str | Path, arms: Sequence[str] | None = None,
                out_dir: str | Path = "parb_private_out", provider: Any | None = None,
                embedder: Any | None = None, seed: int = 0, write_report: bool = True,
                ) -> dict[str, Any]:
    """Run the retrieval arms on a private item set under the holdout rule; write
    ``results.json``, ``per_item.jsonl`` and ``report.md`` to ``out_dir``; return the results
    (``results["splits"]["private"]`` has the same shape as a :func:`run_parb` split)."""
    names = [a.replace("′", "'") for a in (arms or PRIVATE_ARMS)]
    bad = [a for a in names if a not in _ALLOWED]
    if bad:
        raise AnalogistError(f"arm(s) {', '.join(bad)} cannot run on private items "
                             f"(allowed: {', '.join(_ALLOWED)})")
    skipped: dict[str, str] = {}
    if provider is None:
        skipped.update({a: NO_LLM_REASON for a in ("A0", "A1") if a in names})
    run_names = [a for a in names if a not in ("A0", "A1") or provider is not None]
    spec = load_private(path)
    items, held = _build_items(spec)
    arm_objs = make_arms(run_names, provider=provider)
    if embedder is None:
        embedder = default_embedder()
    per_arm: dict[str, list[dict[str, Any]]] = {a.name: [] for a in arm_objs}
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="parb-private-") as tmp:
        mem = Memory.open(Path(tmp) / "snap.db")
        try:
            ctx = ArmContext(mem, embedder, seed=seed)
            for item in items:
                pb = ctx.begin(item)
                check_holdout([e for e, _ in pb.pool], set(held[item["item_id"]]),
                              f"the pool of {item['item_id']}")
                for arm in arm_objs:
                    tok0 = R._tokens(arm)
                    t0 = time.perf_counter()
                    o = arm.run(item, ctx)
                    dt = time.perf_counter() - t0
                    tok1 = R._tokens(arm)
                    rec = R.score_item(item, pb, o)
                    if rec["U"] and not o.transfer:          # D/E: transfer blocked
                        rec["U"] = 0
                    rec["_gold"] = list(pb.gold)
                    rec["output"] = o.to_json()
                    rec["wall_s"] = dt
                    rec["tokens"] = None if tok1 is None else tok1 - (tok0 or 0)
                    per_arm[arm.name].append(rec)
                for ns in (item["item_id"], f"{item['item_id']}#shuf"):
                    check_holdout([e.episode_id for e in mem.list(ns, include_superseded=True)],
                                  set(held[item["item_id"]]), f"the searched namespace {ns}")
        finally:
            mem.close()
    usage = {a.name: a.usage() for a in arm_objs if getattr(a, "usage", None) is not None}
    arms_m = {a: R.arm_metrics(rs, seed) for a, rs in per_arm.items()}
    if "E" in per_arm and "D" in per_arm:
        arms_m["E"]["verification_survival"] = R.verification_survival(per_arm["E"],
                                                                       per_arm["D"])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "per_item.jsonl", "w", encoding="utf-8") as fh:
        for i, item in enumerate(items):
            fh.write(json.dumps(R._json_safe({
                "item_id": item["item_id"], "target": item["meta"]["target_id"],
                "held_out": held[item["item_id"]],
                "arms": {a: {k: v for k, v in per_arm[a][i].items()
                             if k not in ("item_id", "family", "split")} for a in per_arm}}),
                sort_keys=True) + "\n")
    results = R._json_safe({
        "kind": "private",
        "manifest": {"items_file": str(spec["path"]), "store": str(spec["store"]),
                     "namespace": spec["namespace"], "n_items": len(items), "seed": seed},
        "representation": "stored",
        "arms_run": [a.name for a in arm_objs], "arms_requested": names,
        "splits": {"private": {"n_items": len(items), "arms": arms_m,
                               "comparisons": R.comparisons(per_arm, seed)}},
        "holdout": {"checked_items": len(items),
                    "held_out_per_item": {k: v for k, v in held.items()}},
        "skipped": skipped, "llm_usage": usage,
        "timing_s": {"total": time.perf_counter() - t_start},
        "definitions": {
            "holdout": "per item the snapshot excludes the target, episodes with its source "
                       "hash, its supersession chain (both directions) and its 'derived' ids",
            "U": "a keyed episode proposed and (D, E) the transfer not blocked",
            "F": "a non-keyed proposal, or any proposal on a no-match item",
            "recall_at_k_all": "share of keyed items with a keyed episode in the arm's top k",
            "nav": "(U - F)/O (no part keys, so N = 0)",
        },
    })
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    if write_report:
        _report(results, out)
    return results


def _report(results: dict[str, Any], out: Path) -> Path:
    m = results["manifest"]
    d = results["splits"]["private"]
    L = ["# PARB private set", "", f"- items file: `{m['items_file']}`",
         f"- store: `{m['store']}` (namespace `{m['namespace']}`), {m['n_items']} items",
         "- holdout: every item's snapshot excludes the target and everything derived from "
         "it (checked on the pool and on the searched namespace)", ""]
    for k, v in results["skipped"].items():
        L.append(f"- {k}: {v}")
    L += ["", "| arm | NAV | NAV CI | U | F | recall@1 | recall@5 | claim precision | "
          "no-match specificity |", "|---|---|---|---|---|---|---|---|---|"]
    for a, x in d["arms"].items():
        rk = x["recall_at_k_all"]
        L.append(f"| {a} | {_fmt(x['nav'])} | {_ci(x['nav_ci'])} | {x['U']} | {x['F']} | "
                 f"{_fmt(rk.get('1'))} | {_fmt(rk.get('5'))} | "
                 f"{_fmt(x['historical_claim_precision'])} | "
                 f"{_fmt(x['no_match_specificity'])} |")
    L += cost_lines(d["arms"])
    L += ["", "## Definitions", ""] + [f"- **{k}**: {v}"
                                       for k, v in results["definitions"].items()]
    p = out / "report.md"
    p.write_text("\n".join(L) + "\n", encoding="utf-8")
    return p


# -- the bundled casebook as an example private set ---------------------------------------------
def write_casebook_store(path: str | Path, namespace: str = "casebook") -> Path:
    """Write every casebook entry (real entries and decoys) into a new store at ``path``."""
    p = Path(path)
    if p.exists():
        raise AnalogistError(f"store {str(p)!r} already exists; not overwriting", source=str(p))
    p.parent.mkdir(parents=True, exist_ok=True)
    with Memory.open(p) as mem:
        mem.add_many([e.signature for e in load_casebook()], namespace=namespace)
    return p


def write_casebook_private(out_dir: str | Path, namespace: str = "casebook",
                           max_items: int | None = None) -> Path:
    """The casebook as a private set: ``casebook.db`` plus ``casebook_private.yaml`` in
    ``out_dir``. Each real entry is a target keyed to the other real entries of its mechanism;
    decoy entries are in the store (never keyed) and are themselves no-match targets when no
    other entry shares their mechanism. ``max_items`` keeps the first items (tests)."""
    d = Path(out_dir)
    write_casebook_store(d / "casebook.db", namespace)
    entries = load_casebook()
    items = []
    for e in entries:
        same = [x.id for x in entries if x.mechanism == e.mechanism and x.id != e.id
                and not x.is_decoy]
        if not e.is_decoy and same:
            items.append({"target": e.id, "keyed": same, "no_match": False})
        elif e.is_decoy and not same:
            items.append({"target": e.id, "keyed": [], "no_match": True})
    if max_items is not None:
        real = [x for x in items if not x["no_match"]]
        nm = [x for x in items if x["no_match"]]
        half = max_items // 2
        items = real[: max_items - min(half, len(nm))] + nm[: min(half, len(nm))]
    spec = {"store": "casebook.db", "namespace": namespace, "items": items}
    p = d / "casebook_private.yaml"
    p.write_text("# PARB private set generated from the bundled casebook "
                 "(analogist.bench.parb.private.write_casebook_private)\n"
                 + yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return p
