"""The analogy safeguard: checking historical and classical analogies used in arguments (seed 003).

An analogy used as evidence in a debate turn must state at least two structural, causally
relevant similarities and at least one substantive difference, and analogy content should stay
under about 15% of the turn; an analogy that fails the structural rules is "heuristic only" and
cannot be primary evidence. This module checks a turn — JSON (the shape below) or plain text — and
returns a :class:`SafeguardReport`.

Input (JSON, every field optional; a missing field is a finding, not a crash)::

    {"arguments": [{"text": str, "analogies": [{"source": str, "claim": str,
                    "similarities": [str], "differences": [str]}]}],
     "historical_wisdom": [{"text": str, "source": str, "key_differences": [str],
                            "applicability_caveat": str}]}

Modes (seed 003, "Input v3"): analogies under ``arguments`` are checked in **strict** mode,
entries of ``historical_wisdom`` in **advisory** mode; ``mode=`` forces one mode for both.

Strict mode, seed 003 rules 1–3:

* **Rule 1, similarities** — at least :data:`MIN_SIMILARITIES` (2, seed: "At least 2
  similarities") stated similarities that are structural and causally relevant. Each stated
  similarity is mapped onto two declared vocabularies: the relation predicates of the signature
  vocabulary (:func:`analogist.signature.default_signature_vocabulary`: name, synonyms and a small
  hand-written cue table, English and Chinese) and the mechanism classes of the foresight
  vocabulary (:func:`analogist.foresight.event.mechanism_definitions`, with a hand-written cue
  table). It counts when it names a *causal* relation between roles or a mechanism class (every
  mechanism class is a causal factor by definition). It does not count when it names nothing of
  either ("both involve money" — the seed's example of too vague), names only a surface feature
  (time, place, size, names), names only a shared word or label ("both were called bubbles"), or
  names only a non-causal relation (containment, ownership, measurement…). Two similarities that
  map onto the same concepts count once. When both sides of the analogy resolve to events of the
  historical corpus, each counted similarity that names a mechanism class must also be present
  in both events (else it is "not supported by the structure mapping" and does not count).
* **Rule 1, differences** — at least :data:`MIN_DIFFERENCES` (1, seed: "At least 1 key structural
  difference") substantive difference: one that names a mechanism, a causal relation or a
  structural institution (regulation, central bank, deposit insurance, reserves…) or states a
  causal contrast. Token acknowledgements ("no analogy is perfect", "times have changed") and
  surface differences (dates, places, names) are trivial (seed: "Must be substantive, not
  trivial").
* **Rule 2, content share** — flagged (never failed: seed "flag (not auto-fail; Judge decides)")
  when the analogy content share of the turn's arguments exceeds :data:`SHARE_THRESHOLD` (0.15,
  seed: "under ~15%"). *Departure:* the seed asks for an LLM semantic judgement; without an LLM we
  give a deterministic estimate (tokens of analogy sentences over tokens of argument text) and
  label it an estimate (:attr:`SafeguardReport.share_method`); with an LLM configured the semantic
  estimate is used and the deterministic one is kept alongside.
* **Rule 3, classification** — pass → ``supporting_evidence``, fail → ``heuristic_only``; every
  failure carries a recommendation, and every failed analogy is told to strengthen the claim with
  non-analogy evidence (seed rule 3).

Advisory mode (seed 003, ``historical_wisdom``): ``key_differences`` must hold at least one
substantive difference (same test as above), ``applicability_caveat`` must be present and
meaningful (at least :data:`MIN_CAVEAT_WORDS` words or :data:`MIN_CAVEAT_CHARS_ZH` Chinese
characters, not boilerplate, and it states a condition or names a mechanism); no content share
limit. *Departure — the grade thresholds are ours* (the seed names the grades, not the rule):
``strong_parallel`` = at least 2 structural parallels named in the entry's text (or matched by the
corpus mapping) with a substantive difference and a meaningful caveat; ``moderate_parallel`` = at
least 1 parallel and a substantive difference or a meaningful caveat; ``weak_parallel`` otherwise,
with the recommendation that the reference may not add value (seed advisory step 5).

Differences the author missed (issue 7 step 4): when the analogy's source and target both resolve
to events of the bundled historical corpus, :func:`analogist.foresight.align.align` maps them and
its alignable differences (same position, another mechanism) and unmapped causal factors are
named, unless the author's differences already name that mechanism. When a side is not a corpus
event but both sides are given as descriptive text, both are encoded with the deterministic
encoder and judged (:func:`analogist.judge.judge`); its alignable differences and unknowns are
named the same way. *Departure:* the text-encoded mapping is used only to name missed differences,
never to reject a similarity (the deterministic encoder writes drafts).

Plain text: :func:`find_analogies` is a deterministic pattern finder (English and Chinese analogy
markers, corpus event names and aliases, a small Chinese alias table, "similarity 1: …", "both
…", "the difference is …", 相似之处 / 不同之处 …). With an LLM configured (role ``safeguard``), the
LLM finder (prompt ``safeguard_find.v1``) adds the passages it finds; every LLM passage must quote
the text verbatim and every similarity/difference it reports must be grounded in its quote, else
it is dropped with a note (the model may not invent what the author did not state). The checks
themselves are always deterministic. Without an LLM the LLM steps report
:data:`~analogist.llm.base.NO_LLM_REASON` in :attr:`SafeguardReport.skipped`.

Output: :meth:`SafeguardReport.to_json` gives exactly the issue's JSON shape; ``index`` counts
the analogies of a section in order (across arguments). :meth:`SafeguardReport.details` adds the
share method, notes, skipped steps and the location of each analogy; :meth:`SafeguardReport.render`
is the human table.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analogist.errors import AnalogistError
from analogist.io import MAX_FILE_BYTES, parse_structured, validation_error

__all__ = [
    "MIN_CAVEAT_WORDS", "MIN_DIFFERENCES", "MIN_SIMILARITIES", "SHARE_THRESHOLD", "Analogy",
    "AnalogyCheck", "Argument", "Concept", "FoundAnalogy", "HistoricalWisdom", "Safeguard",
    "SafeguardReport", "Turn", "assess_difference", "assess_similarity", "check_text",
    "check_turn", "concepts_in", "estimate_share", "find_analogies", "load_turn", "parse_turn",
]

SHARE_THRESHOLD = 0.15
"""Seed 003 rule 2: analogy content "should be under ~15%" of the turn; above it is flagged."""
MIN_SIMILARITIES = 2
"""Seed 003 rule 1: "At least 2 similarities"."""
MIN_DIFFERENCES = 1
"""Seed 003 rule 1: "At least 1 key structural difference"."""
MIN_CAVEAT_WORDS = 5
"""Ours: the shortest meaningful applicability caveat, in words (English)."""
MIN_CAVEAT_CHARS_ZH = 8
"""Ours: the shortest meaningful applicability caveat, in Chinese characters."""
MIN_ENCODE_WORDS = 8
"""Ours: a side is encoded from text only when its text has at least this many words."""
MAX_MISSED = 4
"""Ours: the most missed differences named per analogy."""

Mode = Literal["strict", "advisory"]
Section = Literal["arguments", "historical_wisdom"]


# -- the input model -------------------------------------------------------------------------

class Analogy(BaseModel):
    """One analogy inside an argument. ``target`` (ours, optional) names the current case when it
    is a known event or descriptive text; otherwise the target is read from ``claim``."""

    model_config = ConfigDict(extra="ignore")

    source: str | None = Field(default=None, max_length=20_000)
    claim: str | None = Field(default=None, max_length=20_000)
    similarities: list[str] = Field(default_factory=list, max_length=200)
    differences: list[str] = Field(default_factory=list, max_length=200)
    target: str | None = Field(default=None, max_length=20_000)


class Argument(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str | None = Field(default=None, max_length=1_000_000)
    analogies: list[Analogy] = Field(default_factory=list, max_length=500)


class HistoricalWisdom(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str | None = Field(default=None, max_length=1_000_000)
    source: str | None = Field(default=None, max_length=20_000)
    key_differences: list[str] = Field(default_factory=list, max_length=200)
    applicability_caveat: str | None = Field(default=None, max_length=20_000)
    target: str | None = Field(default=None, max_length=20_000)


class Turn(BaseModel):
    """A debate turn (see the module docstring)."""

    model_config = ConfigDict(extra="ignore")

    arguments: list[Argument] = Field(default_factory=list, max_length=1000)
    historical_wisdom: list[HistoricalWisdom] = Field(default_factory=list, max_length=1000)


def parse_turn(data: Any, *, source: str | None = None) -> Turn:
    """Validate parsed JSON as a :class:`Turn`; errors name the field and what was expected."""
    if not isinstance(data, dict):
        raise AnalogistError(f"expected a JSON object with 'arguments' and/or "
                             f"'historical_wisdom', got {type(data).__name__}", source=source)
    try:
        return Turn.model_validate(data)
    except ValidationError as e:
        raise validation_error(e, source=source) from None


def load_turn(text: str, *, source: str | None = None) -> Turn | str:
    """``text`` as a :class:`Turn` when it is JSON (or YAML from a ``.yaml``/``.yml`` source),
    else the plain text itself. Text that starts like JSON but does not parse is an error."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped:
        raise AnalogistError("the input is empty; expected a debate turn (JSON or text)",
                             source=source)
    is_yaml = bool(source) and str(source).lower().endswith((".yaml", ".yml"))
    is_json = bool(source) and str(source).lower().endswith(".json")
    if is_yaml or is_json or stripped[0] in "{[":
        data = parse_structured(stripped, source=source, fmt="yaml" if is_yaml else "json")
        return parse_turn(data, source=source)
    return text


