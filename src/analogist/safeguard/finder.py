"""Passage finding: analogy passages in plain text (English and Chinese), historical events named
in the bundled corpus, and the deterministic content-share estimate."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from analogist.safeguard.lexicon import _TOKEN
from analogist.safeguard.turn import Analogy

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
