"""Plan reuse: role-parameterised plans, instantiated through a mapping, with marked gaps.

Seed 000 §12. A successful multi-step solution is stored as a **role-parameterised plan**: its
goal is a Signature (the problem it solved) and each step is an operator over the goal's role
tags with its **preconditions** (atoms over those roles) and the **reason** it was taken — a
derivational trace, whose replay tolerates larger differences than copying steps (Carbonell 1986;
Veloso 1994). Case-based planning pays only when cases are near (Hammond 1989, CHEF); in the worst
case plan modification is no easier than planning from scratch (Nebel & Koehler 1995); macros
speed search but too many widen the branching factor (Korf 1985; Botea et al. 2005, Macro-FF).

* :func:`retrieve_plans` ranks stored plans by how much of their goal signature maps onto the
  target (SME score over the plan goal's self-match score);
* :func:`instantiate` maps the goal's roles onto the target's (SME, Falkenhainer, Forbus &
  Gentner 1989), rewrites every step, and marks each precondition ``holds`` (its projection is
  stated in the target: a relation or a causal-chain atom, predicate names compared through the
  vocabulary), ``unknown`` (its roles map but the target does not state it) or ``unmapped`` (a
  role has no counterpart); a step with any precondition not holding, or an argument without a
  counterpart, is a **gap** for the planner to repair;
* **fallback** (the seed's rule): when fewer than ``min_coverage`` (2/3) of the plan's
  preconditions hold, the decision is "plan from scratch" and the offer is logged as
  ``offered, rejected`` (:func:`offer`). A plan without preconditions is covered by the share of
  its step arguments that map (departure: the seed does not say);
* :func:`review_plans` promotes a plan to a **macro** after ``promote_after`` (2) successful
  adapted reuses on distinct tasks other than the plan's own source (independent reuses), and
  retires a macro whose adapted-reuse success rate is below the from-scratch success rate of the
  namespace, once both rest on at least ``retire_min_uses`` / ``retire_min_scratch`` outcomes
  (departure: the seed gives no sample sizes and no test; this is a point comparison of rates
  with minimum counts, and it ignores steps and tokens, which are recorded for the benchmark).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analogist.errors import AnalogistError
from analogist.io import load_structured
from analogist.judge import self_score
from analogist.memory.sqlite import Memory
from analogist.params import bounded, check_bounds
from analogist.signature import (
    Atom,
    Signature,
    compile_signature,
    default_signature_vocabulary,
    parse_atom,
    validate_signature,
)
from analogist.sme import SMEParams, match
from analogist.vocabulary import ProposedTermWarning, Vocabulary

__all__ = [
    "Instantiation",
    "Plan",
    "PlanError",
    "PlanMatch",
    "PlanParams",
    "PlanStep",
    "instantiate",
    "load_plan",
    "offer",
    "record_scratch_run",
    "retrieve_plans",
    "review_plans",
    "store_plan",
    "validate_plan",
]


class PlanError(AnalogistError):
    """A malformed plan or a bad plan operation."""


@dataclass(frozen=True, slots=True)
class PlanParams:
    """Plan-reuse settings (seed 000 §12).

    Attributes:
        min_coverage: share of preconditions that must hold for the plan to be adapted rather
            than planning from scratch (the seed's "about two-thirds").
        min_goal_score: smallest goal-mapping score for :func:`retrieve_plans` to return a plan.
        promote_after: independent successful reuses that promote a plan to a macro (seed: 2).
        retire_min_uses: outcomes of a macro's adapted reuse needed before it can be retired.
        retire_min_scratch: from-scratch outcomes needed for the baseline.
        sme: the engine's parameters.
    """

    min_coverage: float = bounded(2 / 3, lo=0.0, hi=1.0)
    min_goal_score: float = bounded(0.3, lo=0.0, hi=1.0)
    promote_after: int = bounded(2, lo=1, integer=True)
    retire_min_uses: int = bounded(3, lo=1, integer=True)
    retire_min_scratch: int = bounded(3, lo=1, integer=True)
    sme: SMEParams = field(default_factory=SMEParams)

    def __post_init__(self) -> None:
        check_bounds(self, PlanError)


@dataclass(frozen=True, slots=True)
class PlanStep:
    operator: str
    args: tuple[str, ...]
    preconditions: tuple[Atom, ...]
    reason: str

    def to_data(self) -> dict[str, Any]:
        return {"operator": self.operator, "args": list(self.args),
                "preconditions": [a.text() for a in self.preconditions], "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Plan:
    """A role-parameterised plan: a goal Signature and steps over its role tags."""

    name: str
    goal: Signature
    steps: tuple[PlanStep, ...]
    source_episode: str | None = None

    def to_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "goal": self.goal.to_data(),
                               "steps": [s.to_data() for s in self.steps]}
        if self.source_episode is not None:
            out["source_episode"] = self.source_episode
        return out


def _text(v: Any, field: str, source: str | None, limit: int = 4000) -> str:
    if not isinstance(v, str) or not v.strip() or len(v) > limit:
        raise PlanError(f"expected a non-empty string of at most {limit} characters, got "
                        f"{v!r}"[:200], source=source, field=field)
    return v


def validate_plan(data: Any, *, source: str | None = None) -> Plan:
    """Validate a parsed plan: ``{name, goal (a Signature), steps: [{operator, args,
    preconditions, reason}], source_episode?}``. Step arguments and precondition roles must be
    roles of the goal; errors name the field."""
    if not isinstance(data, Mapping):
        raise PlanError(f"expected a mapping, got {type(data).__name__}", source=source)
    extra = sorted(set(data) - {"name", "goal", "steps", "source_episode"})
    if extra:
        raise PlanError(f"unexpected key(s) {', '.join(map(str, extra))}; expected name, goal, "
                        "steps, source_episode", source=source)
    name = _text(data.get("name"), "name", source, 200)
    try:
        goal = validate_signature(data.get("goal"))
    except AnalogistError as e:
        raise PlanError(e.message, source=source,
                        field="goal" + (f".{e.field}" if e.field else "")) from None
    steps_raw = data.get("steps")
    if not isinstance(steps_raw, list) or not steps_raw:
        raise PlanError("steps must be a non-empty list", source=source, field="steps")
    steps = []
    for i, s in enumerate(steps_raw):
        f = f"steps[{i}]"
        if not isinstance(s, Mapping):
            raise PlanError("expected a mapping", source=source, field=f)
        extra = sorted(set(s) - {"operator", "args", "preconditions", "reason"})
        if extra:
            raise PlanError(f"unexpected key(s) {', '.join(map(str, extra))}", source=source,
                            field=f)
        op = _text(s.get("operator"), f"{f}.operator", source, 200)
        args = s.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise PlanError("args must be a list of role tags", source=source, field=f"{f}.args")
        for j, a in enumerate(args):
            if a not in goal.roles:
                raise PlanError(f"{a!r} is not a role of the goal (roles: "
                                f"{', '.join(sorted(goal.roles))})", source=source,
                                field=f"{f}.args[{j}]")
        pre_raw = s.get("preconditions", [])
        if not isinstance(pre_raw, list):
            raise PlanError("preconditions must be a list of atoms such as 'pred(A,B)'",
                            source=source, field=f"{f}.preconditions")
        pres = []
        for j, p in enumerate(pre_raw):
            pf = f"{f}.preconditions[{j}]"
            if not isinstance(p, str):
                raise PlanError("expected an atom such as 'pred(A,B)'", source=source, field=pf)
            try:
                pred, pargs = parse_atom(p)
            except ValueError as e:
                raise PlanError(str(e), source=source, field=pf) from None
            for a in pargs:
                if a not in goal.roles:
                    raise PlanError(f"{a!r} in {p!r} is not a role of the goal", source=source,
                                    field=pf)
            pres.append(Atom(predicate=pred, args=pargs))
        steps.append(PlanStep(op, tuple(args), tuple(pres),
                              _text(s.get("reason"), f"{f}.reason", source)))
    src = data.get("source_episode")
    if src is not None:
        src = _text(src, "source_episode", source, 100)
    return Plan(name, goal, tuple(steps), src)


def load_plan(path: str | Path) -> Plan:
    """Read a plan from a JSON or YAML file."""
    return validate_plan(load_structured(Path(path)), source=str(path))


def store_plan(memory: Memory, plan: Plan, *, namespace: str = "default") -> int:
    """Store ``plan`` (status ``plan``); returns its id."""
    if not isinstance(plan, Plan):
        raise PlanError(f"expected a Plan, got {type(plan).__name__}", field="plan")
    return memory.add_plan(plan.name, plan.to_data(), namespace=namespace)


# -- retrieval and instantiation -----------------------------------------------------------------
def _compile(sig: Signature, vocab: Vocabulary) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ProposedTermWarning)
        return compile_signature(sig, vocab)


@dataclass(frozen=True, slots=True)
class PlanMatch:
    plan_id: int
    name: str
    status: str
    score: float
    plan: Plan

    def to_json(self) -> dict[str, Any]:
        return {"plan_id": self.plan_id, "name": self.name, "status": self.status,
                "similarity": self.score, "score": self.score}


def retrieve_plans(memory: Memory, goal: Signature, *, namespace: str = "default",
                   vocab: Vocabulary | None = None, params: PlanParams | None = None,
                   k: int = 5) -> list[PlanMatch]:
    """Stored plans and macros (not retired) whose goal maps onto ``goal``, best first."""
    params = params or PlanParams()
    vocab = vocab if vocab is not None else default_signature_vocabulary()
    if not isinstance(goal, Signature):
        goal = validate_signature(goal)
    dt = _compile(goal, vocab)
    out = []
    for row in memory.plans(namespace):
        if row["status"] == "retired":
            continue
        plan = validate_plan(row["plan"], source=f"plans.id={row['id']}")
        dg = _compile(plan.goal, vocab)
        best = match(dg, dt, params.sme).best
        total = self_score(dg, params.sme)
        score = min(1.0, best.score / total) if best is not None and total > 0 else 0.0
        if score >= params.min_goal_score:
            out.append(PlanMatch(int(row["id"]), row["name"], row["status"], score, plan))
    out.sort(key=lambda m: (-m.score, m.status != "macro", m.plan_id))
    return out[:k]


@dataclass(frozen=True, slots=True)
class Instantiation:
    """A plan rewritten for a target: steps with their preconditions' status and gaps marked,
    the coverage, and the decision (``adapted`` or ``from_scratch``)."""

    plan: str
    target: str
    role_map: dict[str, str]
    steps: tuple[dict[str, Any], ...]
    coverage: float
    decision: str

    @property
    def gaps(self) -> list[int]:
        return [i for i, s in enumerate(self.steps) if s["gap"]]

    def to_json(self) -> dict[str, Any]:
        return {"plan": self.plan, "target": self.target, "role_map": dict(self.role_map),
                "steps": [dict(s) for s in self.steps], "coverage": self.coverage,
                "decision": self.decision, "gaps": self.gaps}

    def render(self) -> str:
        n = len(self.gaps)
        if self.decision != "adapted":
            what = ("PLAN FROM SCRATCH (too few preconditions hold here; the steps below are "
                    "only a skeleton)")
        elif n:
            what = f"ADAPT (repair the {n} marked gap{'s' if n > 1 else ''})"
        else:
            what = "ADAPT (no gaps: every precondition holds)"
        out = [f"PLAN {self.plan} -> {self.target}: coverage {self.coverage:.2f}, {what}"]
        for i, s in enumerate(self.steps, 1):
            mark = "GAP " if s["gap"] else "    "
            out.append(f"{mark}{i}. {s['operator']}({', '.join(x or '?' for x in s['args'])})"
                       f"  because {s['reason']}")
            for p in s["preconditions"]:
                out.append(f"        pre {p['projected']}: {p['status']}")
        return "\n".join(out)


def instantiate(plan: Plan, target: Signature, *, vocab: Vocabulary | None = None,
                params: PlanParams | None = None) -> Instantiation:
    """Map ``plan``'s goal onto ``target`` and rewrite its steps (see the module docstring)."""
    params = params or PlanParams()
    vocab = vocab if vocab is not None else default_signature_vocabulary()
    if not isinstance(plan, Plan):
        raise PlanError(f"expected a Plan, got {type(plan).__name__}", field="plan")
    if not isinstance(target, Signature):
        target = validate_signature(target)
    dg, dt = _compile(plan.goal, vocab), _compile(target, vocab)
    best = match(dg, dt, params.sme).best
    role_map = {b: t for b, t in (best.entity_pairs if best is not None else ())
                if b in plan.goal.roles and t in target.roles}
    canon = dt.vocabulary.canonical
    stated = {(canon(a.predicate), a.args) for _f, a in target.atoms()}
    steps = []
    n_pre = n_hold = n_args = n_args_mapped = 0
    for s in plan.steps:
        pres = []
        for p in s.preconditions:
            img = tuple(role_map.get(r) for r in p.args)
            if not all(img):
                status = "unmapped"
            else:
                status = "holds" if (canon(p.predicate), img) in stated else "unknown"
            projected = f"{p.predicate}({','.join(x or '?' + r for x, r in zip(img, p.args, strict=True))})"
            pres.append({"precondition": p.text(), "projected": projected, "status": status})
            n_pre += 1
            n_hold += status == "holds"
        args = [role_map.get(a) for a in s.args]
        n_args += len(args)
        n_args_mapped += sum(1 for a in args if a)
        gap = any(p["status"] != "holds" for p in pres) or not all(args)
        steps.append({"operator": s.operator, "args": args, "source_args": list(s.args),
                      "reason": s.reason, "preconditions": pres, "gap": gap})
    coverage = n_hold / n_pre if n_pre else (n_args_mapped / n_args if n_args else 0.0)
    decision = "adapted" if coverage >= params.min_coverage else "from_scratch"
    return Instantiation(plan.name, target.episode_id, role_map, tuple(steps), coverage,
                         decision)


def offer(memory: Memory, plan_id: int, inst: Instantiation, *, task: str,
          namespace: str = "default") -> int:
    """Log the offer of an instantiated plan for ``task``: ``adapted``/``offered``, or
    ``from_scratch``/``rejected`` under the two-thirds rule. Returns the use id (record the
    outcome with :meth:`Memory.set_plan_outcome`)."""
    adapted = inst.decision == "adapted"
    return memory.record_plan_use(task=task, plan_id=plan_id, coverage=inst.coverage,
                                  decision="adapted" if adapted else "from_scratch",
                                  status="offered" if adapted else "rejected",
                                  instantiation=inst.to_json(), namespace=namespace)


def record_scratch_run(memory: Memory, *, task: str, success: bool, steps: int | None = None,
                       tokens: int | None = None, namespace: str = "default") -> int:
    """Record a from-scratch planning run with no plan offered (the baseline)."""
    uid = memory.record_plan_use(task=task, decision="from_scratch", status="unoffered",
                                 namespace=namespace)
    memory.set_plan_outcome(uid, success=success, steps=steps, tokens=tokens,
                            namespace=namespace)
    return uid


def _rate(rows: list[dict[str, Any]]) -> tuple[float | None, int]:
    known = [r for r in rows if r["success"] is not None]
    if not known:
        return None, 0
    return sum(1 for r in known if r["success"]) / len(known), len(known)


def review_plans(memory: Memory, *, namespace: str = "default",
                 params: PlanParams | None = None, apply: bool = True) -> dict[str, Any]:
    """Promote plans with enough independent successful reuses to macros; retire macros whose
    reuse success is below the from-scratch baseline (see the module docstring). Returns what
    changed and the numbers behind each decision."""
    params = params or PlanParams()
    uses = memory.plan_uses(namespace)
    scratch_rate, scratch_n = _rate([u for u in uses if u["decision"] == "from_scratch"])
    out: dict[str, Any] = {"namespace": namespace,
                           "scratch_success_rate": scratch_rate, "scratch_outcomes": scratch_n,
                           "promoted": [], "retired": [], "plans": []}
    for row in memory.plans(namespace):
        pid = int(row["id"])
        src = row["plan"].get("source_episode")
        mine = [u for u in uses if u["plan_id"] == pid and u["decision"] == "adapted"]
        ok_tasks = sorted({u["task"] for u in mine if u["success"] and u["task"] != src})
        rate, n = _rate(mine)
        info = {"id": pid, "name": row["name"], "status": row["status"],
                "independent_successes": len(ok_tasks), "reuse_success_rate": rate,
                "reuse_outcomes": n}
        new = None
        if row["status"] == "plan" and len(ok_tasks) >= params.promote_after:
            new = "macro"
            out["promoted"].append(row["name"])
        elif (row["status"] == "macro" and rate is not None and scratch_rate is not None
              and n >= params.retire_min_uses and scratch_n >= params.retire_min_scratch
              and rate < scratch_rate):
            new = "retired"
            out["retired"].append(row["name"])
        if new is not None:
            info["new_status"] = new
            if apply:
                memory.set_plan_status(pid, new, namespace=namespace)
        out["plans"].append(info)
    return out