# -- concepts: mapping text onto the vocabularies --------------------------------------------

@dataclass(frozen=True, order=True)
class Concept:
    """A vocabulary term found in a text: ``kind`` is ``mechanism`` (foresight mechanism class),
    ``relation`` (signature relation predicate) or ``institution`` (a structural institution,
    used for differences only); ``causal`` whether it is a causal term."""

    kind: str
    name: str
    causal: bool


CAUSAL_RELATIONS = frozenset({
    "causes", "prevents", "enables", "masks", "delays", "amplifies", "triggers", "propagates_to",
    "depends_on", "exceeds", "limits", "starves", "blocks", "feeds_back_to", "competes_for",
    "gates", "incentivises", "overrides", "compensates_for", "ignores", "skips_check",
    "trusts_as_authoritative", "optimises_for", "consumes", "produces", "diverges_from",
    "preempts", "races_with", "waits_for", "holds_lock", "assumes"})
"""Relation predicates read as causal (ours): a similarity naming one of these is causally
relevant; the others (contains, belongs_to, shares, measures, …) are structural but not causal."""

# Hand-written cue phrases per mechanism class (ours), English and Chinese. Phrases are matched
# on stemmed words (English) or as substrings (Chinese).
_MECHANISM_CUES: dict[str, tuple[str, ...]] = {
    "credit_boom": ("credit boom", "credit overextension", "overextended credit",
                    "credit expansion", "lending boom", "easy credit", "cheap credit",
                    "excessive lending", "loose lending", "lending outran", "lending outpaced",
                    "reckless lending", "credit bubble", "subprime lending", "cheap money",
                    "信贷扩张", "信贷过度", "过度放贷", "宽松信贷", "信贷繁荣", "放贷激增"),
    "asset_bubble": ("asset bubble", "housing bubble", "property bubble", "price bubble",
                     "speculative bubble", "prices far above fundamentals", "overvalued",
                     "资产泡沫", "房地产泡沫", "房价泡沫", "估值过高"),
    "excess_leverage": ("excess leverage", "excessive leverage", "high leverage",
                        "overleveraged", "over leveraged", "highly leveraged", "thin equity",
                        "thin capital", "borrowed heavily", "leverage",
                        "高杠杆", "杠杆过高", "过度杠杆", "杠杆"),
    "maturity_mismatch": ("maturity mismatch", "short term funding", "borrow short",
                          "borrowed short", "wholesale funding", "期限错配", "短借长贷"),
    "unregulated_intermediary": ("shadow bank", "shadow banking", "unregulated lender",
                                 "影子银行"),
    "opaque_interconnection": ("opaque", "interconnected", "interconnection",
                               "counterparty exposure", "相互关联", "不透明"),
    "fixed_peg": ("currency peg", "pegged", "fixed exchange rate", "currency board",
                  "common currency", "gold standard", "固定汇率", "钉住汇率", "金本位"),
    "foreign_currency_debt": ("foreign currency debt", "dollar debt", "dollar denominated",
                              "foreign debt", "外债", "美元债务"),
    "commodity_dependence": ("commodity dependence", "dependence on oil", "single export",
                             "依赖石油", "单一出口"),
    "concentration_risk": ("concentration risk", "single supplier", "concentrated deposit",
                           "集中度风险", "单一供应商"),
    "lax_oversight": ("regulatory lag", "lax regulation", "weak regulation", "weak oversight",
                      "lax oversight", "regulators lagged", "regulation lagged",
                      "light touch regulation", "regulatory failure", "deregulation",
                      "regulators ignored", "supervisors ignored", "regulatory framework",
                      "regulation", "regulator", "oversight", "supervision",
                      "监管滞后", "监管不力", "监管缺位", "监管宽松", "放松管制", "监管框架",
                      "监管"),
    "misaligned_incentives": ("moral hazard", "misaligned incentive", "perverse incentive",
                              "bonus culture", "道德风险", "激励扭曲"),
    "fiscal_strain": ("fiscal strain", "budget deficit", "public debt", "sovereign debt",
                      "fiscal deficit", "财政赤字", "债务负担", "财政压力"),
    "legitimacy_deficit": ("legitimacy", "合法性"),
    "economic_grievance": ("inflation", "unemployment", "food prices", "hardship",
                           "通胀", "失业", "物价上涨"),
    "elite_split": ("elite split", "divided elite", "split in the elite", "精英分裂"),
    "overextension": ("overextension", "overstretch", "overstretched", "imperial overreach",
                      "overreach", "过度扩张"),
    "speculative_mania": ("speculative mania", "speculative frenzy", "speculation", "mania",
                          "euphoria", "投机狂热", "投机"),
    "overinvestment": ("overinvestment", "overbuilt", "overcapacity", "excess capacity",
                       "过度投资", "产能过剩"),
    "incumbent_rigidity": ("incumbent rigidity", "failed to adapt", "incumbent", "未能转型"),
    "disruptive_substitute": ("disruptive", "disruption", "cheaper substitute", "颠覆"),
    "network_effects": ("network effect", "网络效应"),
    "regulatory_gap": ("regulatory gap", "no rule covers", "outside the rules", "监管空白"),
    "security_dilemma": ("security dilemma", "arms race", "安全困境", "军备竞赛"),
    "tight_coupling": ("tight coupling", "tightly coupled", "紧耦合"),
    "single_point_of_failure": ("single point of failure", "单点故障"),
    "normalization_of_deviance": ("normalization of deviance", "normalisation of deviance",
                                  "warnings were tolerated", "ignored warnings",
                                  "偏差常态化"),
    "weak_surveillance": ("weak surveillance", "early warning", "no early detection",
                          "预警不足"),
    "information_asymmetry": ("information asymmetry", "hidden risk", "信息不对称"),
    "policy_tightening": ("rate hike", "raised interest rates", "interest rate rise",
                          "monetary tightening", "tightened credit", "rising rates",
                          "加息", "收紧"),
    "supply_shock": ("supply shock", "embargo", "shortage", "供应冲击", "断供", "禁运"),
    "price_collapse": ("price collapse", "prices collapsed", "price crash", "价格暴跌"),
    "major_default": ("default", "defaulted", "违约"),
    "fraud_revelation": ("fraud", "accounting scandal", "欺诈", "造假"),
    "bank_run": ("bank run", "run on the bank", "depositors withdrew", "deposit flight",
                 "run on deposits", "挤兑"),
    "fire_sale": ("fire sale", "forced selling", "forced sales", "抛售"),
    "counterparty_contagion": ("contagion", "spillover", "spread to other banks", "传染",
                               "蔓延"),
    "margin_spiral": ("margin call", "margin spiral", "追加保证金"),
    "debt_deflation": ("debt deflation", "deflation", "通缩", "债务通缩"),
    "capital_flight": ("capital flight", "capital outflow", "资本外逃", "资本外流"),
    "currency_collapse": ("currency collapse", "devaluation", "货币崩溃", "贬值"),
    "cascading_failure": ("cascading failure", "cascade", "domino", "连锁", "多米诺"),
    "delayed_recognition": ("delayed recognition", "downplayed", "slow to recognise",
                            "slow to recognize", "denial", "掩盖问题", "迟迟不承认"),
    "escalation_spiral": ("escalation", "escalate", "escalated", "升级"),
    "alliance_entanglement": ("alliance commitment", "alliance", "entangling alliance", "同盟",
                              "盟约"),
    "information_cascade": ("herding", "herd behaviour", "herd behavior", "羊群效应"),
    "rumor_amplification": ("rumour", "rumor", "social media panic", "谣言"),
    "panic_hoarding": ("hoarding", "panic buying", "囤积", "抢购"),
    "credit_crunch": ("credit crunch", "banks stopped lending", "credit dried up", "信贷紧缩"),
    "supply_chain_propagation": ("supply chain", "供应链"),
    "trade_linkage": ("trade link", "export demand", "贸易联系"),
    "superspreading": ("superspreading", "super spreading", "超级传播"),
}

