"""SME speed benchmark: analogist's engine against the PyPI package ``structuremappingmemory``.

Measures the median CPU time (``time.process_time``) and wall time (``time.perf_counter``) of one
``match`` (after warm-up, many repetitions, each timed) on

* the two reference cases bundled with analogist (heat-water, solar-atom), and
* 24 compiled random Signatures against an analogue of each (10–40 expressions: the
  "signature-sized" family), and
* 24 dense random relational description pairs of the same size (the "dense" family),

for analogist's engine in this process and, in the same run, for the peer package in a subprocess
running its own virtual environment (``benchmarks/_peer_runner.py``). It reports per case our
medians, the peer's, their ratios (peer/ours; CPU time and wall time), our CPU median when the
lazily computed candidate inferences and alignable differences are read as well, and whether each
tool's best mapping agrees with the reference SME's expected result (reference cases) or with the
other tool (random pairs), prints a table, and writes ``benchmarks/results/sme_speed.json``.

Targets (CPU time, medians; reported as pass/fail, never asserted): ≤ 0.2 ms on heat-water, and
≥ 10× faster than the peer on every family (reference cases, signature-sized, dense: the geometric
mean of the family's per-case ratios, with the family's smallest ratio beside it).

Run ``python benchmarks/sme_speed.py --setup-peer`` once to create the peer's environment, then
``python benchmarks/sme_speed.py``. See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from analogist import __version__
from analogist.description import Description
from analogist.examples import EXAMPLES, load_example
from analogist.vocabulary import Predicate, PredicateKind, Vocabulary

HERE = Path(__file__).resolve().parent
DEFAULT_PEER_VENV = HERE / ".venv-peer"
PEER_PACKAGE = "structuremappingmemory==1.2.1"
EXPECTED_CANDIDATES = (
    Path(os.environ["ANALOGIST_SME4_EXPECTED"]) if "ANALOGIST_SME4_EXPECTED" in os.environ
    else None,
    HERE.parent / "tests" / "golden" / "sme4_expected.json",
    HERE.parent.parent / "shared" / "data" / "sme4" / "expected.json",
    Path("/work/shared/data/sme4/expected.json"),
)
TARGET_HEAT_WATER_S = 0.2e-3
TARGET_SPEEDUP = 10.0

# -- random relational descriptions ---------------------------------------------------------------

RELATIONS = ("supports", "blocks", "feeds", "contains", "precedes", "controls")
FUNCTIONS = ("size", "rate", "level")
ATTRIBUTES = ("red", "open", "hot", "broken")


def random_vocabulary() -> Vocabulary:
    """A small vocabulary: binary relations, unary functions and attributes, greater, cause."""
    preds = [Predicate(name=r, kind=PredicateKind.RELATION, arity=2) for r in RELATIONS]
    preds += [Predicate(name=f, kind=PredicateKind.FUNCTION, arity=1) for f in FUNCTIONS]
    preds += [Predicate(name=a, kind=PredicateKind.ATTRIBUTE, arity=1) for a in ATTRIBUTES]
    preds += [Predicate(name="greater", kind=PredicateKind.RELATION, arity=2),
              Predicate(name="cause", kind=PredicateKind.RELATION, arity=2)]
    return Vocabulary.from_predicates(preds, name="bench-random")


def _key(form: Any) -> Any:
    return tuple(_key(x) for x in form) if isinstance(form, list) else form


def _sub_keys(form: Any, out: set[Any]) -> None:
    if isinstance(form, list):
        out.add(_key(form))
        for a in form[1:]:
            _sub_keys(a, out)


def random_forms(rng: random.Random, n_expressions: int, entities: list[str]) -> list[Any]:
    """Top-level forms whose distinct (sub-)expressions number about ``n_expressions``."""
    forms: list[Any] = []
    seen: set[Any] = set()
    tries = 0
    while len(seen) < n_expressions and tries < 50 * n_expressions:
        tries += 1
        r = rng.random()
        a, b = rng.sample(entities, 2)
        if r < 0.35:
            f: Any = [rng.choice(RELATIONS), a, b]
        elif r < 0.55:
            f = [rng.choice(ATTRIBUTES), a]
        elif r < 0.75:
            fn = rng.choice(FUNCTIONS)
            f = ["greater", [fn, a], [fn, b]]
        else:
            if len(forms) < 2:
                continue
            x, y = rng.sample(forms, 2)
            f = ["cause", x, y]
        new: set[Any] = set()
        _sub_keys(f, new)
        if _key(f) in seen or len(seen | new) > n_expressions + 2:
            continue
        seen |= new
        forms.append(f)
    return forms


def _rename(form: Any, mapping: dict[str, str]) -> Any:
    if isinstance(form, list):
        return [form[0], *(_rename(a, mapping) for a in form[1:])]
    return mapping.get(form, form)


@dataclass
class Case:
    name: str
    kind: str  # "reference", "signature" (compiled random Signatures) or "random" (dense)
    base: Description
    target: Description
    expected_pairs: set[tuple[str, str]] | None = None  # reference: expected top mapping
    planted_pairs: set[tuple[str, str]] | None = None  # random: the renaming the target came from


def random_pair(rng: random.Random, index: int, vocab: Vocabulary) -> Case:
    """A base of 10–40 expressions and a target made from it: entities renamed, about a quarter of
    the top-level facts dropped, and a few unrelated facts added."""
    n_ent = rng.randint(3, 7)
    base_ents = [f"b{i}" for i in range(n_ent)]
    n = rng.randint(10, 40)
    base_forms = random_forms(rng, n, base_ents)
    tgt_ents = [f"t{i}" for i in range(n_ent)]
    perm = tgt_ents[:]
    rng.shuffle(perm)
    mapping = dict(zip(base_ents, perm, strict=True))
    kept = [_rename(f, mapping) for f in base_forms if rng.random() > 0.25]
    extra = random_forms(rng, max(2, n // 5), tgt_ents)
    tgt_forms = kept + [f for f in extra if f not in kept]
    base = Description.build(f"random-{index}-base", base_forms, vocab, entities=base_ents)
    target = Description.build(f"random-{index}-target", tgt_forms, vocab, entities=tgt_ents)
    return Case(f"random-{index:02d}", "random", base, target,
                planted_pairs=set(mapping.items()))


EDGE_TYPES = ("causes", "prevents", "enables", "masks", "delays")


def _random_signature_data(rng: random.Random, roles: list[str], n_rel: int, n_edges: int,
                           rel_preds: list[str], state_preds: list[str]) -> dict[str, Any]:
    relations: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    while len(relations) < n_rel:
        a, b = rng.sample(roles, 2)
        r = [rng.choice(rel_preds), a, b]
        if tuple(r) not in seen:
            seen.add(tuple(r))
            relations.append(r)
    atoms = [f"{r[0]}({r[1]},{r[2]})" for r in relations]
    atoms += [f"{rng.choice(state_preds)}({rng.choice(roles)})" for _ in range(max(1, n_rel // 3))]
    chain: list[list[str]] = []
    keys: set[tuple[str, str, str]] = set()
    while len(chain) < n_edges:
        x, y = rng.sample(atoms, 2)
        e = rng.choice(EDGE_TYPES)
        if (x, e, y) not in keys:
            keys.add((x, e, y))
            chain.append([x, e, y])
    return {"episode_id": "bench", "kind": "failure",
            "roles": {r: f"role {r}" for r in roles}, "relations": relations,
            "causal_chain": chain}


def signature_pair(rng: random.Random, index: int) -> Case:
    """A random Signature over the bundled signature vocabulary (3–8 roles, relations between
    roles, causal edges between relation and state atoms), compiled to 10–40 expressions, and an
    analogue of it: roles renamed, about a fifth of the relations and edges dropped, a few new
    relations added — the shape of a candidate on a retrieval shortlist."""
    from analogist.signature import (
        compile_signature,
        default_signature_vocabulary,
        validate_signature,
    )

    vocab = default_signature_vocabulary()
    rel_preds = sorted(p.name for p in vocab if p.kind is PredicateKind.RELATION
                       and p.arity == 2 and p.name not in EDGE_TYPES)
    state_preds = sorted(p.name for p in vocab if p.kind is PredicateKind.ATTRIBUTE)
    while True:
        n_roles = rng.randint(3, 8)
        roles = [f"R{i}" for i in range(n_roles)]
        data = _random_signature_data(rng, roles, rng.randint(4, 14), rng.randint(2, 10),
                                      rel_preds, state_preds)
        base = compile_signature(validate_signature(data), vocab)
        if 10 <= len(base.expressions) <= 40:
            break
    ren = {r: f"Q{i}" for i, r in enumerate(rng.sample(roles, len(roles)))}

    def rn(atom: str) -> str:
        name, args = atom[:-1].split("(")
        return f"{name}({','.join(ren[a] for a in args.split(','))})"

    rels = [[r[0], ren[r[1]], ren[r[2]]] for r in data["relations"] if rng.random() > 0.2]
    kept_atoms = {f"{r[0]}({r[1]},{r[2]})" for r in rels}
    chain = []
    for x, e, y in data["causal_chain"]:
        x2, y2 = rn(x), rn(y)
        ok = all(a in kept_atoms or a.count(",") == 0 for a in (x2, y2))
        if ok and rng.random() > 0.2:
            chain.append([x2, e, y2])
    extra = _random_signature_data(rng, list(ren.values()), 2, 0, rel_preds, state_preds)
    for r in extra["relations"]:
        if r not in rels:
            rels.append(r)
    tdata = {"episode_id": "bench-t", "kind": "failure",
             "roles": {v: f"role {v}" for v in ren.values()}, "relations": rels,
             "causal_chain": chain}
    target = compile_signature(validate_signature(tdata), vocab)
    return Case(f"signature-{index:02d}", "signature", base, target, planted_pairs=set(ren.items()))


def reference_cases(expected_path: Path | None) -> list[Case]:
    expected: dict[str, Any] = {}
    if expected_path is not None:
        data = json.loads(expected_path.read_text(encoding="utf-8"))
        expected = {(c["base"], c["target"]): c for c in data["cases"]}
    out = []
    for name, ex in EXAMPLES.items():
        b, t = load_example(name)
        exp = expected.get((ex.base_file, ex.target_file))
        pairs = ({tuple(p) for p in exp["mappings"][0]["entity_mhs"]} if exp and exp["mappings"]
                 else None)
        out.append(Case(name, "reference", b, t, expected_pairs=pairs))  # type: ignore[arg-type]
    return out


# -- timing ---------------------------------------------------------------------------------------

@dataclass
class Timing:
    median_s: float  # wall
    min_s: float
    cpu_median_s: float
    cpu_min_s: float


def time_call(fn: Callable[[], Any], reps: int, warmup: int) -> tuple[Timing, Any]:
    """Median and minimum wall and CPU time of ``fn()`` over ``reps`` calls after ``warmup``."""
    result = None
    for _ in range(warmup):
        result = fn()
    times = []
    cpu = []
    for _ in range(reps):
        c0 = time.process_time()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return Timing(statistics.median(times), min(times), statistics.median(cpu), min(cpu)), result


def read_everything(res: Any) -> Any:
    """Read every lazily computed part of a match result (inferences, differences)."""
    for m in res.mappings:
        _ = m.inferences, m.alignable_differences
    return res


def to_peer_case(d: Description) -> dict[str, Any]:
    return {"name": d.name, "statements": [e.to_form() for e in d.top_level]}


def ensure_peer_venv(venv: Path, console: Console) -> Path:
    py = venv / "bin" / "python"
    if not py.exists():
        console.print(f"creating peer environment {venv} ...")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", PEER_PACKAGE], check=True,
                   stdin=subprocess.DEVNULL)
    return py


def run_peer(py: Path, cases: list[Case], reps: int, warmup: int, canon: str
             ) -> dict[str, Any]:
    job = {"reps": reps, "warmup": warmup, "canon": canon,
           "cases": [{"name": c.name, "base": to_peer_case(c.base),
                      "target": to_peer_case(c.target)} for c in cases]}
    p = subprocess.run([str(py), str(HERE / "_peer_runner.py")], input=json.dumps(job),
                       capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"peer runner failed (exit {p.returncode}):\n{p.stderr[-2000:]}")
    return json.loads(p.stdout)


# -- main -----------------------------------------------------------------------------------------

def _git_state() -> dict[str, Any] | None:
    """The checkout's commit and whether src/ has uncommitted changes (None outside git)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE.parent, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=HERE.parent,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return {"commit": head, "src_dirty": bool(dirty)}


