"""What a report says: one named score (similarity, the normalized structural score; SME's raw
score only as "raw SES"), and verdict labels true to the conclusions and the mechanism (a perfect
analogue whose conclusion already holds says so; "mechanism" is named only when it transfers)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analogist.cli import app as cli
from analogist.judge import judge
from analogist.memory.sqlite import Memory
from analogist.retrieve import Retriever
from analogist.signature import load_signature, validate_signature

SEED = load_signature(Path(__file__).parent / "data" / "seed_example_signature.json")
SIMILARITY = re.compile(r"similarity (\d+\.\d{3})")


def _copy(episode_id: str, **changes: object) -> object:
    data = SEED.to_data()
    data.update(episode_id=episode_id, **changes)
    return validate_signature(data)


def _ledger(chain: list[list[str]], fix: str | None = "reconcile(CLK, TOT, ACC) first",
            episode_id: str = "ledger") -> object:
    return validate_signature({
        "episode_id": episode_id, "kind": "failure",
        "roles": {"ACC": "bank account", "TOT": "copied ledger total", "CLK": "clerk"},
        "relations": [["derives_from", "TOT", "ACC"], ["trusts_as_authoritative", "CLK", "TOT"],
                      ["skips_check", "CLK", "ACC"]],
        "causal_chain": chain, "fix_operator": fix})


TARGETS = {
    "perfect": _copy("twin"),
    "cause unknown": _ledger([["skips_check(CLK,ACC)", "enables", "false_claim(CLK)"]]),
    "no chain": _ledger([]),
    "no fix": _ledger([["skips_check(CLK,ACC)", "enables", "false_claim(CLK)"]], fix=None),
    "reversed": _ledger([["false_claim(CLK)", "enables", "skips_check(CLK,ACC)"]]),
    "transfers": _copy("open", causal_chain=[]),   # every cause stated, the claim not yet
    "unrelated": validate_signature({
        "episode_id": "garden", "kind": "failure", "roles": {"P": "plant", "W": "water"},
        "relations": [["starves", "P", "W"]], "causal_chain": [], "fix_operator": None}),
}


def test_a_perfect_analogue_says_its_conclusion_already_holds() -> None:
    rep = judge(SEED, TARGETS["perfect"])
    assert [c.status for c in rep.conclusions] == ["holds"]
    assert rep.transfer_mechanism and not rep.transfer
    assert rep.verdict == "conclusion already holds; mechanism transfers"
    assert "VERDICT   conclusion already holds; mechanism transfers" in rep.render()
    assert "mechanism only" not in json.dumps(rep.to_json())


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_the_verdict_says_what_the_data_say(name: str) -> None:
    for source, target in ((SEED, TARGETS[name]), (TARGETS[name], SEED)):
        rep = judge(source, target)
        v = rep.verdict
        holds = bool(rep.conclusions) and all(c.status == "holds" for c in rep.conclusions)
        assert (v == "transfer") == rep.transfer
        if rep.contradictions and not rep.transfer:
            assert v == "no transfer: the target contradicts the source"
        elif not rep.transfer:
            assert ("already holds" in v) == holds
            assert ("mechanism transfers" in v) == rep.transfer_mechanism
            assert ("withheld" in v) == (rep.transfer_mechanism and bool(rep.conclusions)
                                         and not holds)
            assert (v == "no transfer") == (not holds and not rep.transfer_mechanism)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_one_named_score_per_report(name: str) -> None:
    rep = judge(SEED, TARGETS[name])
    text = rep.render()
    assert SIMILARITY.findall(text) == [f"{rep.similarity:.3f}"]
    assert f"raw SES {rep.score:.3f}" in text
    assert re.search(r"(?<!structural )\bscore\b", text) is None, text
    data = rep.to_json()
    assert data["similarity"] == rep.normalized_score == data["normalized_score"]
    assert data["raw_ses"] == rep.score == data["score"]


def test_find_shows_the_number_it_ranks_by_once_named(tmp_path: Path) -> None:
    """A hit's report shows the similarity the hit is ranked by (over the target's own
    structure, discounted per contradiction), not a second normalized number."""
    with Memory.open(tmp_path / "m.db") as m:
        m.add_many([SEED, _ledger([["skips_check(CLK,ACC)", "enables", "false_claim(CLK)"]]),
                    _ledger([["false_claim(CLK)", "enables", "skips_check(CLK,ACC)"]],
                            episode_id="reversed")])
        res = Retriever(m, log=False).find(_ledger([["skips_check(CLK,ACC)", "enables",
                                                      "false_claim(CLK)"]], episode_id="query"))
    assert res.results
    data = res.to_json()
    for hit in data["results"]:
        assert hit["similarity"] == hit["score"] == hit["report"]["similarity"]
        assert hit["raw_ses"] == hit["sme_score"] == hit["report"]["raw_ses"]
    text = res.render()
    for block, h in zip(text.split("\n\n"), res.results, strict=False):
        assert set(SIMILARITY.findall(block)) == {f"{h.score:.3f}"}, block
    assert " score " not in text.replace("structural score", "")


def test_cli_map_of_two_signatures_prints_the_judged_report(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(SEED.to_data()), encoding="utf-8")
    b.write_text(json.dumps(TARGETS["perfect"].to_data()), encoding="utf-8")
    runner = CliRunner()
    human = runner.invoke(cli, ["map", str(a), str(b)])
    assert human.exit_code == 0, human.output
    assert "similarity 1.000 (normalized structural score; raw SES" in human.stdout
    assert "VERDICT   conclusion already holds; mechanism transfers" in human.stdout
    got = runner.invoke(cli, ["map", str(a), str(b), "--json"])
    data = json.loads(got.stdout)
    assert data["report"]["verdict"] == "conclusion already holds; mechanism transfers"
    assert data["report"]["similarity"] == 1.0 and data["mappings"]


def test_capped_similarities_do_not_tie(tmp_path: Path) -> None:
    """Two candidates both covering all of the target (similarity 1.0 each, capped): the one
    more of whose own structure maps ranks first — here against stage 1, which prefers the
    candidate that is the target twice over (the same predicate counts, scaled)."""
    data = SEED.to_data()
    plus_one = dict(data, episode_id="plus_one",
                    relations=[*data["relations"], ["caches", "DER", "SRC"]])

    def ren(x: str) -> str:
        return x.replace("SRC", "SRC2").replace("DER", "DER2").replace("CON", "CON2")
    doubled = dict(
        data, episode_id="doubled",
        roles={**data["roles"], **{ren(k): f"{v} (second)" for k, v in data["roles"].items()}},
        relations=[*data["relations"], *[[r[0], *map(ren, r[1:])] for r in data["relations"]]],
        causal_chain=[*data["causal_chain"], *[dict(e, cause=ren(e["cause"]),
                                                    effect=ren(e["effect"]))
                                               for e in data["causal_chain"]]])
    with Memory.open(tmp_path / "m.db") as m:
        m.add_many([validate_signature(plus_one), validate_signature(doubled)])
        res = Retriever(m, log=False).find(_copy("query"))
    got = {h.episode_id: h for h in res.results}
    assert got["plus_one"].score == got["doubled"].score == 1.0
    assert got["doubled"].stage1 > got["plus_one"].stage1
    assert got["plus_one"].report.normalized_score > got["doubled"].report.normalized_score
    assert [h.episode_id for h in res.results][:2] == ["plus_one", "doubled"]