_RELATION_CUES: dict[str, tuple[str, ...]] = {
    "causes": ("caused", "cause", "led to", "leads to", "lead to", "resulted in", "result in",
               "drove", "drives", "driven by", "fuelled", "fueled", "because", "due to",
               "导致", "引发", "造成", "因为", "由于", "致使"),
    "amplifies": ("amplified", "amplifies", "amplify", "magnified", "worsened", "accelerated",
                  "放大", "加剧", "助长"),
    "triggers": ("triggered", "trigger", "sparked", "set off", "触发", "点燃"),
    "enables": ("enabled", "allowed", "made possible", "permitted", "使得", "促成"),
    "prevents": ("prevented", "stopped", "kept from", "阻止", "防止"),
    "masks": ("masked", "hid", "hidden", "concealed", "掩盖", "掩饰"),
    "delays": ("delayed", "postponed", "slowed", "延缓", "推迟"),
    "depends_on": ("depended on", "depend on", "relied on", "rely on", "reliance on",
                   "dependence on", "依赖", "依靠"),
    "propagates_to": ("spread to", "spread through", "spilled over", "cascaded", "传导",
                      "波及"),
    "exceeds": ("outran", "outpaced", "outgrew", "exceeded", "beyond the", "超过", "超出"),
    "limits": ("capped", "constrained", "限制", "制约"),
    "ignores": ("ignored", "disregarded", "忽视", "无视"),
    "incentivises": ("rewarded", "incentive", "encouraged", "encourage", "鼓励", "incentivised", "incentivized", "激励"),
    "feeds_back_to": ("feedback loop", "vicious circle", "self reinforcing",
                      "self-reinforcing", "恶性循环", "反馈"),
    "competes_for": ("competed for", "compete for", "争夺"),
    "blocks": ("blocked", "obstructed", "阻碍"),
    "starves": ("starved", "挤占"),
}

_INSTITUTION_CUES: tuple[str, ...] = (
    "central bank", "lender of last resort", "deposit insurance", "capital requirement",
    "capital buffer", "reserves", "stress test", "backstop", "safety net", "bailout",
    "dodd frank", "basel", "institution", "constitution", "rule of law", "election",
    "democracy", "nuclear deterrent", "nuclear weapon", "treaty", "exchange rate", "floating",
    "mechanism", "structure", "causal", "balance sheet", "liquidity", "solvency", "capital",
    "uninsured", "insured", "hotline", "back channel", "army", "officer corps", "regulator",
    "interest rate", "tax", "subsidy", "border", "sanction", "tariff", "monopoly", "guarantee",
    "collateral", "funding", "insurance", "budget", "reserve", "government", "parliament",
    "court", "market structure", "competition", "supply", "demand",
    "中央银行", "央行", "最后贷款人", "存款保险", "资本充足", "外汇储备", "资本", "存款", "利率", "税", "补贴", "政府", "军队", "压力测试", "制度",
    "机制", "结构", "流动性", "偿付能力", "条约", "浮动汇率")

_CONNECTIVES_EN = ("because", "due to", "led to", "leads to", "so that", "which caused",
                   "which meant", "resulted in", "therefore", "as a result", "driven by",
                   "whereas", "instead of", "rather than")
_CONNECTIVES_ZH = ("因为", "由于", "导致", "因此", "所以", "从而", "而不是", "使得")

_LABEL_PAT = re.compile(
    r"\b(?:called|named|labell?ed|dubbed|nicknamed|the word|the term|the name|in the name|"
    r"in their names?|same name|both names|headlines?|buzzwords?)\b|[\"“”'‘’«»]\w+[\"“”'‘’«»]|"
    r"被称为|都叫|名字|这个词|字眼|标签")
_SURFACE_PAT = re.compile(
    r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b|\b(?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|spring|summer|autumn|winter|weather|season|century|decade|era|"
    r"year|years|month|anniversary|country|countries|city|cities|continent|europe|asia|"
    r"america|africa|capital city|name|names|language|colou?r|size|big|large|famous|"
    r"headline|newspaper|president|leader|people|money|involve[sd]?|happened|occurred|"
    r"took place|long ago|a long time)\b|\d{4}年|世纪|年代|季节|国家|城市|名字|语言|天气|金钱|都涉及|"
    r"发生在|年份|时间|地点|名称", re.IGNORECASE)
_TOKEN_DIFFS = (
    "no analogy is perfect", "every situation is different", "every case is different",
    "things are different", "times have changed", "there are differences",
    "there are some differences", "it is not exactly the same", "it's not exactly the same",
    "not exactly the same", "the details differ", "details differ", "different era",
    "different times", "it was a long time ago", "history doesn't repeat exactly",
    "history does not repeat exactly", "of course it is different", "it is different",
    "it's different", "somewhat different", "not identical", "情况不同", "时代不同",
    "不完全一样", "当然有区别", "没有完全相同", "有所不同", "略有不同", "时过境迁")
_BOILERPLATE_CAVEATS = (
    "use with caution", "may not apply", "results may vary", "history may not repeat",
    "history does not repeat", "past performance", "this may not hold", "not a perfect fit",
    "every situation is different", "take with a grain of salt", "n/a", "none", "tbd",
    "仅供参考", "谨慎使用", "可能不适用", "历史不会简单重复")
_CONDITION_PAT = re.compile(
    r"\b(?:if|only|unless|when|while|provided|as long as|assum(?:es|ing|ption)|depends?|"
    r"holds?|apply|applies|applicable|does not|doesn't|cannot|can't|would not|breaks down|"
    r"limit(?:ed|s)?|except)\b|前提|如果|只有|除非|仅|适用|取决于|不适用|条件|只要|一旦",
    re.IGNORECASE)

_WORD = re.compile(r"[a-z0-9]+")
_CJK = re.compile(r"[\u3400-\u9fff]")
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?|[\u3400-\u9fff]")


def _stem(w: str) -> str:
    for suf in ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "s"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def _stems(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower().replace("-", " "))]