def _display_path(p: Path | None) -> str | None:
    if p is None:
        return None
    try:
        return str(p.resolve().relative_to(HERE.parent))
    except ValueError:
        return str(p)


def ms(x: float | None) -> str:
    return "—" if x is None else f"{x * 1e3:.3f}"


def yn(x: bool | None) -> str:
    return "—" if x is None else ("yes" if x else "no")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=300, help="timed repetitions per case (ours)")
    ap.add_argument("--peer-reps", type=int, default=50, help="timed repetitions per case (peer)")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--pairs", type=int, default=24, help="random signature-sized pairs")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--peer-venv", type=Path, default=DEFAULT_PEER_VENV)
    ap.add_argument("--setup-peer", action="store_true",
                    help=f"create/update the peer venv with pip install {PEER_PACKAGE}")
    ap.add_argument("--no-peer", action="store_true", help="time analogist only")
    ap.add_argument("--peer-canon", choices=("default", "neutral"), default="default",
                    help="peer canonicalizer: its default (with built-in aliases such as "
                         "pressure/temperature → intensity) or an empty one")
    ap.add_argument("--expected", type=Path, default=None,
                    help="SME v4 expected.json (default: tests/golden or shared data)")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "sme_speed.json")
    args = ap.parse_args(argv)
    console = Console()

    from analogist.sme import match  # the engine under test

    expected_path = args.expected or next(
        (p for p in EXPECTED_CANDIDATES if p is not None and p.is_file()), None)
    rng = random.Random(args.seed)
    vocab = random_vocabulary()
    cases = reference_cases(expected_path)
    cases += [signature_pair(rng, i) for i in range(args.pairs)]
    cases += [random_pair(rng, i, vocab) for i in range(args.pairs)]

    ours: dict[str, dict[str, Any]] = {}
    for c in cases:
        tm, res = time_call(lambda c=c: match(c.base, c.target), args.reps, args.warmup)
        full, _ = time_call(lambda c=c: read_everything(match(c.base, c.target)),
                            max(1, args.reps // 3), args.warmup)
        best = res.mappings[0] if res.mappings else None
        top_score = best.score if best else None
        ours[c.name] = {
            "median_s": tm.median_s, "min_s": tm.min_s, "cpu_median_s": tm.cpu_median_s,
            "cpu_min_s": tm.cpu_min_s, "cpu_median_all_read_s": full.cpu_median_s,
            "reps": args.reps,
            "mh_count": res.mh_count, "kernel_count": res.kernel_count,
            "score": top_score,
            "entity_pairs": [list(p) for p in best.entity_pairs] if best else [],
            "tied_top": [{tuple(p) for p in m.entity_pairs} for m in res.mappings
                         if top_score is not None and math.isclose(m.score, top_score,
                                                                   rel_tol=1e-9)],
        }

    peer: dict[str, Any] | None = None
    peer_note = None
    if not args.no_peer:
        py = args.peer_venv / "bin" / "python"
        if args.setup_peer:
            py = ensure_peer_venv(args.peer_venv, console)
        if py.exists():
            peer = run_peer(py, cases, args.peer_reps, args.warmup, args.peer_canon)
        else:
            peer_note = (f"peer environment {args.peer_venv} missing; run with --setup-peer "
                         "(peer columns left empty)")
    peer_by = {r["name"]: r for r in (peer or {}).get("results", [])}

    rows = []
    for c in cases:
        o, p = ours[c.name], peer_by.get(c.name)
        our_set = {tuple(x) for x in o["entity_pairs"]}
        p_ok = p is not None and p.get("error") is None
        peer_set = {tuple(x) for x in p["entity_pairs"]} if p_ok else None
        row: dict[str, Any] = {
            "case": c.name, "kind": c.kind,
            "base_expressions": len(c.base.expressions),
            "target_expressions": len(c.target.expressions),
            "ours_cpu_median_s": o["cpu_median_s"], "ours_cpu_min_s": o["cpu_min_s"],
            "ours_cpu_median_all_read_s": o["cpu_median_all_read_s"],
            "ours_median_s": o["median_s"], "ours_min_s": o["min_s"],
            "ours_mh_count": o["mh_count"], "ours_kernel_count": o["kernel_count"],
            "ours_score": o["score"], "ours_entity_pairs": o["entity_pairs"],
            "peer_cpu_median_s": p.get("cpu_median_s") if p_ok else None,
            "peer_median_s": p["median_s"] if p_ok else None,
            "peer_score": p["score"] if p_ok else None,
            "peer_entity_pairs": p["entity_pairs"] if p_ok else None,
            "peer_error": p.get("error") if p else None,
        }
        row["ratio_peer_over_ours_cpu"] = (row["peer_cpu_median_s"] / o["cpu_median_s"]
                                           if row["peer_cpu_median_s"] else None)
        row["ratio_peer_over_ours"] = (row["peer_median_s"] / o["median_s"]
                                       if row["peer_median_s"] else None)
        if c.kind == "reference":
            exp = c.expected_pairs
            row["ours_agrees"] = None if exp is None else our_set == exp
            row["peer_agrees"] = None if exp is None or peer_set is None else peer_set == exp
            row["agreement_basis"] = "reference SME v4 expected top mapping (entity pairs)"
        else:
            row["ours_agrees"] = None if peer_set is None else our_set == peer_set
            row["peer_agrees"] = (None if peer_set is None
                                  else any(peer_set == s for s in o["tied_top"]))
            row["agreement_basis"] = ("ours: our top mapping == peer's; peer: peer's == any of "
                                      "our top-scoring (tied) mappings")
            planted = c.planted_pairs or set()
            row["ours_planted_recall"] = len(our_set & planted) / len(planted) if planted else None
            row["peer_planted_recall"] = (len(peer_set & planted) / len(planted)
                                          if planted and peer_set is not None else None)
        rows.append(row)

    hw = next(r for r in rows if r["case"] == "heat-water")

    def geomean(xs: list[float]) -> float | None:
        return math.exp(statistics.fmean(math.log(x) for x in xs)) if xs else None

    def family(kind: str) -> dict[str, Any]:
        rs = [r for r in rows if r["kind"] == kind]
        cpu = [r["ours_cpu_median_s"] for r in rs]
        ratios = [r["ratio_peer_over_ours_cpu"] for r in rs if r["ratio_peer_over_ours_cpu"]]
        wall = [r["ratio_peer_over_ours"] for r in rs if r["ratio_peer_over_ours"]]
        g = geomean(ratios)
        return {"cases": len(rs), "ours_cpu_median_s": statistics.median(cpu) if cpu else None,
                "ours_cpu_geomean_s": geomean(cpu),
                "ours_cpu_median_all_read_s": statistics.median(
                    r["ours_cpu_median_all_read_s"] for r in rs) if rs else None,
                "geometric_mean_ratio_cpu": g, "min_ratio_cpu": min(ratios) if ratios else None,
                "cases_ge_target": sum(x >= TARGET_SPEEDUP for x in ratios),
                "geometric_mean_ratio_wall": geomean(wall),
                "pass": None if g is None else g >= TARGET_SPEEDUP}

    families = {k: family(k) for k in ("reference", "signature", "random")}
    targets = {
        "heat_water_cpu_le_0.2ms": {"value_s": hw["ours_cpu_median_s"],
                                    "pass": hw["ours_cpu_median_s"] <= TARGET_HEAT_WATER_S},
        # per family: reference cases; compiled random Signatures (roles, relations, causal
        # edges; 10-40 expressions); the dense random family (the same size, but a
        # 15-predicate vocabulary with functions and greater-of-function facts that all align
        # with each other)
        **{f"speedup_vs_peer_ge_10x_{k}": v for k, v in families.items()},
    }

    table = Table(title=f"SME speed: analogist {__version__} vs "
                        f"{(peer or {}).get('package', 'peer')} {(peer or {}).get('version', '')}")
    table.add_column("case", no_wrap=True)
    for col in ("exprs b/t", "ours cpu ms", "peer cpu ms", "peer/ours cpu", "ours wall ms",
                "peer/ours wall", "ours ok", "peer ok"):
        table.add_column(col, justify="right" if "ms" in col or "/" in col else "left",
                         min_width=len(col))
    for r in rows:
        ratio, wratio = r["ratio_peer_over_ours_cpu"], r["ratio_peer_over_ours"]
        table.add_row(r["case"], f"{r['base_expressions']}/{r['target_expressions']}",
                      ms(r["ours_cpu_median_s"]),
                      ms(r["peer_cpu_median_s"]) if not r["peer_error"] else "error",
                      "—" if ratio is None else f"{ratio:.1f}×",
                      ms(r["ours_median_s"]),
                      "—" if wratio is None else f"{wratio:.1f}×",
                      yn(r["ours_agrees"]), yn(r["peer_agrees"]))
    console.print(table)
    console.print("ok = top mapping agrees: reference cases with the SME v4 expected top mapping; "
                  "signature and random pairs between the two tools' top entity correspondences.")
    for name, t in targets.items():
        mark = {True: "[green]PASS[/]", False: "[red]FAIL[/]", None: "n/a"}[t["pass"]]
        detail = ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in t.items() if k != "pass")
        console.print(f"target {name}: {mark} ({detail})")
    if peer_note:
        console.print(f"[yellow]{peer_note}[/]")

    report = {
        "benchmark": "sme_speed",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"python": sys.version.split()[0], "implementation":
                    platform.python_implementation(), "platform": platform.platform(),
                    "processor": platform.processor() or platform.machine(),
                    "cpu_count": os.cpu_count()},
        "analogist_version": __version__,
        "analogist_git": _git_state(),
        "peer": None if peer is None else {k: peer[k] for k in
                                           ("package", "version", "python", "canon")},
        "peer_note": peer_note,
        "settings": {"reps": args.reps, "peer_reps": args.peer_reps, "warmup": args.warmup,
                     "pairs": args.pairs, "seed": args.seed, "peer_canon": args.peer_canon,
                     "expected": _display_path(expected_path)},
        "targets": targets,
        "cases": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
