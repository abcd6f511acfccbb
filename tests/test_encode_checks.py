"""The abstraction reliability checks (seed 000 §9): faithfulness and de-surfacing."""

from __future__ import annotations

from pathlib import Path

import pytest

from analogist.encode.checks import (
    CheckResult,
    EmbeddingJudge,
    LLMJudge,
    bootstrap_ci,
    de_surfacing,
    faithfulness,
)
from analogist.errors import AnalogistError
from analogist.index.embed import default_embedder
from analogist.llm.base import NO_LLM_REASON
from analogist.llm.client import OpenAICompatibleClient
from analogist.llm.config import LLMConfig
from tests.chat_server import ChatServer, Recorded

REPLIES = Path(__file__).parent / "data" / "llm" / "checks_llm.json"

# (episode text, L2, domain): hand-written, eight domains
ITEMS = [
    ("The billing dashboard read revenue from a cached summary table instead of the ledger; the "
     "refresh job failed and the finance lead reported a stale total.",
     "CON reads DER, a derived copy of SRC, instead of SRC; DER diverges from SRC and CON makes "
     "a false claim.", "finance"),
    ("A beekeeper judged the hive healthy from the weight of the honey super, but the queen had "
     "died; the weight came from stored honey, not from brood.",
     "OBS infers the state of SYS from PROXY, which stays high after SYS fails; the failure is "
     "masked.", "beekeeping"),
    ("Two warehouse robots reached for the same shelf slot at once; the one that arrived second "
     "overwrote the first's reservation and a parcel was lost.",
     "A and B race for shared resource R; the later write overrides the earlier and data is "
     "lost.", "logistics"),
    ("A sourdough starter was fed so often that the yeast starved of sugar and the dough did not "
     "rise.",
     "FEED limits the resource that POP consumes; POP is exhausted and the output OUT fails.",
     "baking"),
    ("The sprinkler controller used a rain sensor mounted under a roof, so it never saw rain and "
     "watered the lawn during storms.",
     "CTRL gates ACT on SENS; SENS cannot observe the state it reports, so ACT runs when it "
     "should not.", "gardening"),
    ("A hospital pager system retried failed messages instantly, flooding the gateway so that "
     "new urgent pages were delayed.",
     "SND retries OP on failure; retries amplify load on GW, which delays new messages.",
     "healthcare"),
    ("A football coach picked players by goals scored in training, so strikers who dived for "
     "penalties were selected over better team players.",
     "SEL optimises for METRIC, a proxy for QUAL; agents game METRIC and QUAL falls.", "sport"),
    ("The library catalogue copied book locations nightly from the shelving database; after a "
     "reshelving the catalogue sent readers to empty shelves.",
     "CAT derives from DB and is trusted by USERS; after DB changes CAT diverges and USERS are "
     "misled.", "libraries"),
]
DOMAINS = sorted({d for *_x, d in ITEMS})


@pytest.fixture(scope="module")
def judge():
    return EmbeddingJudge(default_embedder())  # the USE weights load once for the module


def pairs():
    return [(t, a) for t, a, _d in ITEMS]


def test_faithfulness_with_embeddings_is_deterministic(judge):
    r = faithfulness(pairs(), chooser=judge, seed=7)
    again = faithfulness(pairs(), chooser=EmbeddingJudge(judge.embedder), seed=7)
    assert r.to_json() == again.to_json()
    assert r.check == "faithfulness" and r.judge.startswith("embedding:")
    assert r.n == 8 and r.chance == pytest.approx(1 / 6, abs=1e-6)
    assert all(len(x["candidates"]) == 6 and x["item"] in x["candidates"] for x in r.items)
    assert r.rate >= 0.5 and r.good is True
    lo, hi = r.ci
    assert lo <= r.rate <= hi


def test_faithfulness_can_fail(judge):
    # every item gets the same L2: nothing tells the episodes apart, so the rate falls
    same = [(t, "A copy is trusted over its source.") for t, _a, _d in ITEMS]
    good = faithfulness(pairs(), chooser=judge)
    bad = faithfulness(same, chooser=judge)
    assert bad.rate <= 0.375 < good.rate
    assert bad.good is False


def test_de_surfacing(judge):
    abstract = de_surfacing([(a, d) for _t, a, d in ITEMS], guesser=judge, domains=DOMAINS)
    surface = de_surfacing([(t, d) for t, _a, d in ITEMS], guesser=judge, domains=DOMAINS)
    assert abstract.chance == pytest.approx(1 / 8, abs=1e-6) and abstract.n == 8
    # the concrete texts give the domain away; the abstractions do not (near chance)
    assert surface.rate == 1.0 and surface.good is False
    assert abstract.rate <= 0.375 and abstract.good is True
    again = de_surfacing([(a, d) for _t, a, d in ITEMS], guesser=judge, domains=DOMAINS)
    assert again.to_json() == abstract.to_json()
    described = de_surfacing([(a, d) for _t, a, d in ITEMS[:2]], guesser=judge,
                             domains={d: f"work in {d}" for d in DOMAINS})
    assert described.n == 2


def test_llm_judge_through_chat_server():
    with ChatServer(Recorded(REPLIES)) as srv, \
            OpenAICompatibleClient(LLMConfig(base_url=srv.base_url, model="judge-model",
                                             max_retries=0, timeout_s=10)) as c:
        j = LLMJudge(c)
        f = faithfulness(pairs()[:4], chooser=j, seed=3)
        reqs = list(srv.requests)
        d = de_surfacing([(a, dom) for _t, a, dom in ITEMS[:3]], guesser=LLMJudge(c),
                         domains=DOMAINS)
    assert f.judge == "llm:judge-model" and f.n == 4 and f.usage["calls"] == 4
    # the scripted judge always answers candidate 1: right exactly when the item came first
    assert [x["correct"] for x in f.items] == [x["candidates"][0] == x["item"] for x in f.items]
    assert f.rate == sum(x["candidates"][0] == x["item"] for x in f.items) / 4
    user = reqs[0]["messages"][-1]["content"]
    assert ITEMS[0][1] in user and '<candidate n="4">' in user and "<abstract>" in user
    assert reqs[0]["response_format"]["json_schema"]["name"] == "check_faithfulness"
    assert [x["guessed"] for x in d.items] == ["finance", "finance", "logistics"]
    assert d.rate == pytest.approx(2 / 3, abs=1e-6) and d.chance == pytest.approx(1 / 8, abs=1e-6)


def test_skipped_without_llm():
    j = LLMJudge(None)
    f = faithfulness(pairs(), chooser=j)
    d = de_surfacing([(a, dom) for _t, a, dom in ITEMS], guesser=j, domains=DOMAINS)
    for r in (f, d):
        assert isinstance(r, CheckResult)
        assert r.skipped == NO_LLM_REASON and r.rate is None and r.good is None
        assert r.to_json()["skipped"] == NO_LLM_REASON


def test_input_errors_and_bootstrap(judge):
    with pytest.raises(AnalogistError, match="at least 2"):
        faithfulness(pairs()[:1], chooser=judge)
    with pytest.raises(AnalogistError, match="items\\[1\\]\\[1\\]"):
        faithfulness([("a b", "x"), ("c d", " ")], chooser=judge)
    with pytest.raises(AnalogistError, match="not among the domains"):
        de_surfacing([("x", "mars")], guesser=judge, domains=DOMAINS)
    assert bootstrap_ci([True] * 5) == (1.0, 1.0)
    assert bootstrap_ci([True, False] * 10, seed=1) == bootstrap_ci([True, False] * 10, seed=1)