def _has_phrase(stems: list[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    if n == 0 or n > len(stems):
        return False
    first = phrase[0]
    return any(stems[i] == first and tuple(stems[i:i + n]) == phrase
               for i in range(len(stems) - n + 1))


@dataclass(frozen=True)
class _Lexicon:
    en: tuple[tuple[tuple[str, ...], Concept], ...]
    zh: tuple[tuple[str, Concept], ...]


@lru_cache(maxsize=1)
def _lexicon() -> _Lexicon:
    from analogist.foresight.event import mechanism_definitions
    from analogist.signature import default_signature_vocabulary
    from analogist.vocabulary import PredicateKind

    en: dict[tuple[str, ...], Concept] = {}
    zh: dict[str, Concept] = {}

    def add(phrase: str, c: Concept) -> None:
        if _CJK.search(phrase):
            zh.setdefault(phrase, c)
        else:
            key = tuple(_stems(phrase))
            if key:
                en.setdefault(key, c)

    for name in mechanism_definitions():
        c = Concept("mechanism", name, True)
        for cue in _MECHANISM_CUES.get(name, ()):
            add(cue, c)
        add(name.replace("_", " "), c)
    for pred in default_signature_vocabulary():
        if pred.kind != PredicateKind.RELATION:
            continue
        c = Concept("relation", pred.name, pred.name in CAUSAL_RELATIONS)
        for cue in _RELATION_CUES.get(pred.name, ()):
            add(cue, c)
        for n in (pred.name, *pred.synonyms):
            add(n.replace("_", " "), c)
    inst = Concept("institution", "institution", False)
    for cue in _INSTITUTION_CUES:
        add(cue, inst)
    # longer phrases first, so a specific cue wins over a one-word one in reasons
    return _Lexicon(tuple(sorted(en.items(), key=lambda kv: (-len(kv[0]), kv[0]))),
                    tuple(sorted(zh.items(), key=lambda kv: (-len(kv[0]), kv[0]))))


def concepts_in(text: str) -> list[Concept]:
    """The vocabulary concepts ``text`` names (mechanism classes, relation predicates, structural
    institutions), sorted and without repeats."""
    lex = _lexicon()
    stems = _stems(text)
    found: set[Concept] = set()
    for phrase, c in lex.en:
        if _has_phrase(stems, phrase):
            found.add(c)
    for phrase, c in lex.zh:
        if phrase in text:
            found.add(c)
    return sorted(found)


def _has_connective(text: str) -> bool:
    low = " " + " ".join(_WORD.findall(text.lower())) + " "
    return any(f" {c} " in low for c in _CONNECTIVES_EN) or any(c in text for c in _CONNECTIVES_ZH)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class ItemAssessment:
    """How one stated similarity or difference was read: ``ok`` whether it counts, ``concepts``
    what it names, ``reason`` why it does (not) count."""

    text: str
    ok: bool
    concepts: tuple[Concept, ...]
    reason: str

    def names(self) -> str:
        return ", ".join(c.name for c in self.concepts if c.kind != "institution") or "-"


def assess_similarity(text: str) -> ItemAssessment:
    """Whether a stated similarity is structural and causally relevant (see the module doc)."""
    t = (text or "").strip()
    if not t:
        return ItemAssessment(t, False, (), "empty")
    cs = tuple(c for c in concepts_in(t) if c.kind != "institution")
    if _LABEL_PAT.search(t):
        return ItemAssessment(t, False, cs, "shares only a word or label, not a relation "
                                            "between roles")
    causal = tuple(c for c in cs if c.causal)
    if causal:
        return ItemAssessment(t, True, causal, "names " + ", ".join(
            f"{c.name} ({'mechanism' if c.kind == 'mechanism' else 'causal relation'})"
            for c in causal))
    if cs:
        return ItemAssessment(t, False, cs, f"names a relation ({cs[0].name}) that is not "
                                            "causal")
    if _SURFACE_PAT.search(t):
        return ItemAssessment(t, False, (), "a surface resemblance (time, place, size, names "
                                            "or topic), not a structural parallel")
    return ItemAssessment(t, False, (), "too vague: names no relation between roles and no "
                                        "causal mechanism (like 'both involve money')")


def assess_difference(text: str) -> ItemAssessment:
    """Whether a stated difference is substantive (see the module docstring)."""
    t = (text or "").strip()
    if not t:
        return ItemAssessment(t, False, (), "empty")
    low = _norm(t).strip(" .!;。！")
    if any(low == tok or (tok in low and len(_TOKEN.findall(low)) <= len(_TOKEN.findall(tok)) + 3)
           for tok in _TOKEN_DIFFS):
        return ItemAssessment(t, False, (), "a token acknowledgement, not a substantive "
                                            "difference")
    # "capital city", "reserve team": surface phrases that would otherwise read as institutions
    cs = concepts_in(re.sub(r"\bcapital cit(?:y|ies)\b", "city", t, flags=re.IGNORECASE))
    if _LABEL_PAT.search(t) and not cs:
        return ItemAssessment(t, False, (), "trivial: differs only in a name or label")
    if cs:
        return ItemAssessment(t, True, tuple(cs), "names " + ", ".join(
            f"{c.name} ({c.kind})" if c.kind != "institution" else "a structural institution"
            for c in cs))
    if _has_connective(t) and len(_TOKEN.findall(t)) >= 6:
        return ItemAssessment(t, True, (), "states a causal contrast")
    if _SURFACE_PAT.search(t):
        return ItemAssessment(t, False, (), "trivial: a surface difference (time, place or "
                                            "names), not where the causal structure breaks")
    return ItemAssessment(t, False, (), "not substantive: names no structural or causal "
                                        "difference")


def _caveat_ok(text: str | None) -> tuple[bool, str]:
    t = (text or "").strip()
    if not t:
        return False, "applicability_caveat is missing"
    low = _norm(t).strip(" .!。")
    if any(low == b or (b in low and len(_TOKEN.findall(low)) <= len(_TOKEN.findall(b)) + 2)
           for b in _BOILERPLATE_CAVEATS):
        return False, f"applicability_caveat {t!r} is boilerplate, not a stated limit"
    n_zh = len(_CJK.findall(t))
    n_en = len(_WORD.findall(t.lower()))
    if n_en < MIN_CAVEAT_WORDS and n_zh < MIN_CAVEAT_CHARS_ZH:
        return False, f"applicability_caveat {t!r} is too short to state when the parallel holds"
    if not (_CONDITION_PAT.search(t) or concepts_in(t)):
        return False, (f"applicability_caveat {t!r} states no condition or mechanism under "
                       "which the parallel holds or fails")
    return True, "applicability_caveat states when the parallel holds"


# -- the historical corpus: resolving and mapping named events --------------------------------

_ZH_EVENTS: dict[str, str] = {
    "2008年金融危机": "global-financial-crisis-2007-2008", "次贷危机": "global-financial-crisis-2007-2008",
    "全球金融危机": "global-financial-crisis-2007-2008", "大萧条": "great-depression",
    "1929年股灾": "wall-street-crash-1929", "1929年大崩盘": "wall-street-crash-1929",
    "1929年的股灾": "wall-street-crash-1929", "亚洲金融危机": "asian-financial-crisis-1997",
    "雷曼兄弟破产": "lehman-brothers-bankruptcy-2008", "雷曼兄弟": "lehman-brothers-bankruptcy-2008",
    "互联网泡沫": "dot-com-bubble", "南海泡沫": "south-sea-bubble-1720",
    "硅谷银行": "silicon-valley-bank-2023", "北岩银行": "northern-rock-2007",
    "古巴导弹危机": "cuban-missile-crisis-1962", "日本资产泡沫": "japanese-asset-bubble-1986-1992",
    "日本泡沫经济": "japanese-asset-bubble-1986-1992", "切尔诺贝利": "chernobyl-disaster-1986",
    "七月危机": "july-crisis-1914", "苏联解体": "dissolution-of-the-soviet-union",
    "西班牙流感": "influenza-pandemic-1918", "非典": "sars-outbreak-2002",
    "新冠疫情": "covid-19-pandemic", "欧债危机": "euro-area-sovereign-debt-crisis",
    "石油危机": "oil-shock-1973", "储贷危机": "savings-and-loan-crisis",
    "长期资本管理公司": "ltcm-1998", "泰铢危机": "thai-baht-crisis-1997",
}


@dataclass
class _Corpus:
    corpus: Any
    names: list[tuple[str, str]]  # (normalised name, event id), longest first


@lru_cache(maxsize=1)
def _load_corpus() -> _Corpus:
    """The bundled historical corpus with its spottable names (loaded once; read-only)."""
    from analogist.foresight.event import load_corpus
    from analogist.foresight.filter import normalize_name

    corpus = load_corpus()
    names: set[tuple[str, str]] = set()
    for ev in corpus.events:
        for n in ev.names():
            k = normalize_name(n)
            # single words ("Flint", "Katrina") are too ambiguous to spot in running text
            if len(k.split()) >= 2 or any(ch.isdigit() for ch in k):
                names.add((k, ev.event_id))
    return _Corpus(corpus, sorted(names, key=lambda x: (-len(x[0]), x)))


# -- the report ------------------------------------------------------------------------------

@dataclass
class AnalogyCheck:
    """The verdict on one analogy (see :meth:`SafeguardReport.to_json` for the public shape)."""

    section: Section
    index: int
    mode: Mode
    passed: bool
    classification: str | None
    grade: str | None
    reasons: list[str] = field(default_factory=list)
    recommendations: list[str] = field(default_factory=list)
    location: str = ""
    source: str | None = None
    similarities: list[ItemAssessment] = field(default_factory=list)
    differences: list[ItemAssessment] = field(default_factory=list)
    missed_differences: list[str] = field(default_factory=list)
    mapping: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"section": self.section, "index": self.index, "mode": self.mode,
                "pass": self.passed, "classification": self.classification,
                "grade": self.grade, "reasons": list(self.reasons),
                "recommendations": list(self.recommendations)}


@dataclass
class SafeguardReport:
    """Per-analogy verdicts, the content share (an estimate, see ``share_method``), its flag,
    the LLM steps skipped (with the reason) and notes."""

    analogies: list[AnalogyCheck]
    content_share: float
    content_share_flag: bool
    share_method: str = "deterministic estimate"
    share_estimate_deterministic: float = 0.0
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def all_pass(self) -> bool:
        return all(a.passed for a in self.analogies)

    def to_json(self) -> dict[str, Any]:
        """Exactly the issue's shape: ``analogies``, ``content_share``, ``content_share_flag``."""
        return {"analogies": [a.to_json() for a in self.analogies],
                "content_share": self.content_share,
                "content_share_flag": self.content_share_flag}

    def details(self) -> dict[str, Any]:
        """:meth:`to_json` plus where each analogy is, what its items were read as, the share
        method, the skipped LLM steps and notes."""
        out = self.to_json()
        for a, d in zip(self.analogies, out["analogies"], strict=True):
            d["location"] = a.location
            d["source"] = a.source
            d["similarities"] = [{"text": s.text, "counts": s.ok, "concepts": s.names(),
                                  "reason": s.reason} for s in a.similarities]
            d["differences"] = [{"text": s.text, "counts": s.ok, "reason": s.reason}
                                for s in a.differences]
            d["missed_differences"] = list(a.missed_differences)
            d["mapping"] = a.mapping
        out["share_method"] = self.share_method
        out["share_estimate_deterministic"] = self.share_estimate_deterministic
        out["share_threshold"] = SHARE_THRESHOLD
        out["skipped"] = list(self.skipped)
        out["notes"] = list(self.notes)
        return out

    def render(self) -> str:
        """A plain-text table: one row per analogy, then its reasons and recommendations."""
        head = ("#", "section", "idx", "mode", "result", "class / grade", "source")
        rows = []
        for n, a in enumerate(self.analogies, 1):
            rows.append((str(n), a.section, str(a.index), a.mode,
                         "PASS" if a.passed else "FAIL", a.classification or a.grade or "-",
                         (a.source or "-")[:40]))
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
                  for i, h in enumerate(head)]
        line = "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))
        out = [line, "  ".join("-" * w for w in widths)]
        out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
        if not rows:
            out.append("(no analogies found)")
        for n, a in enumerate(self.analogies, 1):
            out.append("")
            out.append(f"[{n}] {a.location}: {'PASS' if a.passed else 'FAIL'}")
            out += [f"    - {r}" for r in a.reasons]
            out += [f"    > {r}" for r in a.recommendations]
        flag = "FLAGGED (over ~15%; the judge decides)" if self.content_share_flag else "ok"
        out.append("")
        out.append(f"content share: {self.content_share:.1%} ({self.share_method}) — {flag}")
        out += [f"note: {x}" for x in self.notes]
        out += [f"{x}" for x in self.skipped]
        return "\n".join(out) + "\n"


