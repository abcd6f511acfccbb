"""Abstraction checks (seed 000 §9) of the deterministic encoder's L2 on PARB episodes.

For every familiar-domain episode of a generated PARB item set (nonce episodes have no domain to
guess), the encoder writes a signature from the episode's text alone; then

* faithfulness — given only the L2, the judge picks the original text out of it and five
  distractor texts drawn (seeded) from the other episodes: a good abstraction passes (rate well
  above chance, 1/6);
* de-surfacing — given only the L2, the judge guesses the domain among PARB's six domains: a good
  abstraction fails (rate near chance, 1/6).

Judges: the offline embedding judge (USE; cosine of L2 against the candidates / domain names),
and the LLM judge when an LLM is configured (else reported skipped). Rows: the encoder with its
default neutral role tags, the encoder with noun tags (tag_style="noun") for comparison, and the
generator's own gold L2 as a reference. Results per split in
``benchmarks/results/encoder_levels.json``.

    python benchmarks/encoder_levels.py [--items 160] [--seed 1] [--max-episodes 150]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

from rich.console import Console
from rich.progress import track
from rich.table import Table

from analogist.bench.parb.encoded import episode_text
from analogist.bench.parb.items import generate
from analogist.encode.checks import EmbeddingJudge, LLMJudge, de_surfacing, faithfulness
from analogist.encode.deterministic import DeterministicEncoder, EncoderParams
from analogist.index.embed import default_embedder
from analogist.llm.client import default_provider

OUT = Path(__file__).parent / "results" / "encoder_levels.json"


def episodes(n_items: int, seed: int, split: str, cap: int) -> list[dict]:
    seen: dict[str, dict] = {}
    for it in generate(n_items, seed, split).items:
        eps = [it.get("source"), it.get("target")]
        eps += [c["signature"] for c in it.get("candidates") or []]
        eps += [c["signature"] for c in it.get("pool") or []]
        for s in eps:
            if not s or (s.get("surface") or {}).get("domain") in (None, "nonce"):
                continue
            seen.setdefault(s["levels"]["L0"], s)
    return list(seen.values())[:cap]


def run_checks(rows: list[tuple[str, str, str]], domains: list[str], judges: list, seed: int,
               ) -> dict:
    """rows: (text, L2, domain)."""
    out = {}
    for j in judges:
        f = faithfulness([(t, l2) for t, l2, _d in rows], chooser=j, seed=seed)
        d = de_surfacing([(l2, dom) for _t, l2, dom in rows], guesser=j, domains=domains,
                         seed=seed)
        out[j.name] = {"faithfulness": {k: v for k, v in f.to_json().items() if k != "items"},
                       "de_surfacing": {k: v for k, v in d.to_json().items() if k != "items"}}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=160)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-episodes", type=int, default=150)
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    emb = default_embedder()
    judges = [EmbeddingJudge(emb), LLMJudge(default_provider("checks"))]
    writers = {"encoder (neutral tags, default)": DeterministicEncoder(embedder=emb),
               "encoder (noun tags)": DeterministicEncoder(
                   embedder=emb, params=EncoderParams(tag_style="noun"))}
    res: dict = {"command": "python benchmarks/encoder_levels.py " + " ".join(sys.argv[1:]),
                 "items": a.items, "seed": a.seed, "splits": {},
                 "note": "dev split: development data (the encoder was tuned on dev items); "
                         "test split: held-out templates, never used for tuning"}
    with contextlib.suppress(OSError):
        res["git"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True, check=False).stdout.strip()
    console = Console()
    for split in ("dev", "test"):
        eps = episodes(a.items, a.seed, split, a.max_episodes)
        domains = sorted({e["surface"]["domain"] for e in eps})
        sres: dict = {"n_episodes": len(eps), "domains": domains, "rows": {}}
        for name, w in writers.items():
            t0 = time.perf_counter()
            rows = []
            for e in track(eps, description=f"{split}: {name}", console=console,
                           transient=True):
                r = w.encode(episode_text(e), episode_id="x")
                rows.append((e["levels"]["L0"], r.signature.levels.L2 or "(empty)",
                             e["surface"]["domain"]))
            sres["rows"][name] = run_checks(rows, domains, judges, a.seed)
            sres["rows"][name]["encode_seconds"] = round(time.perf_counter() - t0, 2)
        gold = [(e["levels"]["L0"], e["levels"]["L2"], e["surface"]["domain"]) for e in eps]
        sres["rows"]["gold L2 (generator)"] = run_checks(gold, domains, judges, a.seed)
        res["splits"][split] = sres
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    t = Table(title="L2 abstraction checks (embedding judge): faithfulness should be high, "
                    "de-surfacing near chance")
    for c in ("split", "L2 from", "n", "faithfulness [CI] (chance)", "de-surfacing [CI] (chance)"):
        t.add_column(c)
    for split, s in res["splits"].items():
        for name, r in s["rows"].items():
            j = r[judges[0].name]
            f, d = j["faithfulness"], j["de_surfacing"]
            t.add_row(split, name, str(f["n"]),
                      f"{f['rate']:.3f} [{f['ci'][0]:.3f}, {f['ci'][1]:.3f}] ({f['chance']:.3f})",
                      f"{d['rate']:.3f} [{d['ci'][0]:.3f}, {d['ci'][1]:.3f}] ({d['chance']:.3f})")
    console.print(t)
    llm = res["splits"]["dev"]["rows"]["gold L2 (generator)"][judges[1].name]
    console.print(f"LLM judge: {llm['faithfulness'].get('skipped') or 'ran'}")
    console.print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
