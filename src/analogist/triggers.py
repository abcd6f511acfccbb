"""When to reach for an analogy: the trigger policy, its log, and fitted trigger rates.

Seed 000 §10: analogy is an explicit operation fired by **observable** impasse signals computed
from the agent's own action log — repeated error classes, failed repairs, stalls, irreversible
actions ahead — not by self-reported confidence. Expectation failure triggers reminding (Schank
1982; Hammond 1989, CHEF); impasses drive subgoaling (Laird, Newell & Rosenbloom 1987, Soar);
retrieval is not free (Mallen et al. 2023; Jeong et al. 2024, Adaptive-RAG); the value of
computation frames the budget (Russell & Wefald 1991).

Tiers (the seed's table):

* **0, always on** — every logged error: a fingerprint / predicate-vector lookup, no LLM
  (trigger ``error_logged``: the latest action is an error);
* **1, standard** — ``repeated_failed_repair`` (at least ``tier1_failed_repairs`` failed repairs
  of one error class), ``no_progress`` (``stall_steps`` steps or more since the progress measure
  last improved), ``tier0_hit`` (the caller's tier-0 lookup score at or above
  ``tier0_hit_threshold``), ``irreversible_ahead`` (the next action is irreversible or external:
  a pre-mortem against the failure library);
* **2, deep** — ``many_failed_repairs`` (at least ``tier2_failed_repairs`` failed repairs of one
  class; departure: the seed says "three or more failed repairs" without "of one class", we count
  per class as tier 1 does), ``high_stakes`` (the caller says so), ``tier1_mapping_low`` (the
  caller's tier-1 mapping score below ``tier1_mapping_threshold``).

The tier is the highest that fired. Tier 2 is capped by a daily token budget: when the tokens
already spent on tier 2 today plus ``tier2_cost`` exceed ``tier2_daily_budget``, the decision
drops to tier 1 and says so (``budget_blocked``). **Weak triggers** — self-reported low
confidence, "the problem seems novel" — are recorded with the decision but raise no tier; they
are kept only if the fitted rates show they predict usefulness.

Every firing is written to ``analogy_log`` with the triggers that caused it (:func:`record_firing`
or :meth:`Memory.tag_analogy` for a row :class:`~analogist.retrieve.Retriever` already wrote).
**Closing the loop:** :func:`record_outcome` records what an attempt led to — the analogue used
and whether it helped, or a negative transfer, optionally with the action's result against the
no-analogy counterfactual on the same item (a ledger entry, :meth:`Memory.record_transfer`'s
verdict) — in one transaction (:meth:`Memory.record_outcome`). :func:`fit_triggers` estimates, per
trigger, the useful-analogy rate and the negative-transfer rate among firings with a known
outcome, with Wilson 95% intervals (Wilson 1927), and the same rates for attempts that recorded
no trigger (``untriggered``: the baseline a trigger must beat to be worth keeping).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from analogist.errors import AnalogistError
from analogist.io import load_structured
from analogist.memory.sqlite import Memory
from analogist.params import bounded, check_bounds
from analogist.stats import wilson_interval

__all__ = [
    "STRONG_TRIGGERS",
    "WEAK_TRIGGERS",
    "Action",
    "ActionLog",
    "TriggerDecision",
    "TriggerParams",
    "decide",
    "decide_and_record",
    "fit_triggers",
    "ledger_summary",
    "load_action_log",
    "parse_action_log",
    "record_firing",
    "record_outcome",
    "wilson_interval",
]

STRONG_TRIGGERS: dict[str, int] = {
    "error_logged": 0,
    "repeated_failed_repair": 1,
    "no_progress": 1,
    "tier0_hit": 1,
    "irreversible_ahead": 1,
    "many_failed_repairs": 2,
    "high_stakes": 2,
    "tier1_mapping_low": 2,
}
"""Each observable trigger and the tier it fires."""

WEAK_TRIGGERS: tuple[str, ...] = ("low_self_confidence", "seems_novel")
"""Recorded, never tier-raising (seed 000 §10: kept only if the log shows they predict use)."""

_KINDS = ("action", "error", "repair", "observation")


class TriggerError(AnalogistError):
    """A malformed action log or bad trigger input."""


@dataclass(frozen=True, slots=True)
class TriggerParams:
    """The trigger policy's thresholds (seed 000 §10's table; costs are its token estimates).

    Attributes:
        tier1_failed_repairs: failed repairs of one error class that fire tier 1 (seed: two).
        tier2_failed_repairs: failed repairs of one error class that fire tier 2 (seed: three).
        stall_steps: steps without measurable progress that fire tier 1 (the seed's N).
        tier0_hit_threshold: tier-0 lookup score that fires tier 1.
        tier1_mapping_threshold: tier-1 mapping score below which tier 2 fires.
        tier1_cost: tokens one tier-1 operation is budgeted at (seed: 6–10k).
        tier2_cost: tokens one tier-2 operation is budgeted at (seed: 20–30k).
        tier2_daily_budget: tokens per UTC day tier 2 may spend.
    """

    tier1_failed_repairs: int = bounded(2, lo=1, integer=True)
    tier2_failed_repairs: int = bounded(3, lo=1, integer=True)
    stall_steps: int = bounded(5, lo=1, integer=True)
    tier0_hit_threshold: float = bounded(0.5, lo=0.0, hi=1.0)
    tier1_mapping_threshold: float = bounded(0.15, lo=0.0, hi=1.0)
    tier1_cost: int = bounded(8_000, lo=1, integer=True)
    tier2_cost: int = bounded(25_000, lo=1, integer=True)
    tier2_daily_budget: int = bounded(200_000, lo=1, integer=True)

    def __post_init__(self) -> None:
        check_bounds(self, TriggerError)
        if self.tier2_failed_repairs <= self.tier1_failed_repairs:
            raise TriggerError("tier2_failed_repairs must exceed tier1_failed_repairs",
                               field="tier2_failed_repairs")


@dataclass(frozen=True, slots=True)
class Action:
    """One step of the caller's action log.

    ``kind``: ``action``, ``error``, ``repair`` or ``observation``; ``error_class``: the class of
    an error, or of the error a repair addresses; ``failed``: for a repair, whether it failed;
    ``progress``: a measurable progress value (higher is better) when the step has one;
    ``irreversible`` / ``external``: the action cannot be undone / acts outside the sandbox."""

    step: int
    kind: str
    error_class: str | None = None
    failed: bool | None = None
    progress: float | None = None
    irreversible: bool = False
    external: bool = False


@dataclass(frozen=True, slots=True)
class ActionLog:
    """The caller's log up to now, the action about to run (if known), and the caller's signals:
    ``high_stakes``, ``tier0_score`` (its tier-0 lookup), ``tier1_score`` (its tier-1 mapping
    score), ``self_confidence`` (weak) and ``seems_novel`` (weak)."""

    actions: tuple[Action, ...]
    ahead: Action | None = None
    high_stakes: bool = False
    tier0_score: float | None = None
    tier1_score: float | None = None
    self_confidence: float | None = None
    seems_novel: bool = False


@dataclass(frozen=True, slots=True)
class TriggerDecision:
    """Which tier runs and why: ``fired`` maps each trigger that fired to its evidence."""

    tier: int | None
    fired: dict[str, str]
    weak: dict[str, str] = field(default_factory=dict)
    budget_blocked: bool = False
    tokens_budgeted: int = 0

    @property
    def triggers(self) -> list[str]:
        return sorted(self.fired)

    def to_json(self) -> dict[str, Any]:
        return {"tier": self.tier, "fired": dict(sorted(self.fired.items())),
                "weak": dict(sorted(self.weak.items())), "budget_blocked": self.budget_blocked,
                "tokens_budgeted": self.tokens_budgeted}


# -- input ------------------------------------------------------------------------------------
def _bool(v: Any, field: str, source: str | None) -> bool:
    if not isinstance(v, bool):
        raise TriggerError(f"expected true or false, got {v!r}"[:200], source=source, field=field)
    return v


def _num(v: Any, field: str, source: str | None, lo: float | None = None,
         hi: float | None = None) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
            or (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f" in [{lo}, {hi}]" if lo is not None and hi is not None else ""
        raise TriggerError(f"expected a finite number{rng}, got {v!r}"[:200], source=source,
                           field=field)
    return float(v)


def _action(d: Any, field: str, source: str | None, step: int) -> Action:
    if not isinstance(d, Mapping):
        raise TriggerError("expected an object", source=source, field=field)
    allowed = {"step", "kind", "error_class", "failed", "progress", "irreversible", "external",
               "note"}
    extra = sorted(set(d) - allowed)
    if extra:
        raise TriggerError(f"unexpected key(s) {', '.join(map(str, extra))}; expected some of "
                           f"{', '.join(sorted(allowed))}", source=source, field=field)
    kind = d.get("kind", "action")
    if kind not in _KINDS:
        raise TriggerError(f"kind must be one of {', '.join(_KINDS)}, got {kind!r}"[:200],
                           source=source, field=f"{field}.kind")
    ec = d.get("error_class")
    if ec is not None and (not isinstance(ec, str) or not 1 <= len(ec) <= 200):
        raise TriggerError("error_class must be a string of 1 to 200 characters",
                           source=source, field=f"{field}.error_class")
    if kind in ("error", "repair") and ec is None:
        raise TriggerError(f"an {kind} needs its error_class", source=source,
                           field=f"{field}.error_class")
    failed = d.get("failed")
    if failed is not None:
        failed = _bool(failed, f"{field}.failed", source)
    if kind == "repair" and failed is None:
        raise TriggerError("a repair needs failed: true or false", source=source,
                           field=f"{field}.failed")
    st = d.get("step", step)
    if isinstance(st, bool) or not isinstance(st, int) or st < 0:
        raise TriggerError("step must be a non-negative integer", source=source,
                           field=f"{field}.step")
    prog = d.get("progress")
    return Action(step=st, kind=kind, error_class=ec, failed=failed,
                  progress=None if prog is None else _num(prog, f"{field}.progress", source),
                  irreversible=_bool(d.get("irreversible", False), f"{field}.irreversible",
                                     source),
                  external=_bool(d.get("external", False), f"{field}.external", source))


def parse_action_log(data: Any, *, source: str | None = None) -> ActionLog:
    """Validate a parsed action log: ``{"actions": [...], "ahead": {...}, "high_stakes": bool,
    "tier0_score": x, "tier1_score": x, "self_confidence": x, "seems_novel": bool}`` (only
    ``actions`` is required; a bare list is the actions). Steps must not decrease."""
    if isinstance(data, list):
        data = {"actions": data}
    if not isinstance(data, Mapping):
        raise TriggerError(f"expected an object with 'actions' or a list of actions, got "
                           f"{type(data).__name__}", source=source)
    allowed = {"actions", "ahead", "high_stakes", "tier0_score", "tier1_score",
               "self_confidence", "seems_novel"}
    extra = sorted(set(data) - allowed)
    if extra:
        raise TriggerError(f"unexpected key(s) {', '.join(map(str, extra))}", source=source)
    raw = data.get("actions")
    if not isinstance(raw, list):
        raise TriggerError("actions must be a list", source=source, field="actions")
    acts = tuple(_action(a, f"actions[{i}]", source, i) for i, a in enumerate(raw))
    for i in range(1, len(acts)):
        if acts[i].step < acts[i - 1].step:
            raise TriggerError(f"step {acts[i].step} comes after step {acts[i - 1].step}",
                               source=source, field=f"actions[{i}].step")
    ahead = data.get("ahead")
    opt = {k: (None if data.get(k) is None else _num(data[k], k, source, 0.0, 1.0))
           for k in ("tier0_score", "tier1_score", "self_confidence")}
    return ActionLog(actions=acts,
                     ahead=None if ahead is None else _action(ahead, "ahead", source, len(acts)),
                     high_stakes=_bool(data.get("high_stakes", False), "high_stakes", source),
                     seems_novel=_bool(data.get("seems_novel", False), "seems_novel", source),
                     **opt)


def load_action_log(path: str | Path) -> ActionLog:
    """Read an action log from a JSON or YAML file."""
    return parse_action_log(load_structured(Path(path)), source=str(path))


# -- the policy -------------------------------------------------------------------------------
def decide(log: ActionLog, params: TriggerParams | None = None, *,
           tier2_tokens_spent: int = 0) -> TriggerDecision:
    """The tier to run now and the triggers that fired (pure; see the module docstring)."""
    p = params or TriggerParams()
    if not isinstance(log, ActionLog):
        raise TriggerError(f"expected an ActionLog, got {type(log).__name__}", field="log")
    if isinstance(tier2_tokens_spent, bool) or not isinstance(tier2_tokens_spent, int) \
            or tier2_tokens_spent < 0:
        raise TriggerError("tier2_tokens_spent must be a non-negative integer",
                           field="tier2_tokens_spent")
    fired: dict[str, str] = {}
    acts = log.actions
    if acts and acts[-1].kind == "error":
        fired["error_logged"] = f"step {acts[-1].step}: error of class {acts[-1].error_class}"
    failed: dict[str, int] = {}
    for a in acts:
        if a.kind == "repair" and a.failed:
            failed[a.error_class or ""] = failed.get(a.error_class or "", 0) + 1
    worst = max(failed.items(), key=lambda kv: (kv[1], kv[0]), default=None)
    if worst is not None and worst[1] >= p.tier1_failed_repairs:
        fired["repeated_failed_repair"] = f"{worst[1]} failed repairs of class {worst[0]}"
    if worst is not None and worst[1] >= p.tier2_failed_repairs:
        fired["many_failed_repairs"] = f"{worst[1]} failed repairs of class {worst[0]}"
    measured = [a for a in acts if a.progress is not None]
    if measured and acts:
        best, best_step = -math.inf, None
        for a in measured:
            if a.progress is not None and a.progress > best:
                best, best_step = a.progress, a.step
        since = acts[-1].step - (best_step if best_step is not None else acts[0].step)
        if since >= p.stall_steps:
            fired["no_progress"] = (f"{since} steps since progress last improved (at step "
                                    f"{best_step})")
    if log.tier0_score is not None and log.tier0_score >= p.tier0_hit_threshold:
        fired["tier0_hit"] = f"tier-0 lookup score {log.tier0_score:.3f}"
    if log.ahead is not None and (log.ahead.irreversible or log.ahead.external):
        what = " and ".join(w for w, f in (("irreversible", log.ahead.irreversible),
                                           ("external", log.ahead.external)) if f)
        fired["irreversible_ahead"] = f"the next action (step {log.ahead.step}) is {what}"
    if log.high_stakes:
        fired["high_stakes"] = "the caller marks the task high-stakes"
    if log.tier1_score is not None and log.tier1_score < p.tier1_mapping_threshold:
        fired["tier1_mapping_low"] = f"tier-1 mapping score {log.tier1_score:.3f}"
    weak: dict[str, str] = {}
    if log.self_confidence is not None and log.self_confidence < 0.5:
        weak["low_self_confidence"] = f"self-reported confidence {log.self_confidence:.2f}"
    if log.seems_novel:
        weak["seems_novel"] = "the caller says the problem seems novel"
    tier = max((STRONG_TRIGGERS[t] for t in fired), default=None)
    blocked = False
    if tier == 2 and tier2_tokens_spent + p.tier2_cost > p.tier2_daily_budget:
        blocked, tier = True, 1
    cost = {None: 0, 0: 0, 1: p.tier1_cost, 2: p.tier2_cost}[tier]
    return TriggerDecision(tier, fired, weak, blocked, cost)


def _day_start(now: datetime) -> str:
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0).isoformat()


def record_firing(memory: Memory, decision: TriggerDecision, *, namespace: str = "default",
                  target: Any = None, log_id: int | None = None,
                  tokens: int | None = None) -> int | None:
    """Write a firing to ``analogy_log`` with its triggers: tag the row ``log_id`` (e.g. the one
    :meth:`Retriever.find` wrote) or write a new row for ``target``. Returns the log id, or None
    when nothing fired. ``tokens`` defaults to the decision's budgeted tokens."""
    if decision.tier is None:
        return None
    trig = {"fired": decision.triggers, "weak": sorted(decision.weak),
            "budget_blocked": decision.budget_blocked}
    tok = decision.tokens_budgeted if tokens is None else tokens
    if log_id is not None:
        memory.tag_analogy(log_id, trigger=trig, tier=decision.tier, tokens=tok,
                           namespace=namespace)
        return log_id
    return memory.log_analogy(namespace, target=target if target is not None else {},
                              candidates=[], verdict="fired", trigger=trig, tier=decision.tier,
                              tokens=tok)


def decide_and_record(memory: Memory, log: ActionLog, *, namespace: str = "default",
                      params: TriggerParams | None = None, target: Any = None,
                      now: datetime | None = None) -> tuple[TriggerDecision, int | None]:
    """:func:`decide` with today's tier-2 spending read from the store, then
    :func:`record_firing`."""
    spent = memory.tokens_spent(namespace, tier=2, since=_day_start(now or datetime.now(UTC)))
    d = decide(log, params, tier2_tokens_spent=spent)
    return d, record_firing(memory, d, namespace=namespace, target=target)


# -- fitting ----------------------------------------------------------------------------------
def fit_triggers(memory: Memory, namespace: str = "default") -> dict[str, Any]:
    """Per trigger (strong and weak), from logged firings: firings, firings with a known outcome,
    the useful-analogy rate (outcome ``useful``) and the negative-transfer rate (outcome
    ``negative`` or a ledger verdict ``worse`` for the firing), each with a Wilson 95%
    interval. Firings without an outcome count only in ``firings``."""
    rows = memory.firings(namespace)
    stats: dict[str, dict[str, int]] = {}
    for r in rows:
        trig = r["trigger"]
        names: Sequence[str]
        if isinstance(trig, Mapping):
            names = [*trig.get("fired", []), *trig.get("weak", [])]
        elif isinstance(trig, list):
            names = [str(x) for x in trig]
        else:
            names = [str(trig)]
        negative = r["outcome"] == "negative" or "worse" in r["ledger"]
        known = r["outcome"] is not None or any(v != "unknown" for v in r["ledger"])
        for t in dict.fromkeys(names):
            s = stats.setdefault(t, {"firings": 0, "with_outcome": 0, "useful": 0,
                                     "negative": 0})
            s["firings"] += 1
            if known:
                s["with_outcome"] += 1
                s["useful"] += int(r["outcome"] == "useful" and not negative)
                s["negative"] += int(negative)
    out: dict[str, Any] = {}
    for t in sorted(stats):
        s = stats[t]
        n = s["with_outcome"]
        out[t] = {**s, "weak": t in WEAK_TRIGGERS,
                  "useful_rate": s["useful"] / n if n else None,
                  "useful_ci95": list(wilson_interval(s["useful"], n)),
                  "negative_rate": s["negative"] / n if n else None,
                  "negative_ci95": list(wilson_interval(s["negative"], n))}
    base = [o for o in memory.outcomes(namespace) if o["trigger"] is None]
    latest: dict[int, dict[str, Any]] = {}
    for o in base:                      # one attempt counts once: its latest outcome report
        prev = latest.get(o["log_id"])
        latest[o["log_id"]] = {**o, "worse": o["ledger_verdict"] == "worse"
                               or bool(prev and prev["worse"])}
    n = len(latest)
    neg = sum(1 for o in latest.values() if o["outcome"] == "negative" or o["worse"])
    useful = sum(1 for o in latest.values() if o["outcome"] == "useful" and not o["worse"])
    untriggered = {"with_outcome": n, "useful": useful, "negative": neg,
                   "useful_rate": useful / n if n else None,
                   "useful_ci95": list(wilson_interval(useful, n)),
                   "negative_rate": neg / n if n else None,
                   "negative_ci95": list(wilson_interval(neg, n))}
    return {"namespace": namespace, "firings": len(rows), "triggers": out,
            "untriggered": untriggered}


def record_outcome(memory: Memory, log_id: int | None = None, *, helped: bool | None = None,
                   negative: bool = False, used: str | None = None, note: str | None = None,
                   result: float | None = None, counterfactual: float | None = None,
                   higher_is_better: bool = True, item: str | None = None,
                   action: str | None = None, namespace: str = "default") -> dict[str, Any]:
    """Record what the analogy attempt ``log_id`` (the id :meth:`Retriever.find`,
    :func:`record_firing` or ``analogist log`` shows) led to.

    Exactly one of ``helped`` (True: ``useful``, False: ``not_useful``) and ``negative=True``
    (a negative transfer: acting on the analogy did worse than acting without it) is given.
    ``used``: the analogue acted on (required when ``log_id`` is None: an analogy used outside
    ``find`` gets a new log entry). ``result`` (the analogy-driven action's result) with
    ``counterfactual`` (the no-analogy result on the same item, when known) writes a ledger
    entry; ``item`` / ``action`` name them (default: the log entry and the analogue). A ledger
    verdict ``worse`` counts as a negative transfer in :func:`fit_triggers` whatever
    ``helped`` says. Returns the stored ids, the outcome and the ledger verdict."""
    if negative is not True and negative is not False:
        raise TriggerError("negative must be true or false", field="negative")
    if helped is not None and not isinstance(helped, bool):
        raise TriggerError("helped must be true, false or absent", field="helped")
    if (helped is None) == (not negative):
        raise TriggerError("say either whether the analogy helped (helped) or that it was a "
                           "negative transfer (negative), not both or neither", field="helped")
    outcome = "negative" if negative else ("useful" if helped else "not_useful")
    transfer = None
    if result is not None:
        transfer = {"item": item or (f"log:{log_id}" if log_id is not None else f"used:{used}"),
                    "action": action or (f"acted on {used}" if used else "acted on the analogy"),
                    "analogy_result": result, "counterfactual_result": counterfactual,
                    "higher_is_better": higher_is_better}
    elif counterfactual is not None or item is not None or action is not None:
        raise TriggerError("counterfactual, item and action go with result (the analogy-driven "
                           "action's result)", field="result")
    got = memory.record_outcome(log_id, outcome, used=used, note=note, transfer=transfer,
                                namespace=namespace)
    return {**got, "outcome": outcome,
            "verdict": None if got["ledger"] is None else got["ledger"]["verdict"]}


# -- the negative-transfer ledger ---------------------------------------------------------------
def ledger_summary(memory: Memory, namespace: str = "default") -> dict[str, Any]:
    """The negative-transfer ledger in numbers (seed 000 §15: the share of analogy-driven
    actions that score worse than the no-analogy arm on the same item). Entries come from
    :meth:`Memory.record_transfer`; the rate is over entries *with* a recorded counterfactual,
    with a Wilson 95% interval; entries without one are counted as ``unknown``."""
    rows = memory.ledger(namespace)
    counts = {v: sum(1 for r in rows if r["verdict"] == v)
              for v in ("better", "same", "worse", "unknown")}
    n = counts["better"] + counts["same"] + counts["worse"]
    return {"namespace": namespace, "entries": len(rows), "with_counterfactual": n, **counts,
            "negative_transfer_rate": counts["worse"] / n if n else None,
            "negative_transfer_ci95": list(wilson_interval(counts["worse"], n))}