# -- plain-text analogy finder ---------------------------------------------------------------

@dataclass
class FoundAnalogy:
    """One analogy passage found in plain text: the passage, its character span, and what the
    finder read from it (``via`` is ``pattern`` or ``llm``)."""

    passage: str
    start: int
    end: int
    source: str | None
    similarities: list[str]
    differences: list[str]
    via: str = "pattern"

    def to_analogy(self) -> Analogy:
        return Analogy(source=self.source, claim=self.passage, similarities=self.similarities,
                       differences=self.differences)


_MARKERS = re.compile(
    r"\bjust like\b|\b(?:is|was|are|were|looks?|feels?|seems?|sounds?)\s+(?:\w+\s+)?like\b|"
    r"\blike the\b|\breminiscent of\b|\becho(?:es|ed|ing)?\b|\bmirror(?:s|ed|ing)?\b|"
    r"\bparallels?\b|\banalog(?:y|ies|ous)\b|\bsimilar (?:to|risks?|situation|pattern|"
    r"dynamics?)\b|\bsimilarit(?:y|ies)\b|\bhistory (?:always |often )?(?:repeats|rhymes|"
    r"shows|teaches|tells)\b|\bprecedents?\b|\blessons? (?:of|from)\b|"
    r"\ba (?:repeat|replay|rerun|rehash) of\b|\bjust as\b|\bas (?:happened|it did) (?:in|with|"
    r"during)\b|\bcompared? (?:with|to)\b|\bdéjà vu\b|\bdeja vu\b|\brecalls?\b|"
    r"就像|正如|如同|好比|类似|类比|犹如|仿佛|重演|历史(?:总是|往往|告诉|表明|经验)|当年|前车之鉴|"
    r"殷鉴|相似|翻版|如出一辙|借鉴", re.IGNORECASE)
_YEAR_EVENT = re.compile(
    r"\b(?:1[5-9]\d\d|20[0-2]\d)s?\b[^.;:!?]{0,40}?\b(?:crisis|crash|panic|war|bubble|"
    r"collapse|depression|recession|revolution|default|famine|pandemic|epidemic|run|"
    r"meltdown)\b|\b(?:crisis|crash|panic|war|bubble|collapse|depression|recession|"
    r"revolution|default)\s+of\s+(?:1[5-9]\d\d|20[0-2]\d)\b|"
    r"\d{4}年[^，。；]{0,10}?(?:危机|崩盘|股灾|战争|泡沫|萧条|革命|违约|饥荒|疫情|挤兑)",
    re.IGNORECASE)
_CONTINUE = re.compile(
    r"\b(?:both|in both cases|similarly|likewise|the difference|one difference|differences?|"
    r"unlike|whereas|differs?|in each case|then as now|similarit(?:y|ies))\b|"
    r"两者|同样|都|不同|区别|差异|相似之处|相同", re.IGNORECASE)
_SENT = re.compile(r"[^.!?。！？\n]+(?:[.!?。！？]+|\n|$)")

_SIM_ITEM = re.compile(r"similarit(?:y|ies)\s*\d*\s*[:：]\s*([^,;()（）。]+)", re.IGNORECASE)
_SIM_BOTH = re.compile(r"\b(?:in both cases|both)\b,?\s+([^.;:]+)", re.IGNORECASE)
_SIM_SHARE = re.compile(r"\b(?:they|the two|these cases|both cases) share[sd]?\s+([^.;()]+)",
                        re.IGNORECASE)
_SIM_JUST_AS = re.compile(r"\bjust as\s+([^.;]+)", re.IGNORECASE)
_SIM_ZH = re.compile(r"(?:相似之处|相同之处|相似点\s*\d*|相同的是|共同点)(?:在于|是|有)?[:：]?\s*"
                     r"([^。；;]+)")
_SIM_ZH_BOTH = re.compile(r"(?:两者|二者|两次|它们|也)都([^，。；,;]+)")
_DIFF_ITEM = re.compile(r"difference\s*\d*\s*[:：]\s*([^,;()（）。]+)", re.IGNORECASE)
_DIFF_IS = re.compile(r"\b(?:the|one|a|key|main|crucial|important|big)\s+(?:(?:key|main|"
                      r"crucial|important|big)\s+)?differences?\s+(?:is|are|was|being|lies in)"
                      r"\s+(?:that\s+)?([^.;]+)", re.IGNORECASE)
_DIFF_UNLIKE = re.compile(r"\b(unlike\s+[^.;]+)", re.IGNORECASE)
_DIFF_WHEREAS = re.compile(r"\b(whereas\s+[^.;]+)", re.IGNORECASE)
_DIFF_BUT = re.compile(r"\b(?:but|though|although|however),?\s+((?:today|now|this time|"
                       r"these days|nowadays)\b[^.;]+)", re.IGNORECASE)
_DIFF_ZH = re.compile(r"(?:不同之处|不同的是|区别|差异|差别)(?:在于|是|：|:)?\s*([^。；;]+)")
_DIFF_ZH_BUT = re.compile(r"(?:但|不过|然而)(?:如今|现在|今天|这次|此次)([^。；;]+)")
_SOURCE_LIKE = re.compile(r"\b(?:just like|like|reminiscent of|echoes|mirrors|a repeat of|"
                          r"a replay of|as in|recalls)\s+((?:the\s+)?[^,.;:()]{3,60})",
                          re.IGNORECASE)
_SOURCE_ZH = re.compile(r"(?:就像|正如|如同|好比|类似于|犹如|仿佛)([^，。；,;]{2,20})")


def _split_items(text: str) -> list[str]:
    parts = re.split(r"\s*(?:,\s*and\s+|;|，|、|以及|和|与|\band\b(?=\s+(?:both|in both)))\s*",
                     text)
    return [p.strip(" .,;:，。") for p in parts if p.strip(" .,;:，。")]


def _event_mentions(text: str, corpus: _Corpus) -> list[tuple[str, str]]:
    """(surface name, event id) of corpus events named in ``text``."""
    from analogist.foresight.filter import normalize_name

    out: list[tuple[str, str]] = []
    for zh, eid in sorted(_ZH_EVENTS.items(), key=lambda kv: -len(kv[0])):
        if zh in text and all(e != eid for _, e in out):
            out.append((zh, eid))
    norm = " " + normalize_name(text) + " "
    for name, eid in corpus.names:
        if f" {name} " in norm and all(e != eid for _, e in out):
            out.append((name, eid))
    return out


def _source_of(passage: str, corpus: _Corpus | None) -> str | None:
    if corpus is not None:
        m = _event_mentions(passage, corpus)
        if m:
            return m[0][0]
    ye = _YEAR_EVENT.search(passage)
    if ye:
        return ye.group(0).strip()
    for pat in (_SOURCE_LIKE, _SOURCE_ZH):
        sm = pat.search(passage)
        if sm:
            words = sm.group(1).split()
            cand = " ".join(words[:8]).strip()
            if cand.lower() not in ("this", "that", "it", "before", "today"):
                return cand
    return None


