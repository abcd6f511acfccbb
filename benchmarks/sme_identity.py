"""SME result identity: write every observable of ``match`` on a fixed set of cases, to compare
two versions of the engine byte for byte.

A change that should not alter results (a faster data layout, lazy parts) is checked by running
this script on both versions and comparing the two files::

    git stash   # or check out the version to compare against
    python benchmarks/sme_identity.py /tmp/sme_before.json
    git stash pop
    python benchmarks/sme_identity.py /tmp/sme_after.json
    python benchmarks/sme_identity.py --compare /tmp/sme_before.json /tmp/sme_after.json

The cases: the reference regression cases (with their parameters), the 60 golden random traces,
the bundled examples (both directions and each description with itself), the signature-sized and
dense families of ``sme_speed.py`` under two seeds, and 440 seeded random description pairs over
the property tests' vocabulary (symmetric and commutative predicates included); a subset also
under four non-default parameter sets. Per result: hypothesis and kernel counts, and per mapping
the score's ``repr``, every correspondence in order, the roots, the candidate inferences (form,
base, support, skolems), the alignable differences and ``to_json()``. Exit status 1 when the two
files differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import sme_speed  # noqa: E402  (the benchmark families)
from tests.sme_strategies import FIRST, HIGHER, VOCAB  # noqa: E402

from analogist.description import Description, to_sexpr  # noqa: E402
from analogist.examples import EXAMPLES, load_example  # noqa: E402
from analogist.sme import MatchResult, SMEParams, identity_score, match  # noqa: E402
from analogist.sme.formats import read_dgr, read_vcb  # noqa: E402

VARIANTS = {
    "default": SMEParams(),
    "no-block": SMEParams(block_most_out_of_mapping_contributions=False),
    "functor-td-cap": SMEParams(functor_trickle_down=True, max_local_score=0.5),
    "no-entity-support": SMEParams(allow_entity_supported_inferences=False,
                                   greedy_max_mappings=6, greedy_cutoff=0.3),
    "td8": SMEParams(trickle_down=8.0, same_function=0.01),
}


def observe(res: MatchResult) -> dict[str, Any]:
    out: dict[str, Any] = {"mh": res.mh_count, "kernels": res.kernel_count, "mappings": []}
    for m in res.mappings:
        out["mappings"].append({
            "score": repr(m.score), "mh": m.mh_count,
            "entities": [list(p) for p in m.entity_pairs],
            "expressions": [[b.sexpr(), t.sexpr()] for b, t in m.expression_pairs],
            "functors": [list(p) for p in m.functor_pairs],
            "roots": [[to_sexpr(b), to_sexpr(t)] for b, t in m.root_pairs],
            "inferences": [[ci.sexpr, ci.base.sexpr(), [to_sexpr(s) for s in ci.support],
                            list(ci.skolems), repr(ci.form)] for ci in m.inferences],
            "differences": [[b.sexpr(), t.sexpr()] for b, t in m.alignable_differences],
            "json": json.dumps(m.to_json()),
        })
    out["json"] = json.dumps(res.to_json())
    return out


def random_description(rng: random.Random, allow_commutative: bool) -> Description:
    """A random description over the property tests' vocabulary (as their strategy draws)."""
    ents = [f"e{i}" for i in range(rng.randint(2, 5))]
    forms: list[Any] = []
    for _ in range(rng.randint(1, 14)):
        kind = rng.choice(FIRST + HIGHER if forms else FIRST)
        if kind in ("r1", "r2", "near"):
            forms.append([kind, *rng.sample(ents, 2)])
        elif kind == "r3":
            forms.append([kind, *[rng.choice(ents) for _ in range(3)]])
        elif kind in ("a1", "a2"):
            forms.append([kind, rng.choice(ents)])
        elif kind == "greater":
            f = rng.choice(["f1", "f2"])
            a, b = rng.sample(ents, 2)
            forms.append(["greater", [f, a], [f, b]])
        else:
            if kind == "and" and not allow_commutative:
                kind = "cause"
            x, y = rng.choice(forms), rng.choice(forms)
            if x != y:
                forms.append([kind, x, y])
    return Description.build("d", forms, VOCAB, entities=ents, strict=True)


def cases() -> Iterator[tuple[str, Description, Description, SMEParams | None, bool]]:
    """(name, base, target, the case's own parameters or None, also under every variant)."""
    data = files("analogist") / "data" / "sme4"
    golden = json.loads((HERE.parent / "tests" / "golden" / "sme4_expected.json").read_text())
    vocab = read_vcb(Path(str(data / golden["vocabulary"])))
    own = SMEParams.from_dict(dict(golden["parameters"]))
    for c in golden["cases"]:
        yield (c["name"], read_dgr(Path(str(data / c["base"])), vocab),
               read_dgr(Path(str(data / c["target"])), vocab), own, True)
    traces = HERE.parent / "tests" / "golden" / "reference_random"
    for p in sorted(traces.glob("pair_*_base.dgr")):
        name = p.name[: -len("_base.dgr")]
        yield (name, read_dgr(p, vocab), read_dgr(traces / f"{name}_target.dgr", vocab), None,
               name < "pair_010")
    for name in EXAMPLES:
        b, t = load_example(name)
        yield name, b, t, None, True
        yield f"{name}-reversed", t, b, None, False
        yield f"{name}-self", b, b, None, False
    for seed in (20240601, 7):
        rng = random.Random(seed)
        rvocab = sme_speed.random_vocabulary()
        for i in range(24):
            c = sme_speed.signature_pair(rng, i)
            yield f"{seed}-{c.name}", c.base, c.target, None, i < 2
        for i in range(24):
            c = sme_speed.random_pair(rng, i, rvocab)
            yield f"{seed}-{c.name}", c.base, c.target, None, i < 2
    rng = random.Random(11)
    for i in range(400):
        b = random_description(rng, i % 3 != 0)
        t = random_description(rng, i % 3 != 0)
        yield f"random-{i}", b, t, None, True
        if i % 10 == 0:
            yield f"random-{i}-self", b, b, None, True


def observe_all() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, b, t, own, all_variants in cases():
        if own is not None:
            out[f"{name}/own"] = observe(match(b, t, own))
        for vname, params in VARIANTS.items():
            if vname == "default" or all_variants:
                out[f"{name}/{vname}"] = observe(match(b, t, params))
        out[f"{name}/identity_score"] = [repr(identity_score(b)), repr(identity_score(t)),
                                         repr(identity_score(b, VARIANTS["functor-td-cap"]))]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", type=Path, help="write the observations here")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args(argv)
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        differ = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        print(f"{len(before)} / {len(after)} observations; {len(differ)} differ")
        for k in differ[:20]:
            print(f"  {k}")
        return 1 if differ else 0
    if args.out is None:
        ap.error("give an output file, or --compare BEFORE AFTER")
    obs = observe_all()
    text = json.dumps(obs, sort_keys=True, indent=0) + "\n"
    args.out.write_text(text, encoding="utf-8")
    print(f"{len(obs)} observations, sha256 {hashlib.sha256(text.encode()).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
