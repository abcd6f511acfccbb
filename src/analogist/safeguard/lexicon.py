"""Concept lexicons: mapping text onto the signature relation vocabulary, the foresight mechanism
classes and structural institutions (cue tables, English and Chinese), and the text helpers the
other rooms share."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

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