def _read_passage(passage: str) -> tuple[list[str], list[str]]:
    sims: list[str] = []
    diffs: list[str] = []
    for m in _SIM_ITEM.finditer(passage):
        sims.append(m.group(1).strip())
    if not sims:
        for pat in (_SIM_ZH,):
            for m in pat.finditer(passage):
                sims += _split_items(m.group(1))
        for pat in (_SIM_BOTH, _SIM_SHARE, _SIM_JUST_AS, _SIM_ZH_BOTH):
            for m in pat.finditer(passage):
                sims += _split_items(m.group(1))
    for m in _DIFF_ITEM.finditer(passage):
        diffs.append(m.group(1).strip())
    if not diffs:
        for pat in (_DIFF_IS, _DIFF_UNLIKE, _DIFF_WHEREAS, _DIFF_BUT, _DIFF_ZH, _DIFF_ZH_BUT):
            for m in pat.finditer(passage):
                diffs.append(m.group(1).strip(" ,，"))
    # a clause read as a difference is not also a similarity
    sims = [s for s in dict.fromkeys(sims) if not any(s in d or d in s for d in diffs)]
    return sims, list(dict.fromkeys(diffs))


def _sentences(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group(0)) for m in _SENT.finditer(text)
            if m.group(0).strip()]


def _is_analogy_sentence(s: str, corpus: _Corpus | None) -> bool:
    if _MARKERS.search(s) or _YEAR_EVENT.search(s):
        return True
    return corpus is not None and bool(_event_mentions(s, corpus))


def find_analogies(text: str, *, corpus: Any | None = None) -> list[FoundAnalogy]:
    """The analogy passages of plain ``text`` (the deterministic pattern finder, English and
    Chinese): a passage starts at a sentence with an analogy marker or a historical event
    reference and takes the following sentences that continue it (both…, the difference…).
    Event names are spotted in the bundled historical corpus (``corpus`` is for internal reuse;
    any other value means the bundled corpus)."""
    cor = corpus if isinstance(corpus, _Corpus) else _load_corpus()
    out: list[FoundAnalogy] = []
    cur: list[tuple[int, int, str]] = []

    def close() -> None:
        if cur:
            start, end = cur[0][0], cur[-1][1]
            passage = text[start:end].strip()
            sims, diffs = _read_passage(passage)
            out.append(FoundAnalogy(passage, start, end, _source_of(passage, cor), sims, diffs))
            cur.clear()

    for st, en, s in _sentences(text):
        if _is_analogy_sentence(s, cor):
            new_source = cor is not None and cur and _event_mentions(s, cor) and \
                _event_mentions(s, cor)[0][1] not in {e for _, e in _event_mentions(
                    " ".join(x[2] for x in cur), cor)}
            if cur and (new_source or not _CONTINUE.search(s)):
                close()
            cur.append((st, en, s))
        elif cur and _CONTINUE.search(s):
            cur.append((st, en, s))
        else:
            close()
    close()
    return out


def _tokens(text: str | None) -> int:
    return len(_TOKEN.findall(text or ""))


