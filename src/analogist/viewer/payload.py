"""Plain functions that build the mapping viewer's JSON: no HTTP here.

:func:`map_payload` compiles two Signatures, maps them with SME and judges the best mapping;
:func:`brief_payload` runs the foresight loop for one corpus event and returns the brief's data
with its coverage chart. The router in :mod:`analogist.viewer.routes` only looks ids up and calls
these.
"""

from __future__ import annotations

import base64
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analogist.description import Description, Expr, to_sexpr
from analogist.foresight.brief import brief_data, coverage_chart
from analogist.foresight.evaluate import POOLS, loo_pool
from analogist.foresight.loop import ForesightParams, run_foresight
from analogist.judge import JudgeParams, judge_mapping
from analogist.params import bounded, check_bounds, one_of
from analogist.signature import Signature, compile_signature
from analogist.sme import match
from analogist.vocabulary import Vocabulary

__all__ = ["BriefParams", "brief_payload", "describe", "map_payload", "signature_gist"]


def signature_gist(sig: Signature) -> str:
    """A one-line summary of an episode: its L1 level when present, else its symptom."""
    for text in (sig.levels.L1, sig.levels.L0, sig.symptom):
        if isinstance(text, str) and text.strip():
            return text.strip()
    return ""


def _entity_key(name: str) -> str:
    return name


def _expr_key(x: Expr) -> str:
    return x.sexpr()


def describe(desc: Description) -> dict[str, Any]:
    """Entities and expressions of a Description, as the page draws them.

    Every element has a ``key``: the entity's name, or the expression's S-expression (unique
    within a Description, since structurally equal expressions are one expression). Expressions
    list their argument keys, their order (1 = over entities only) and whether they are
    top-level (not an argument of another expression).
    """
    roles = desc.metadata.get("roles", {}) if isinstance(desc.metadata, dict) else {}
    top = set(desc.top_level)
    ents = [{"key": _entity_key(e), "name": e, "role": roles.get(e, "")} for e in desc.entities]
    exprs = []
    for x in desc.expressions:
        kind = str(desc.kind_of(x.functor).value)
        exprs.append({
            "key": _expr_key(x),
            "functor": x.functor,
            "kind": kind,
            "order": x.order,
            "args": [_expr_key(a) if isinstance(a, Expr) else _entity_key(a) for a in x.args],
            "top_level": x in top,
        })
    return {"name": desc.name, "entities": ents, "expressions": exprs}


def map_payload(source: Signature, target: Signature, *, vocab: Vocabulary | None = None,
                params: JudgeParams | None = None) -> dict[str, Any]:
    """Map ``source`` onto ``target`` and return everything the viewer draws.

    Keys: ``source`` / ``target`` (id, kind, gist, entities, expressions from
    :func:`describe`), ``correspondences`` (the best SME mapping's entity and expression pairs,
    each ``{"kind", "source", "target"}`` with element keys), ``raw_ses`` (SME's raw score;
    ``score`` is its old name) and ``mapping`` (the mapping's own JSON), ``report`` (:meth:`analogist.judge.AnalogyReport.to_json`: the
    likeness / difference / unknown table, conclusions and transfer verdict) and ``inferences``
    (candidate inferences: S-expression, the base expression it comes from, its skolems).

    The judge is run on the same SME result the correspondences come from
    (:func:`analogist.judge.judge_mapping`, which is what :func:`analogist.judge.judge` does
    after compiling), so the table and the lines can never disagree.
    """
    params = params or JudgeParams()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # proposed (undeclared) terms are accepted, not errors
        sd = compile_signature(source, vocab)
        td = compile_signature(target, vocab)
    result = match(sd, td, params.sme)
    report = judge_mapping(source, target, sd, td, result, params=params)
    best = result.best
    corr: list[dict[str, str]] = []
    infs: list[dict[str, Any]] = []
    if best is not None:
        corr += [{"kind": "entity", "source": _entity_key(b), "target": _entity_key(t)}
                 for b, t in best.entity_pairs]
        corr += [{"kind": "expression", "source": _expr_key(b), "target": _expr_key(t)}
                 for b, t in best.expression_pairs]
        infs = [{"sexpr": ci.sexpr, "base": ci.base.sexpr(), "skolems": list(ci.skolems),
                 "support": [to_sexpr(s) for s in ci.support]} for ci in best.inferences]

    def side(sig: Signature, desc: Description) -> dict[str, Any]:
        return {"id": sig.episode_id, "kind": sig.kind, "gist": signature_gist(sig),
                **describe(desc)}

    return {
        "source": side(source, sd),
        "target": side(target, td),
        "correspondences": corr,
        "raw_ses": best.score if best is not None else 0.0,
        "score": best.score if best is not None else 0.0,
        "mapping": best.to_json() if best is not None else None,
        "report": report.to_json(),
        "inferences": infs,
    }


@dataclass(frozen=True, slots=True)
class BriefParams:
    """How the viewer runs a foresight brief (CANA, seed 001, Algorithm 1).

    Attributes:
        pool: the leave-one-out pool kind of :func:`analogist.foresight.evaluate.loo_pool`.
        max_rows: most hypothesis rows in the coverage chart.
        max_cols: most analogies (columns) in the coverage chart.

    Departure from ``analogist foresight brief``: MAC runs without the text-embedding channel
    (no embedder is loaded inside a web request), so retrieval is structural only.
    """

    pool: str = one_of("loo", POOLS)
    max_rows: int = bounded(24, lo=1, integer=True)
    max_cols: int = bounded(12, lo=1, integer=True)

    def __post_init__(self) -> None:
        check_bounds(self)


def brief_payload(event_id: str, corpus: Any, *, params: BriefParams | None = None
                  ) -> dict[str, Any]:
    """The foresight brief for corpus event ``event_id``, cut at its own cutoff, with the
    leave-one-out pool and the calibrated loop settings; ``chart_png_base64`` holds the coverage
    chart (None with ``chart_note`` saying why when there is nothing to draw)."""
    params = params or BriefParams()
    ev = next((e for e in corpus.events if e.event_id == event_id), None)
    if ev is None:
        raise KeyError(event_id)
    res = run_foresight(ev, loo_pool(ev, corpus, params.pool),
                        params=ForesightParams.calibrated(), corpus=corpus)
    data = brief_data(res)
    with tempfile.TemporaryDirectory(prefix="analogist-viewer-") as d:
        path = Path(d) / "coverage.png"
        note = coverage_chart(res, path, max_rows=params.max_rows, max_cols=params.max_cols)
        png = path.read_bytes() if note is None and path.exists() else None
    return {"event": event_id, "brief": data,
            "chart_png_base64": base64.b64encode(png).decode("ascii") if png else None,
            "chart_note": note}
