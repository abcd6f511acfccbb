"""PARB structural motif templates (seed 000 §14, "Synthetic world generator", items 1–2).

Each :class:`Template` is a typed causal graph over abstract roles: relations between roles
(predicates of the bundled signature vocabulary), a causal chain of typed, signed edges between
state atoms, the violated invariant, the fix as an operator over role tags, the parts a target
may lack (for partial transfer) and the conclusion atom(s).

The development/test split is FIXED and recorded here: :data:`DEV_TEMPLATES` (12) and
:data:`TEST_TEMPLATES` (8). Code that tunes anything must call :func:`assert_not_test` on the
items it tunes on.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from analogist.errors import AnalogistError

Rel = tuple[str, ...]                      # (pred, role, role[, role])
Edge = tuple[str, str, str, int, str]      # (cause atom, edge type, effect atom, sign, status)

#: Predicates whose argument order does not matter (bundled vocabulary: commutative/symmetric).
SYMMETRIC_PREDICATES = frozenset({"races_with"})


@dataclass(frozen=True)
class Template:
    """One structural motif. Role tags are abstract (renamed to fresh tags per item)."""

    name: str
    principle: str                           # L3: one-phrase principle
    roles: tuple[tuple[str, str, str], ...]  # (tag, entity kind, abstract description)
    relations: tuple[Rel, ...]
    causal_chain: tuple[Edge, ...]
    violated_invariant: str
    fix_operator: str                        # text over role tags
    optional_parts: tuple[str, ...]          # part ids: "rel:<i>" or "edge:<i>"
    conclusion: tuple[str, ...]              # atoms, e.g. "false_claim(CON)"

    @property
    def role_tags(self) -> tuple[str, ...]:
        return tuple(r[0] for r in self.roles)

    def part(self, part_id: str) -> Rel | Edge:
        kind, i = part_id.split(":")
        return self.relations[int(i)] if kind == "rel" else self.causal_chain[int(i)]


def _o(c: str, e: str, f: str, sign: int = 1, status: str = "observed") -> Edge:
    return (c, e, f, sign, status)


def _i(c: str, e: str, f: str, sign: int = 1) -> Edge:
    return (c, e, f, sign, "inferred")


TEMPLATES: dict[str, Template] = {}


def _add(t: Template) -> None:
    TEMPLATES[t.name] = t


_add(Template(
    "stale_copy_trusted", "A trusted copy speaks with the original's voice but yesterday's facts",
    (("SRC", "store", "authoritative source"), ("CPY", "copy", "derived copy of the source"),
     ("CON", "agent", "consumer that acts on the copy")),
    (("derives_from", "CPY", "SRC"), ("diverges_from", "CPY", "SRC"),
     ("trusts_as_authoritative", "CON", "CPY"), ("skips_check", "CON", "SRC"),
     ("reads_from", "CON", "CPY")),
    (_o("stale(CPY)", "causes", "false_claim(CON)"),
     _i("unverified(CPY)", "enables", "false_claim(CON)")),
    "a derived copy is checked against its source before it is treated as authoritative",
    "make CON validate CPY against SRC (version or timestamp) before trusting it",
    ("rel:1", "rel:3", "edge:1"), ("false_claim(CON)",)))

_add(Template(
    "observer_failure_as_state_failure",
    "A silent watcher is not a silent world",
    (("OBS", "monitor", "observer of the subject"), ("SUB", "component", "observed subject"),
     ("OPR", "agent", "operator who acts on the observer's report")),
    (("observes", "OBS", "SUB"), ("reports_absence", "OBS", "SUB"),
     ("trusts_as_authoritative", "OPR", "OBS"), ("skips_check", "OPR", "SUB")),
    (_o("failure(OBS)", "causes", "unobserved(SUB)"),
     _o("unobserved(SUB)", "causes", "false_claim(OPR)"),
     _i("false_claim(OPR)", "causes", "wasted_effort(OPR)")),
    "an observer's failure is distinguished from a failure of what it observes",
    "make OPR check SUB through a second path independent of OBS before acting",
    ("rel:3", "edge:2"), ("false_claim(OPR)",)))

_add(Template(
    "masking_cause", "The crutch hides the limp until the crutch breaks",
    (("CAU", "component", "underlying fault"), ("MSK", "resource", "compensating mechanism"),
     ("SYS", "process", "system whose health is watched"),
     ("MON", "monitor", "monitor of the system")),
    (("masks", "MSK", "CAU"), ("compensates_for", "MSK", "CAU"), ("depends_on", "SYS", "MSK"),
     ("observes", "MON", "SYS")),
    (_o("failure(CAU)", "causes", "degraded(SYS)"),
     _o("correct(MSK)", "masks", "degraded(SYS)"),
     _i("degraded(SYS)", "causes", "exhausted(MSK)"),
     _o("exhausted(MSK)", "causes", "outage(SYS)")),
    "a compensating mechanism's load is watched, not only the health it preserves",
    "make MON observe the load on MSK so that CAU is seen while MSK still compensates",
    ("rel:1", "edge:2"), ("outage(SYS)",)))

_add(Template(
    "runaway_positive_feedback", "Each turn of the loop feeds the next until something breaks",
    (("AMP", "process", "process whose output grows"), ("LOOP", "process", "process fed by it"),
     ("LIM", "controller", "limiter that should bound the loop")),
    (("amplifies", "AMP", "LOOP"), ("feeds_back_to", "LOOP", "AMP"), ("limits", "LIM", "AMP"),
     ("triggers", "AMP", "LOOP")),
    (_o("overload(AMP)", "causes", "overload(LOOP)"),
     _o("overload(LOOP)", "causes", "overload(AMP)"),
     _i("failure(LIM)", "enables", "overload(AMP)"),
     _o("overload(LOOP)", "causes", "failure(LOOP)")),
    "a loop with gain above one has a limiter that acts before saturation",
    "make LIM cap AMP's output, or damp the feedback from LOOP to AMP",
    ("rel:3", "edge:2"), ("failure(LOOP)",)))

_add(Template(
    "starvation", "Whoever is always served first leaves nothing for the last",
    (("HOG", "agent", "greedy consumer"), ("VIC", "agent", "starved consumer"),
     ("RES", "resource", "shared resource"), ("SCH", "controller", "allocator")),
    (("competes_for", "HOG", "RES"), ("competes_for", "VIC", "RES"), ("starves", "HOG", "VIC"),
     ("schedules", "SCH", "HOG"), ("ignores", "SCH", "VIC")),
    (_o("overload(HOG)", "causes", "exhausted(RES)"),
     _o("exhausted(RES)", "causes", "delayed(VIC)"),
     _i("delayed(VIC)", "causes", "failure(VIC)")),
    "every consumer of a shared resource eventually receives a share",
    "make SCH guarantee VIC a minimum share of RES (ageing or fair share)",
    ("rel:4", "edge:2"), ("failure(VIC)",)))

_add(Template(
    "priority_inversion", "The important waits on the unimportant when the middle cuts in",
    (("HI", "agent", "high-priority task"), ("MID", "agent", "medium-priority task"),
     ("LO", "agent", "low-priority task"), ("LCK", "resource", "lock held by the low task")),
    (("has_priority_over", "HI", "MID"), ("has_priority_over", "MID", "LO"),
     ("holds_lock", "LO", "LCK"), ("waits_for", "HI", "LCK"), ("preempts", "MID", "LO")),
    (_o("delayed(LO)", "causes", "delayed(HI)"),
     _i("delayed(HI)", "causes", "failure(HI)")),
    "a task holding what a higher-priority task needs runs at that task's priority",
    "make LO inherit HI's priority while it holds LCK",
    ("rel:1", "edge:1"), ("failure(HI)",)))

_add(Template(
    "race", "Check and act are two moments; someone else lives between them",
    (("CHK", "agent", "actor that checks then writes"), ("OTH", "agent", "concurrent writer"),
     ("ST", "store", "shared state")),
    (("reads_from", "CHK", "ST"), ("validates", "CHK", "ST"), ("writes_to", "CHK", "ST"),
     ("writes_to", "OTH", "ST"), ("races_with", "CHK", "OTH")),
    (_o("stale(CHK)", "causes", "corrupted(ST)"),
     _i("corrupted(ST)", "causes", "data_loss(OTH)")),
    "a check and the action it licenses happen atomically",
    "make ST accept CHK's write only if OTH has not written since CHK's check",
    ("rel:1", "edge:1"), ("data_loss(OTH)",)))

_add(Template(
    "cascade_shared_dependency", "One root, many branches fall, the repair tool among them",
    (("DEP", "component", "shared dependency"), ("FIX", "component", "repair tool"),
     ("DOWN", "component", "other dependent")),
    (("depends_on", "FIX", "DEP"), ("depends_on", "DOWN", "DEP"), ("propagates_to", "DEP", "FIX"),
     ("propagates_to", "DEP", "DOWN"), ("configures", "FIX", "DEP")),
    (_o("failure(DEP)", "causes", "failure(FIX)"),
     _o("failure(DEP)", "causes", "failure(DOWN)"),
     _o("failure(FIX)", "delays", "correct(DEP)")),
    "the tools needed to repair a shared dependency do not themselves depend on it",
    "give FIX a path that does not go through DEP, and test losing DEP",
    ("rel:3", "edge:1"), ("failure(DOWN)",)))

_add(Template(
    "retry_storm", "Asking again louder makes the listener deafer",
    (("CLI", "agent", "client that retries"), ("SRV", "resource", "overloaded server"),
     ("OPN", "process", "operation being retried")),
    (("retries", "CLI", "OPN"), ("consumes", "OPN", "SRV"), ("depends_on", "CLI", "SRV"),
     ("feeds_back_to", "SRV", "CLI")),
    (_o("overload(SRV)", "causes", "failure(OPN)"),
     _o("failure(OPN)", "causes", "overload(SRV)"),
     _i("overload(SRV)", "causes", "outage(CLI)")),
    "retry load shrinks, not grows, when the server is overloaded",
    "make CLI retry OPN with capped exponential backoff, jitter and a retry budget",
    ("rel:3", "edge:2"), ("outage(CLI)",)))

_add(Template(
    "deadlock", "Each holds what the other waits for, so neither moves",
    (("P1", "agent", "first party"), ("P2", "agent", "second party"),
     ("L1", "resource", "what the first holds"), ("L2", "resource", "what the second holds")),
    (("holds_lock", "P1", "L1"), ("holds_lock", "P2", "L2"), ("waits_for", "P1", "L2"),
     ("waits_for", "P2", "L1")),
    (_o("delayed(P1)", "causes", "delayed(P2)"),
     _o("delayed(P2)", "causes", "delayed(P1)"),
     _i("delayed(P2)", "causes", "deadlock(P1)")),
    "parties acquire shared resources in one global order",
    "make P1 and P2 acquire L1 and L2 in the same fixed order, or time out and release",
    ("edge:2",), ("deadlock(P1)",)))

_add(Template(
    "common_cause_redundancy", "Two locks on one door share the door's hinge",
    (("PRI", "component", "primary"), ("BAK", "component", "redundant backup"),
     ("CC", "resource", "common cause both rely on"), ("SYS", "process", "protected system")),
    (("depends_on", "SYS", "PRI"), ("duplicates", "BAK", "PRI"), ("depends_on", "PRI", "CC"),
     ("depends_on", "BAK", "CC"), ("shares", "PRI", "BAK", "CC")),
    (_o("failure(CC)", "causes", "failure(PRI)"),
     _o("failure(CC)", "causes", "failure(BAK)"),
     _o("failure(BAK)", "causes", "outage(SYS)")),
    "redundant parts fail independently",
    "make BAK independent of CC (separate supply, route or vendor from PRI)",
    ("rel:4", "edge:2"), ("outage(SYS)",)))

_add(Template(
    "single_point_of_failure", "Everything rests on the one stone nobody doubled",
    (("SYS", "process", "system"), ("SPF", "component", "unduplicated component"),
     ("OWN", "controller", "owner who assumes it is safe"), ("USR", "agent", "users")),
    (("depends_on", "SYS", "SPF"), ("contains", "SYS", "SPF"), ("depends_on", "USR", "SYS"),
     ("configures", "OWN", "SPF"), ("assumes", "OWN", "SPF")),
    (_o("failure(SPF)", "causes", "outage(SYS)"),
     _o("outage(SYS)", "causes", "degraded(USR)")),
    "no single component's failure takes the whole system down",
    "give SYS an independent redundant alternative to SPF with automatic failover",
    ("rel:4", "edge:1"), ("outage(SYS)",)))

_add(Template(
    "survivorship_filter", "The graveyard does not fill in the survey",
    (("POP", "group", "full population"), ("FIL", "controller", "filter that removes members"),
     ("SMP", "store", "surviving sample"), ("ANL", "agent", "analyst")),
    (("filters", "FIL", "POP"), ("derives_from", "SMP", "POP"), ("measures", "ANL", "SMP"),
     ("assumes", "ANL", "POP")),
    (_o("correct(FIL)", "causes", "biased(SMP)"),
     _o("biased(SMP)", "causes", "false_claim(ANL)"),
     _i("unobserved(POP)", "enables", "false_claim(ANL)")),
    "a sample stands for its population only if nothing filtered it by the outcome",
    "make ANL account for the members of POP removed by FIL before generalising from SMP",
    ("rel:3", "edge:2"), ("false_claim(ANL)",)))

_add(Template(
    "proxy_optimisation", "When the measure becomes the target it stops measuring",
    (("AGT", "agent", "optimising agent"), ("MET", "metric", "proxy measure"),
     ("GOL", "goal", "true goal"), ("MGR", "controller", "manager who rewards the measure")),
    (("measures", "MET", "GOL"), ("proxies_for", "MET", "GOL"), ("optimises_for", "AGT", "MET"),
     ("incentivises", "MGR", "AGT"), ("diverges_from", "MET", "GOL")),
    (_o("wasted_effort(AGT)", "causes", "degraded(GOL)"),
     _o("correct(MET)", "masks", "degraded(GOL)"),
     _i("biased(MET)", "causes", "false_claim(MGR)")),
    "the rewarded measure keeps tracking the goal it stands for",
    "make MGR reward AGT on GOL directly or on several measures besides MET",
    ("rel:4", "edge:2"), ("degraded(GOL)",)))

_add(Template(
    "thundering_herd", "One bell, a thousand feet on one stair",
    (("SIG", "signal", "wake-up signal"), ("CRD", "group", "crowd of waiters"),
     ("RES", "resource", "resource they all hit")),
    (("waits_for", "CRD", "SIG"), ("signals", "SIG", "CRD"), ("consumes", "CRD", "RES"),
     ("exceeds", "CRD", "RES")),
    (_o("correct(SIG)", "causes", "overload(RES)"),
     _o("overload(RES)", "causes", "outage(RES)"),
     _i("outage(RES)", "causes", "wasted_effort(CRD)")),
    "simultaneous wake-ups never exceed the capacity they all draw on",
    "make SIG wake CRD a few at a time or with jittered delays so RES sees a trickle",
    ("rel:3", "edge:2"), ("outage(RES)",)))

_add(Template(
    "alarm_fatigue", "The bell that always rings is never heard",
    (("ALM", "signal", "alarm"), ("OPR", "agent", "operator"), ("FLT", "component", "real fault"),
     ("NOI", "process", "source of false triggers")),
    (("triggers", "NOI", "ALM"), ("signals", "ALM", "OPR"), ("ignores", "OPR", "ALM"),
     ("observes", "ALM", "FLT")),
    (_o("false_claim(ALM)", "causes", "overload(OPR)"),
     _o("overload(OPR)", "causes", "unobserved(FLT)"),
     _i("unobserved(FLT)", "enables", "outage(FLT)")),
    "an alarm fires mostly when the condition it stands for is present",
    "suppress NOI at ALM so that each signal from ALM to OPR means FLT",
    ("rel:2", "edge:2"), ("unobserved(FLT)",)))

_add(Template(
    "moral_hazard", "Who is covered for the fall walks closer to the edge",
    (("INS", "controller", "guarantor who bears the loss"), ("AGT", "agent", "protected agent"),
     ("RSK", "resource", "risk the agent controls")),
    (("compensates_for", "INS", "AGT"), ("ignores", "AGT", "RSK"), ("incentivises", "INS", "AGT"),
     ("belongs_to", "RSK", "AGT")),
    (_o("correct(INS)", "enables", "overload(RSK)"),
     _o("overload(RSK)", "causes", "failure(RSK)"),
     _i("failure(RSK)", "causes", "exhausted(INS)")),
    "whoever controls a risk bears part of its loss",
    "make INS leave AGT with part of the loss from RSK (deductible, co-pay or clawback)",
    ("rel:2", "edge:2"), ("exhausted(INS)",)))

_add(Template(
    "feedback_delay_overshoot", "Steering by an old reading swings past the mark",
    (("CTL", "controller", "controller"), ("PLT", "process", "controlled system"),
     ("SEN", "monitor", "slow sensor")),
    (("observes", "SEN", "PLT"), ("signals", "SEN", "CTL"), ("configures", "CTL", "PLT"),
     ("feeds_back_to", "PLT", "CTL")),
    (_o("delayed(SEN)", "causes", "stale(CTL)"),
     _o("stale(CTL)", "causes", "overload(PLT)"),
     _i("overload(PLT)", "causes", "degraded(PLT)")),
    "a controller's correction is slower than the delay of its feedback",
    "make CTL take smaller steps and wait out SEN's delay, or act on SEN's rate of change",
    ("rel:3", "edge:2"), ("overload(PLT)",)))

_add(Template(
    "tragedy_of_commons", "What everyone may take, nobody keeps",
    (("USR", "group", "users of the commons"), ("POL", "resource", "common pool"),
     ("REG", "controller", "custodian who does not limit"),
     ("REN", "process", "renewal of the pool")),
    (("consumes", "USR", "POL"), ("competes_for", "USR", "POL"), ("produces", "REN", "POL"),
     ("exceeds", "USR", "REN"), ("ignores", "REG", "USR")),
    (_o("overload(POL)", "causes", "degraded(REN)"),
     _o("degraded(REN)", "causes", "exhausted(POL)"),
     _i("exhausted(POL)", "causes", "failure(USR)")),
    "total take from a shared pool stays within its renewal",
    "make REG cap USR's take from POL at what REN renews (quota, price or permits)",
    ("rel:4", "edge:2"), ("exhausted(POL)",)))

_add(Template(
    "silent_data_corruption", "A bad value that nobody checks travels as a good one",
    (("UPS", "process", "upstream stage"), ("MDS", "store", "intermediate store"),
     ("DWN", "agent", "downstream consumer"), ("VAL", "monitor", "validator that skips")),
    (("writes_to", "UPS", "MDS"), ("reads_from", "DWN", "MDS"), ("propagates_to", "MDS", "DWN"),
     ("skips_check", "VAL", "MDS"), ("derives_from", "DWN", "MDS")),
    (_o("corrupted(UPS)", "causes", "corrupted(MDS)"),
     _o("corrupted(MDS)", "causes", "corrupted(DWN)"),
     _i("unobserved(MDS)", "enables", "corrupted(DWN)")),
    "data is verified end to end before it is consumed",
    "make VAL check MDS with end-to-end checksums before DWN consumes it",
    ("rel:4", "edge:2"), ("corrupted(DWN)",)))

#: The recorded split. Never change it: it is part of every item set's identity.
DEV_TEMPLATES: tuple[str, ...] = (
    "stale_copy_trusted", "observer_failure_as_state_failure", "masking_cause",
    "runaway_positive_feedback", "starvation", "priority_inversion", "race",
    "cascade_shared_dependency", "retry_storm", "deadlock", "common_cause_redundancy",
    "single_point_of_failure")
TEST_TEMPLATES: tuple[str, ...] = (
    "survivorship_filter", "proxy_optimisation", "thundering_herd", "alarm_fatigue",
    "moral_hazard", "feedback_delay_overshoot", "tragedy_of_commons", "silent_data_corruption")


def split_of(template: str) -> str:
    if template in DEV_TEMPLATES:
        return "dev"
    if template in TEST_TEMPLATES:
        return "test"
    raise AnalogistError(f"unknown PARB template {template!r}")


def templates_for(split: str) -> tuple[str, ...]:
    if split == "dev":
        return DEV_TEMPLATES
    if split == "test":
        return TEST_TEMPLATES
    if split == "both":
        return DEV_TEMPLATES + TEST_TEMPLATES
    raise AnalogistError(f"split must be 'dev', 'test' or 'both', got {split!r}")


def _item_templates(item: Any) -> set[str]:
    if isinstance(item, str):
        return {item}
    data = item.to_data() if hasattr(item, "to_data") else item
    if not isinstance(data, Mapping):
        raise AnalogistError(f"assert_not_test: cannot read the template of {item!r}"[:200])
    out: set[str] = set()
    if data.get("split") == "test":
        out.add(str(data.get("template", "?")))
    for key in ("template", "templates_used"):
        v = data.get(key)
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, (list, tuple)):
            out.update(str(x) for x in v)
    return out


def assert_not_test(items: Iterable[Any]) -> None:
    """Raise :class:`AnalogistError` when any item comes from (or uses) a test template.

    Call it in every code path that tunes anything (weights, thresholds) on PARB items.
    Items may be item objects, their dicts, or template names.
    """
    for n, item in enumerate(items):
        bad = sorted(t for t in _item_templates(item) if t in TEST_TEMPLATES or t == "?")
        data = item if isinstance(item, Mapping) else None
        if bad or (data is not None and data.get("split") == "test"):
            raise AnalogistError(
                f"item {n} uses held-out test template(s) {', '.join(bad) or '?'}; "
                f"tuning on test templates is refused")


# -- structure helpers ---------------------------------------------------------------------------
def parse_state(atom: str) -> tuple[str, tuple[str, ...]]:
    pred, rest = atom.split("(", 1)
    args = tuple(a.strip() for a in rest.rstrip(")").split(",") if a.strip())
    return pred.strip(), args


def state(pred: str, args: Iterable[str]) -> str:
    return f"{pred}({','.join(args)})"


def norm_rel(rel: Rel) -> Rel:
    if rel[0] in SYMMETRIC_PREDICATES:
        return (rel[0], *sorted(rel[1:]))
    return tuple(rel)


def map_rel(rel: Rel, m: Mapping[str, str]) -> Rel:
    return norm_rel((rel[0], *(m[a] for a in rel[1:])))


def map_atom(atom: str, m: Mapping[str, str]) -> str:
    p, args = parse_state(atom)
    return state(p, (m[a] for a in args))


def map_edge(edge: Edge, m: Mapping[str, str]) -> tuple[str, str, str, int]:
    return (map_atom(edge[0], m), edge[1], map_atom(edge[2], m), edge[3])


def structure_key(relations: Iterable[Rel], edges: Iterable[Edge]) -> tuple[Counter, Counter]:
    """Relation and edge multisets (status ignored; sign kept)."""
    return (Counter(norm_rel(tuple(r)) for r in relations),
            Counter((e[0], e[1], e[2], e[3]) for e in edges))


def structure_preserving_maps(src_roles: Iterable[str], src_rel: Iterable[Rel],
                              src_edges: Iterable[Edge], tgt_roles: Iterable[str],
                              tgt_rel: Iterable[Rel], tgt_edges: Iterable[Edge],
                              ) -> list[dict[str, str]]:
    """Every bijection source role → target role mapping all relations and edges onto the
    target's exactly (brute force over permutations; roles are few)."""
    s, t = list(src_roles), list(tgt_roles)
    if len(s) != len(t):
        return []
    src_rel, src_edges = list(src_rel), list(src_edges)
    want = structure_key(tgt_rel, tgt_edges)
    out = []
    for perm in itertools.permutations(t):
        m = dict(zip(s, perm, strict=True))
        got = (Counter(map_rel(r, m) for r in src_rel),
               Counter(map_edge(e, m) for e in src_edges))
        if got == want:
            out.append(m)
    return out


def automorphisms(t: Template) -> list[dict[str, str]]:
    return structure_preserving_maps(t.role_tags, t.relations, t.causal_chain,
                                     t.role_tags, t.relations, t.causal_chain)


def _check_library() -> None:
    assert len(set(DEV_TEMPLATES) | set(TEST_TEMPLATES)) == len(TEMPLATES) == 20
    assert not set(DEV_TEMPLATES) & set(TEST_TEMPLATES)
    for t in TEMPLATES.values():
        tags = set(t.role_tags)
        for r in t.relations:
            assert set(r[1:]) <= tags, (t.name, r)
        for e in t.causal_chain:
            assert set(parse_state(e[0])[1]) | set(parse_state(e[2])[1]) <= tags, (t.name, e)
        for p in t.optional_parts:
            t.part(p)


_check_library()