def estimate_share(text: str, passages: Iterable[tuple[int, int]]) -> float:
    """The deterministic content-share estimate: tokens inside the analogy ``passages`` (character
    spans, overlaps merged) over all tokens of ``text`` (English words and Chinese characters)."""
    total = _tokens(text)
    if total == 0:
        return 0.0
    spans = sorted(passages)
    merged: list[list[int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    inside = sum(_tokens(text[a:b]) for a, b in merged)
    return min(1.0, inside / total)


# -- the LLM steps ---------------------------------------------------------------------------

def _find_schema() -> dict[str, Any]:
    item = {"type": "object", "additionalProperties": False,
            "required": ["quote", "source", "similarities", "differences"],
            "properties": {
                "quote": {"type": "string", "description": "the passage, copied verbatim"},
                "source": {"type": ["string", "null"],
                           "description": "the historical or classical case invoked"},
                "similarities": {"type": "array", "items": {"type": "string"}},
                "differences": {"type": "array", "items": {"type": "string"}}}}
    return {"type": "object", "additionalProperties": False, "required": ["analogies"],
            "properties": {"analogies": {"type": "array", "items": item}}}


def _share_schema() -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": ["share", "rationale"],
            "properties": {"share": {"type": "number", "description": "0 to 1"},
                           "rationale": {"type": "string"}}}


def _grounded(item: str, quote: str) -> bool:
    if _norm(item) in _norm(quote):
        return True
    words = set(_stems(item)) | set(_CJK.findall(item))
    if not words:
        return False
    have = set(_stems(quote)) | set(_CJK.findall(quote))
    return len(words & have) / len(words) >= 0.6


def llm_find(text: str, provider: Any, notes: list[str]) -> list[FoundAnalogy]:
    """Analogy passages found by the LLM (prompt ``safeguard_find.v1``), each grounded: the
    quote must occur in ``text`` and every similarity/difference must be grounded in the quote;
    the rest is dropped with a note."""
    from analogist.llm.prompts import load_prompt, wrap_data

    prompt = load_prompt("safeguard_find", "v1")
    msgs = [{"role": "system", "content": prompt.render()},
            {"role": "user", "content": "Find the analogy passages of this debate turn.\n\n"
                + wrap_data("episode", text)}]
    r = provider.complete_json(msgs, _find_schema(), schema_name="safeguard_find")
    out: list[FoundAnalogy] = []
    flat = " ".join(text.split())
    for i, a in enumerate(r.data.get("analogies") or []):
        quote = " ".join(str(a.get("quote") or "").split())
        pos = flat.find(quote) if quote else -1
        if pos < 0:
            notes.append(f"LLM finder: analogy {i} dropped: its quote is not in the text")
            continue
        sims, diffs = [], []
        for kind, items, keep in (("similarity", a.get("similarities") or [], sims),
                                  ("difference", a.get("differences") or [], diffs)):
            for s in items:
                s = str(s).strip()
                if s and _grounded(s, quote):
                    keep.append(s)
                elif s:
                    notes.append(f"LLM finder: analogy {i}: {kind} {s[:60]!r} is not stated in "
                                 "the passage; dropped")
        src = a.get("source")
        out.append(FoundAnalogy(quote, pos, pos + len(quote),
                                str(src).strip()[:200] if src else None, sims, diffs, via="llm"))
    return out


def llm_share(text: str, provider: Any) -> tuple[float, str]:
    """The LLM's semantic estimate of the analogy content share (prompt ``safeguard_share.v1``)."""
    from analogist.llm.prompts import load_prompt, wrap_data

    prompt = load_prompt("safeguard_share", "v1")
    msgs = [{"role": "system", "content": prompt.render()},
            {"role": "user", "content": "Estimate the analogy content share of this debate "
                                        "turn.\n\n" + wrap_data("episode", text)}]
    r = provider.complete_json(msgs, _share_schema(), schema_name="safeguard_share")
    share = r.data.get("share")
    if isinstance(share, bool) or not isinstance(share, (int, float)) or share != share:
        share = 0.0
    return min(1.0, max(0.0, float(share))), str(r.data.get("rationale") or "").strip()


# -- the checker -----------------------------------------------------------------------------

class Safeguard:
    """The analogy checker with its resources: the historical corpus (loaded on first use) and
    one deterministic encoder (created on first use, or passed in; reuse one per process).

    ``provider`` is an LLM provider or None (the deterministic path; LLM steps are skipped with
    :data:`~analogist.llm.base.NO_LLM_REASON`). ``encode_text`` turns the text-encoding SME path
    off when False.
    """

    def __init__(self, provider: Any | None = None, *, encoder: Any | None = None,
                 encode_text: bool = True) -> None:
        self.provider = provider
        self._encoder = encoder
        self.encode_text = encode_text
        self._corpus: _Corpus | None = None

    @property
    def corpus(self) -> _Corpus:
        if self._corpus is None:
            self._corpus = _load_corpus()
        return self._corpus

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            from analogist.encode.deterministic import DeterministicEncoder

            self._encoder = DeterministicEncoder()
        return self._encoder

    # -- resolving and mapping
    def resolve(self, name: str | None) -> Any | None:
        """The corpus event ``name`` is (by id, name or alias), or the one it names."""
        if not name or not name.strip():
            return None
        ev = self.corpus.corpus.lookup(name)
        if ev is not None:
            return ev
        m = _event_mentions(name, self.corpus)
        if m:
            return self.corpus.corpus.get(m[0][1])
        from analogist.foresight.filter import normalize_name

        key = normalize_name(name)
        if len(key.split()) >= 2:
            # a name inside a longer corpus name ("Northern Rock" in "Run on Northern Rock")
            for n, eid in sorted(self.corpus.names, key=lambda x: (len(x[0]), x)):
                if f" {key} " in f" {n} ":
                    return self.corpus.corpus.get(eid)
        return None

    def _target_event(self, target: str | None, claim: str | None, source_ev: Any) -> Any:
        if target:
            return self.resolve(target)
        for eid in (e for _, e in _event_mentions(claim or "", self.corpus)):
            if source_ev is None or eid != source_ev.event_id:
                return self.corpus.corpus.get(eid)
        return None

    def _map_events(self, src: Any, tgt: Any, stated: list[ItemAssessment]
                    ) -> tuple[list[str], dict[str, Any], set[str]]:
        """Missed differences, mapping summary, mechanisms present in both events."""
        from analogist.foresight.align import align

        al = align(tgt, src)
        sf = {f.id: f for f in src.factors}
        tf = {f.id: f for f in tgt.factors}
        named = {c.name for d in stated for c in d.concepts}
        missed: list[str] = []
        for b, t in al.differences:
            fb, ft = sf[b], tf[t]
            if fb.mechanism in named or ft.mechanism in named:
                continue
            missed.append(f"{src.name} had {fb.mechanism} at the {fb.position} ({fb.text}) "
                          f"where {tgt.name} had {ft.mechanism} at the {ft.position} "
                          f"({ft.text})")
        mapped_s = {b for b, _ in al.pairs}
        mapped_t = {t for _, t in al.pairs}
        linked_s = {x for ln in src.links for x in (ln.cause, ln.effect)}
        linked_t = {x for ln in tgt.links for x in (ln.cause, ln.effect)}
        for fid in sorted(linked_s - mapped_s):
            f = sf[fid]
            if f.mechanism not in named:
                missed.append(f"{src.name}'s {f.position} {f.mechanism} ({f.text}) has no "
                              f"counterpart in {tgt.name}")
        for fid in sorted(linked_t - mapped_t):
            f = tf[fid]
            if f.mechanism not in named:
                missed.append(f"{tgt.name}'s {f.position} {f.mechanism} ({f.text}) has no "
                              f"counterpart in {src.name}")
        shared = {f.mechanism for f in src.factors} & {f.mechanism for f in tgt.factors}
        summary = {"kind": "corpus", "source_event": src.event_id, "target_event": tgt.event_id,
                   "fidelity": round(al.fidelity, 4),
                   "matches": [f"{sf[b].mechanism} ({sf[b].position})" for b, _ in al.matches]}
        return missed[:MAX_MISSED], summary, shared

    def _map_texts(self, src_text: str, tgt_text: str, stated: list[ItemAssessment],
                   notes: list[str]) -> tuple[list[str], dict[str, Any] | None]:
        from analogist.judge import judge

        named = {c.name for d in stated for c in d.concepts}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s = self.encoder.encode(src_text, episode_id="source").signature
                t = self.encoder.encode(tgt_text, episode_id="target").signature
                rep = judge(s, t)
        except AnalogistError as e:
            notes.append(f"text mapping skipped: {e}")
            return [], None
        def say(text: str, sig: Any) -> str:
            # role tags (R1, …) in the judge's text → the role's own words
            return re.sub(r"\??\b(R\d+)\b", lambda m: f"[{sig.roles[m.group(1)][:40]}]"
                          if m.group(1) in sig.roles else m.group(0), text)

        missed = []
        for a, b in rep.differences:
            if a.split("(")[0] not in named:
                missed.append(f"the mapping aligns source {say(a, s)} with target {say(b, t)}: "
                              "the same roles are related differently")
        for u in rep.unknowns:
            if u.split("(")[0] not in named:
                missed.append(f"the source's {say(u, s)} has no counterpart in the target")
        summary = {"kind": "text", "score": round(rep.normalized_score, 4),
                   "likenesses": [a for a, _ in rep.likenesses]}
        return missed[:MAX_MISSED], summary

    # -- the rules
    def check_strict(self, a: Analogy, section: Section, index: int, location: str,
                     notes: list[str]) -> AnalogyCheck:
        chk = AnalogyCheck(section, index, "strict", False, None, None, location=location,
                           source=a.source)
        reasons, recs = chk.reasons, chk.recommendations
        src_ev = self.resolve(a.source)
        tgt_ev = self._target_event(a.target, a.claim, src_ev)
        sims = [assess_similarity(s) for s in a.similarities]
        diffs = [assess_difference(d) for d in a.differences]
        chk.similarities, chk.differences = sims, diffs
        shared: set[str] | None = None
        if src_ev is not None and tgt_ev is not None and src_ev.event_id != tgt_ev.event_id:
            chk.missed_differences, chk.mapping, shared = self._map_events(src_ev, tgt_ev, diffs)
        elif self.encode_text and src_ev is None and a.source and \
                len(a.source.split()) >= MIN_ENCODE_WORDS:
            tgt_text = a.target or a.claim or ""
            if len(tgt_text.split()) >= MIN_ENCODE_WORDS:
                chk.missed_differences, chk.mapping = self._map_texts(a.source, tgt_text, diffs,
                                                                      notes)
        if not (a.source or "").strip():
            reasons.append("no source case named: not a structured analogy")
            recs.append("name the historical or classical case the argument relies on")
        counted: list[ItemAssessment] = []
        seen: list[frozenset[str]] = []
        for i, s in enumerate(sims, 1):
            if not s.ok:
                reasons.append(f"similarity {i} {s.text!r}: {s.reason}")
                continue
            mech = {c.name for c in s.concepts if c.kind == "mechanism"}
            if shared is not None and mech and not mech & shared:
                reasons.append(f"similarity {i} {s.text!r}: not supported by the structure "
                               f"mapping ({', '.join(sorted(mech))} is not in both "
                               f"{src_ev.name} and {tgt_ev.name})")
                continue
            key = frozenset(c.name for c in s.concepts)
            if key in seen:
                reasons.append(f"similarity {i} {s.text!r}: restates an earlier similarity "
                               f"({s.names()})")
                continue
            seen.append(key)
            counted.append(s)
        good_d = [d for d in diffs if d.ok]
        for i, d in enumerate(diffs, 1):
            if not d.ok:
                reasons.append(f"difference {i} {d.text!r}: {d.reason}")
        sim_ok = len(counted) >= MIN_SIMILARITIES
        diff_ok = len(good_d) >= MIN_DIFFERENCES
        if sim_ok:
            reasons.append(f"{len(counted)} structural, causally relevant similarities ("
                           + "; ".join(s.names() for s in counted) + ")")
        else:
            reasons.append(f"{len(counted)} structural, causally relevant similarit"
                           f"{'y' if len(counted) == 1 else 'ies'} stated; at least "
                           f"{MIN_SIMILARITIES} required (seed 003 rule 1)")
            hint = ""
            if chk.mapping and chk.mapping.get("kind") == "corpus" and chk.mapping["matches"]:
                hint = (" — the structure mapping of the two cases shares: "
                        + ", ".join(chk.mapping["matches"][:4]))
            recs.append(f"state at least {MIN_SIMILARITIES} structural, causally relevant "
                        "similarities: name the relation or mechanism both cases share "
                        "(e.g. 'in both, lending outran incomes: a credit boom'), not a shared "
                        "topic, word, date or place" + hint)
        if diff_ok:
            reasons.append(f"{len(good_d)} substantive difference"
                           f"{'' if len(good_d) == 1 else 's'} acknowledged")
        else:
            reasons.append(("no difference stated" if not diffs else
                            "no substantive difference stated")
                           + f"; at least {MIN_DIFFERENCES} required (seed 003 rule 1)")
            recs.append("acknowledge at least one substantive difference: where the causal "
                        "structure of the two cases breaks down (an institution, mechanism or "
                        "condition that differs), not a date, place or name")
        if chk.missed_differences:
            reasons.append("the structure mapping finds differences the author did not name")
            recs += [f"consider this difference: {m}" for m in chk.missed_differences]
        chk.passed = bool(a.source and a.source.strip()) and sim_ok and diff_ok
        chk.classification = "supporting_evidence" if chk.passed else "heuristic_only"
        if chk.passed:
            reasons.append("classification: valid supporting evidence (seed 003 rule 3)")
        else:
            reasons.append("classification: heuristic only — cannot serve as primary evidence "
                           "(seed 003 rule 3)")
            recs.append("strengthen the claim with non-analogy evidence (data, a mechanism "
                        "argument, direct observation); until then the analogy is heuristic "
                        "only")
        return chk

    def check_advisory(self, text: str | None, source: str | None, key_differences: list[str],
                       caveat: str | None, target: str | None, section: Section, index: int,
                       location: str) -> AnalogyCheck:
        chk = AnalogyCheck(section, index, "advisory", False, None, None, location=location,
                           source=source)
        reasons, recs = chk.reasons, chk.recommendations
        diffs = [assess_difference(d) for d in key_differences]
        chk.differences = diffs
        good_d = [d for d in diffs if d.ok]
        for i, d in enumerate(diffs, 1):
            if not d.ok:
                reasons.append(f"key_difference {i} {d.text!r}: {d.reason}")
        if not key_differences:
            reasons.append("key_differences is missing or empty")
        if good_d:
            reasons.append(f"{len(good_d)} substantive key difference"
                           f"{'' if len(good_d) == 1 else 's'}")
        else:
            recs.append("give at least one substantive key difference: where the historical "
                        "case's causal structure differs from the present one")
        cav_ok, cav_reason = _caveat_ok(caveat)
        reasons.append(cav_reason)
        if not cav_ok:
            recs.append("state an applicability caveat: the condition under which the parallel "
                        "holds or fails (e.g. 'holds only while reserves are below short-term "
                        "debt')")
        # parallels: mechanisms and causal relations named in the text (not in the differences
        # or caveat), plus corpus-mapping matches when both sides resolve
        parallels = {c.name for c in concepts_in(text or "") if c.causal}
        src_ev = self.resolve(source)
        tgt_ev = self._target_event(target, text, src_ev)
        if src_ev is not None and tgt_ev is not None and src_ev.event_id != tgt_ev.event_id:
            chk.missed_differences, chk.mapping, _ = self._map_events(src_ev, tgt_ev, diffs)
            parallels |= {m.split(" (")[0] for m in chk.mapping["matches"]}
            if chk.missed_differences:
                recs += [f"consider this difference: {m}" for m in chk.missed_differences]
        n_par = len(parallels)
        if not (source or "").strip():
            reasons.append("source is missing: the historical case is not named")
            recs.append("name the historical case")
        if n_par >= 2 and good_d and cav_ok:
            chk.grade = "strong_parallel"
        elif n_par >= 1 and (good_d or cav_ok):
            chk.grade = "moderate_parallel"
        else:
            chk.grade = "weak_parallel"
        reasons.append(f"grade {chk.grade}: {n_par} structural parallel"
                       f"{'' if n_par == 1 else 's'} named"
                       + (f" ({', '.join(sorted(parallels))})" if parallels else ""))
        if chk.grade == "weak_parallel":
            recs.append("this reference may not add value: it names no structural parallel "
                        "that carries over (seed 003 advisory step 5)")
        chk.passed = bool(good_d) and cav_ok and bool((source or "").strip())
        return chk

    # -- the whole turn
    def check(self, turn: Turn | str, *, mode: Mode | None = None) -> SafeguardReport:
        """Check a turn (a :class:`Turn`, or plain text)."""
        if mode not in (None, "strict", "advisory"):
            raise AnalogistError(f"mode must be 'strict' or 'advisory', got {mode!r}",
                                 field="mode")
        notes: list[str] = []
        skipped: list[str] = []
        from analogist.llm.base import NO_LLM_REASON

        if isinstance(turn, str):
            turn, share_text, spans = self._from_text(turn, notes, skipped)
        else:
            share_text, spans = self._share_spans(turn)
        checks: list[AnalogyCheck] = []
        n = 0
        for ai, arg in enumerate(turn.arguments):
            for j, a in enumerate(arg.analogies):
                loc = f"arguments[{ai}].analogies[{j}]"
                if mode == "advisory":
                    checks.append(self.check_advisory(
                        " ".join(x for x in (a.claim, *a.similarities) if x), a.source,
                        a.differences, _caveat_in(a.claim), a.target, "arguments", n, loc))
                else:
                    checks.append(self.check_strict(a, "arguments", n, loc, notes))
                n += 1
        for wi, w in enumerate(turn.historical_wisdom):
            loc = f"historical_wisdom[{wi}]"
            if mode == "strict":
                sims, _ = _read_passage(w.text or "")
                a = Analogy(source=w.source, claim=w.text, similarities=sims,
                            differences=w.key_differences, target=w.target)
                checks.append(self.check_strict(a, "historical_wisdom", wi, loc, notes))
            else:
                checks.append(self.check_advisory(w.text, w.source, w.key_differences,
                                                  w.applicability_caveat, w.target,
                                                  "historical_wisdom", wi, loc))
        det = round(estimate_share(share_text, spans), 4)
        share, method = det, "deterministic estimate"
        if self.provider is not None and share_text.strip():
            share, rationale = llm_share(share_text, self.provider)
            share = round(share, 4)
            method = "LLM semantic estimate"
            if rationale:
                notes.append(f"share rationale (LLM): {rationale}")
        elif self.provider is None:
            skipped.append(f"semantic content share: {NO_LLM_REASON}")
        flag = mode != "advisory" and share > SHARE_THRESHOLD and any(
            c.mode == "strict" for c in checks)
        if flag:
            rec = (f"the turn's analogy content share is about {share:.0%} ({method}), over "
                   f"~{SHARE_THRESHOLD:.0%}: flagged for the judge — carry the argument with "
                   "non-analogy evidence and keep historical parallels brief")
            for c in checks:
                if c.mode == "strict":
                    c.recommendations.append(rec)
        return SafeguardReport(checks, share, flag, method, det, skipped, notes)

    def _share_spans(self, turn: Turn) -> tuple[str, list[tuple[int, int]]]:
        """The argument text of a JSON turn and the spans of its analogy content: sentences of
        an argument's text that the finder marks or that name the analogy's source; an analogy
        whose content does not appear in the text adds its own fields (source, claim,
        similarities, differences) to both the analogy content and the total."""
        parts: list[str] = []
        spans: list[tuple[int, int]] = []
        pos = 0
        for arg in turn.arguments:
            text = arg.text or ""
            base = pos
            covered = False
            names = [a.source for a in arg.analogies if a.source]
            for f in find_analogies(text, corpus=self.corpus):
                spans.append((base + f.start, base + f.end))
                covered = True
            for st, en, s in _sentences(text):
                if any(_norm(nm) in _norm(s) for nm in names):
                    spans.append((base + st, base + en))
                    covered = True
            parts.append(text)
            pos += len(text) + 1
            if arg.analogies and not covered:
                for a in arg.analogies:
                    extra = " ".join(x for x in (a.source, a.claim, *a.similarities,
                                                 *a.differences) if x)
                    if extra:
                        parts.append(extra)
                        spans.append((pos, pos + len(extra)))
                        pos += len(extra) + 1
        return "\n".join(parts), spans

    def _from_text(self, text: str, notes: list[str], skipped: list[str]
                   ) -> tuple[Turn, str, list[tuple[int, int]]]:
        from analogist.llm.base import NO_LLM_REASON

        found = find_analogies(text, corpus=self.corpus)
        if self.provider is not None:
            via_llm = llm_find(text, self.provider, notes)
            flat = " ".join(text.split())
            # the LLM's passages (on the whitespace-normalised text), plus pattern passages the
            # LLM did not cover; spans are measured on the normalised text from here on
            out = list(via_llm)
            for f in find_analogies(flat, corpus=self.corpus):
                if not any(f.start < g.end and g.start < f.end for g in via_llm):
                    out.append(f)
                    notes.append(f"pattern finder: also found {f.passage[:60]!r}")
            found = sorted(out, key=lambda f: f.start)
            text = flat
        else:
            skipped.append(f"LLM analogy finder: {NO_LLM_REASON}")
        turn = Turn(arguments=[Argument(text=text, analogies=[f.to_analogy() for f in found])])
        return turn, text, [(f.start, f.end) for f in found]


def _caveat_in(text: str | None) -> str | None:
    """A caveat-like clause of ``text`` (for an argument analogy checked in advisory mode)."""
    if not text:
        return None
    for _, _, s in _sentences(text):
        if _CONDITION_PAT.search(s) and re.search(r"\b(?:only|unless|if|provided|as long as)\b"
                                                  r"|前提|只有|除非|仅当", s, re.IGNORECASE):
            return s.strip()
    return None


def check_turn(turn: Turn | dict[str, Any] | str, *, mode: Mode | None = None,
               provider: Any | None = None, safeguard: Safeguard | None = None
               ) -> SafeguardReport:
    """Check a debate turn: a :class:`Turn`, its JSON data (a dict), or plain text.
    ``safeguard`` reuses resources (corpus, encoder) across calls; ``provider`` is used only when
    ``safeguard`` is None."""
    sg = safeguard if safeguard is not None else Safeguard(provider)
    if isinstance(turn, dict):
        turn = parse_turn(turn)
    return sg.check(turn, mode=mode)


def check_text(text: str, *, source: str | None = None, mode: Mode | None = None,
               safeguard: Safeguard | None = None, max_chars: int = MAX_FILE_BYTES
               ) -> SafeguardReport:
    """Check raw input text: JSON/YAML is read as a :class:`Turn`, anything else as plain
    text. Input over ``max_chars`` characters is refused."""
    if len(text) > max_chars:
        raise AnalogistError(f"input is {len(text)} characters, over the limit of {max_chars}",
                             source=source)
    turn = load_turn(text, source=source)
    return (safeguard or Safeguard()).check(turn, mode=mode)


def report_json(report: SafeguardReport) -> str:
    """The report in the issue's JSON shape, as deterministic text."""
    return json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n"
