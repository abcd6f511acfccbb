"""PARB's LLM arms A0/A1 over a real local chat-completions server (scripted answers).

The scripted "model" here answers from the item keys, so these tests check the plumbing — the
request each arm sends, the parsing of the answer, the scoring, the accounting — not any model's
quality. Quality of A0/A1 is only ever measured against a real configured endpoint.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from analogist.bench.parb.items import generate
from analogist.bench.parb.llm_arms import HINT
from analogist.bench.parb.runner import run_parb
from analogist.llm.client import OpenAICompatibleClient
from analogist.llm.config import LLMConfig
from tests.chat_server import ChatServer, Reply

_QID = re.compile(r'Query episode:\n<episode id="([^"]+)">')


def _items(fams=("F2", "F3")):
    return [it for it in generate(32, 3, "dev").items if it["family"] in fams][:6]


def _answer_table(items):
    """query episode id → the keyed answer (the scripted model's 'knowledge')."""
    table = {}
    for it in items:
        key = it["key"]
        if it["family"] == "F2":
            m = key["role_mapping"]            # target → far analogy; arms want cand → query
            table[it["target"]["episode_id"]] = (key["answer"], {v: k for k, v in m.items()})
        elif it["family"] == "F3":
            ans = "none" if key["no_match"] else key["match_ids"][0]
            table[it["target"]["episode_id"]] = (ans, {})
    return table


PARAM = json.loads((Path(__file__).parent / "data" / "llm" /
                    "parametric_analogues.json").read_text())["parametric"]


def _schema(req):
    return req.get("response_format", {}).get("json_schema", {}).get("name")


def _responder(table, wrong=False):
    def respond(req, _i):
        if _schema(req) == "parametric":
            return Reply.json(PARAM, usage=(50, 10))
        if _schema(req) != "parb_answer":
            return Reply.error(400, "unexpected call")
        user = req["messages"][-1]["content"]
        qid = _QID.search(user).group(1)
        ans, rm = table[qid]
        if wrong:
            ans = "none"
        return Reply.json({"choice": ans,
                           "role_mapping": [{"candidate_role": k, "query_role": v}
                                            for k, v in rm.items()],
                           "conclusions": [], "fix": "", "parts": [], "confidence": 0.9},
                          usage=(100, 20))
    return respond


@pytest.fixture()
def embedder():
    from analogist.index.embed import default_embedder
    return default_embedder()


def test_a0_a1_requests_scoring_and_usage(tmp_path, embedder):
    items = _items()
    with ChatServer(_responder(_answer_table(items))) as srv, \
            OpenAICompatibleClient(LLMConfig(base_url=srv.base_url, model="test-model")) as cl:
        res = run_parb(len(items), ["A0", "A1"], items=items, out_dir=tmp_path, progress=False,
                       provider=cl, embedder=embedder, write_report=False)
        bodies = list(srv.requests)
    assert "A0" not in res["skipped"] and "A1" not in res["skipped"]
    par = [b for b in bodies if _schema(b) == "parametric"]
    bodies = [b for b in bodies if _schema(b) == "parb_answer"]
    assert len(bodies) == 2 * len(items)
    assert len(par) == len(items)                    # A1 only: the labelled parametric channel
    a0 = [b for b in bodies if HINT not in b["messages"][-1]["content"]]
    a1 = [b for b in bodies if HINT in b["messages"][-1]["content"]]
    assert len(a0) == len(a1) == len(items)          # the hint is the only difference
    for b in bodies:
        assert b["response_format"]["type"] == "json_schema"
        assert "<episode id=" in b["messages"][-1]["content"]
    arms = res["splits"]["dev"]["arms"]
    for a in ("A0", "A1"):
        m = arms[a]
        assert m["n_items"] == len(items)
        # answering the key is useful on every item with a true match, silent otherwise
        assert m["F"] == 0
        assert m["U"] == sum(1 for it in items if not it["key"].get("no_match"))
    assert res["llm_usage"]["A0"]["calls"] == len(items)
    assert res["llm_usage"]["A0"]["prompt_tokens"] == 100 * len(items)
    assert res["llm_usage"]["A1"]["calls"] == 2 * len(items)
    assert res["llm_usage"]["A1"]["prompt_tokens"] == 150 * len(items)
    # parametric analogues: labelled, judged, scored apart (U above counts only pool sources)
    assert arms["A0"]["parametric"]["proposed"] == 0
    # the scripted reply's third analogue is empty and is dropped by propose_parametric
    assert arms["A1"]["parametric"]["proposed"] == 2 * len(items)
    rows = [json.loads(x) for x in (tmp_path / "per_item.jsonl").read_text().splitlines()]
    for r in rows:
        for p in r["arms"]["A1"]["output"]["parametric"]:
            assert p["label"] == "parametric" and "verdict" in p


def test_llm_arm_answer_none_scores_nothing(tmp_path, embedder):
    items = _items(("F2",))
    with ChatServer(_responder(_answer_table(items), wrong=True)) as srv, \
            OpenAICompatibleClient(LLMConfig(base_url=srv.base_url, model="test-model")) as cl:
        res = run_parb(len(items), ["A1"], items=items, out_dir=tmp_path, progress=False,
                       provider=cl, embedder=embedder, write_report=False)
    m = res["splits"]["dev"]["arms"]["A1"]
    assert m["U"] == 0 and m["proposed"] == 0


def test_without_llm_arms_are_skipped_not_faked(tmp_path, embedder):
    items = _items(("F2",))
    res = run_parb(len(items), ["C", "A0", "A1", "E"], items=items, out_dir=tmp_path,
                   progress=False, embedder=embedder, write_report=False)
    assert res["skipped"]["A0"].startswith("skipped: no LLM configured")
    assert res["skipped"]["E.critic"].startswith("skipped: no LLM configured")
    assert set(res["splits"]["dev"]["arms"]) == {"C", "E"}
    rows = [json.loads(x) for x in (tmp_path / "per_item.jsonl").read_text().splitlines()]
    assert all(set(r["arms"]) == {"C", "E"} for r in rows)


_CAND = re.compile(r'<episode id="([^"]+)">')


def test_a1_attribution_controls_and_tokens(tmp_path, embedder):
    """A scripted model that states the keyed inference whatever it is shown "already knew":
    no source dependence and lesion sensitivity 0 (flagged as rationalisation); its tokens are
    reported per item and per useful analogy."""
    items = [it for it in generate(32, 3, "dev").items if it["family"] == "F1"][:3]
    know = {}
    for it in items:
        ti = it["key"]["transferred_inference"]
        know[it["target"]["episode_id"]] = (f"{ti['cause']} {ti['edge']} {ti['effect']}",
                                            {k: v for k, v in it["key"]["role_mapping"].items()})

    def respond(req, _i):
        if _schema(req) == "parametric":
            return Reply.json(PARAM, usage=(50, 10))
        user = req["messages"][-1]["content"]
        qid = _QID.search(user).group(1)
        concl, rm = know[qid]
        cands = [c for c in _CAND.findall(user) if c != qid]
        return Reply.json({"choice": cands[0] if cands else "none",
                           "role_mapping": [{"candidate_role": k, "query_role": v}
                                            for k, v in rm.items()],
                           "conclusions": [concl], "fix": "", "parts": [], "confidence": 0.8},
                          usage=(100, 20))

    with ChatServer(respond) as srv, \
            OpenAICompatibleClient(LLMConfig(base_url=srv.base_url, model="test-model")) as cl:
        res = run_parb(len(items), ["G", "A1"], items=items, out_dir=tmp_path, progress=False,
                       provider=cl, embedder=embedder, write_report=True)
    ctl = res["splits"]["dev"]["controls"]
    assert ctl["A1"]["accuracy"]["correct"] == 1.0
    assert ctl["A1"]["delta_vs_none"]["estimate"] == 0.0       # it knew without the source
    assert ctl["A1"]["lesion"]["sensitivity"] == 0.0
    assert ctl["G"]["delta_vs_none"]["estimate"] == 1.0
    assert ctl["G"]["lesion"]["sensitivity"] == 1.0
    cost = res["splits"]["dev"]["arms"]["A1"]["cost"]
    # the main run's calls only: the answer (120) and the parametric channel (60), once per
    # item; the controls' reruns call neither the parametric channel nor count here
    assert cost["tokens_per_item"] == 180
    assert cost["tokens_per_U"] == 180
    assert res["splits"]["dev"]["arms"]["G"]["cost"]["tokens_per_item"] is None
    assert "Attribution controls" in (tmp_path / "report.md").read_text()


def test_llm_failures_are_failures_not_abstentions(tmp_path, embedder):
    """Every answer an LLM error: the items are counted as failed (never correct, even the
    no-match ones an abstention would get right), and the calls, failures, tokens and seconds
    are accounted per arm."""
    items = _items(("F2", "F3"))
    with ChatServer(lambda _req, _i: Reply.error(503, "model is loading")) as srv, \
            OpenAICompatibleClient(LLMConfig(base_url=srv.base_url, model="m", max_retries=0)
                                   ) as cl:
        res = run_parb(len(items), ["A0", "A1"], items=items, out_dir=tmp_path,
                       progress=False, provider=cl, embedder=embedder, write_report=True)
    for arm in ("A0", "A1"):
        m = res["splits"]["dev"]["arms"][arm]
        assert m["failed"] == len(items)
        assert m["accuracy"] == 0.0 and m["proposed"] == 0
        u = res["llm_usage"][arm]
        assert u["calls"] >= len(items) and u["failures"] == u["calls"]
    rows = [json.loads(x) for x in (tmp_path / "per_item.jsonl").read_text().splitlines()]
    assert all(r["arms"]["A0"]["failed"] and not r["arms"]["A0"]["correct"] for r in rows)
    report = (tmp_path / "report.md").read_text()
    assert "## LLM calls" in report and "| A0 | " in report
