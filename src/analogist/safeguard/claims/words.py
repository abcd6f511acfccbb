"""The claim reader's word classes — grammatical classes, not domain cues — for English and
Chinese, and the language a text is read in (see :mod:`analogist.safeguard.claims`)."""

from __future__ import annotations

import re

from analogist.safeguard.lexicon import _CJK

_PLACEHOLDER_NOUNS = frozenset({
    "thing", "something", "anything", "everything", "another", "other", "one", "cause",
    "effect", "result", "outcome", "consequence", "factor", "event", "mechanism", "structure",
    "pattern", "dynamic", "dynamics", "situation", "issue", "problem", "case", "aspect",
    "element", "development", "circumstance", "process", "way", "stuff", "matter", "relation",
    "relationship", "link", "connection", "feature", "similarity", "difference", "trigger",
    "chain", "sequence", "path", "course", "logic", "trajectory", "kind", "sort", "type",
    "crisis", "story", "lot", "part", "point", "detail", "context", "causality", "force",
    "reason", "origin", "work", "change", "condition", "precondition", "amplifier", "response",
    "parallel", "lesson", "history", "time", "period", "while", "moment"})
_CASE_WORDS = frozenset({"both", "each", "either", "they", "them", "all"})
_PRONOUNS = frozenset({"it", "its", "they", "them", "their", "this", "that", "these", "those",
                       "he", "she", "him", "her", "we", "us", "something", "anything",
                       "everything", "another", "one", "themselves", "itself", "all", "both",
                       "each", "either", "neither", "none"})
_RELATIVE = frozenset({"which", "that", "who", "whom", "whose"})
_TOPIC_VERBS = frozenset({"involve", "concern", "relate", "regard", "mention", "revolve",
                          "center", "centre", "surround", "touch", "discuss", "deal"})
_HAS_VERBS = frozenset({"be", "have", "show", "see", "exhibit", "display", "suffer", "stay", "remain",
                        "experience", "face", "undergo", "witness", "share", "feature"})
_NONCAUSAL_VERBS = frozenset({"own", "possess", "belong", "contain", "include", "comprise",
                              "consist", "resemble", "equal", "represent", "lack", "house",
                              "run", "employ", "hold_in", "be_part"})
_SURFACE_VERBS = frozenset({"happen", "occur", "start", "begin", "end", "finish", "last",
                            "take_place", "visit", "print", "publish", "report", "announce",
                            "say", "tell", "write", "call", "name", "label", "dub", "meet",
                            "arrive", "travel", "come", "go", "live", "speak", "appear",
                            "return", "rule", "follow", "read", "attend", "look", "seem"})
_CAUSAL_MARKS = frozenset({"because", "since", "as", "when", "once", "after", "so", "until",
                           "if", "whenever", "unless", "therefore", "thus", "hence"})
_NEGATORS = frozenset({"not", "n't", "never", "neither", "nor", "no"})
_ARG_PREPS = frozenset({"with", "for", "on", "upon", "to", "into", "from", "against", "over",
                        "by", "through", "onto", "out", "off", "of", "beyond", "in"})
_TIME_NOUNS = frozenset({"year", "decade", "month", "week", "day", "while", "time", "moment",
                         "century", "era", "period", "season", "spring", "summer", "autumn",
                         "winter", "fall", "morning", "night", "hour"})

# Chinese: frame words, placeholders, topic frames, negators and causal constructions
_ZH_PLACEHOLDERS = ("另一件事", "一件事", "某种因素", "某种后果", "某种结果", "某种原因", "某事", "某种",
                    "事情", "东西", "因果关系", "原因", "结果", "后果", "因素", "机制", "结构", "问题",
                    "情况", "现象", "过程", "模式")
_ZH_FRAME = re.compile(r"两者|二者|两次|它们|这两次|两国|双方|也|都|是|了|的|在|就|又|把|被|由|着|过|这|那|其|各|所")
_ZH_TOPIC = re.compile(r"涉及|关于|有关|相关|牵涉")
_ZH_NONCAUSAL = re.compile(r"属于|拥有|包含|包括|隶属")
_ZH_NEG = re.compile(r"不是|并非|并不|没有|并未|从未|从没|未曾|未能?|不(?![断少良同足久仅光过但])")
_ZH_CAUSAL = re.compile(
    r"导致|引起|引发|造成|致使|使得|促使|迫使|促成|使|让|令|推高|推升|推动|拉高|抬高|压低|压得|拉低|"
    r"放大|加剧|助长|触发|点燃|带来|拖累|拖垮|吸引|冲击|削弱|耗尽|抽干|挤占|阻止|防止|阻碍|掩盖|掩饰|"
    r"延缓|推迟|依赖|依靠|威胁|吞噬|逼|害得")
_ZH_LINK = re.compile(r"一[\u3400-\u9fff]{1,3}[，,]|一旦|因为|由于|所以|因此|从而|于是|以致|随之|"
                      r"随即|进而|继而|"
                      r"(?<=[\u3400-\u9fff]{2})(?:之)?后(?!果|来)[，,]?")



def _lang(text: str) -> str:
    return "zh" if len(_CJK.findall(text)) * 2 >= len(re.findall(r"[A-Za-z]", text)) and \
        _CJK.search(text) else "en"

