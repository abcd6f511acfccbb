"""The outcome loop (issue 21, build item 6): record what analogies led to, and ``triggers fit``
and ``ledger`` read it — end to end through the CLI, on a real store of each backend (conftest's
``store``: a SQLite file, a PostgreSQL server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from analogist.cli import app
from analogist.errors import AnalogistError
from analogist.memory import open_memory
from analogist.triggers import fit_triggers, record_outcome

runner = CliRunner()


def _invoke(*args: str) -> Any:
    r = runner.invoke(app, list(args))
    assert r.exit_code == 0, r.output
    return r


def _rows(store: str) -> dict[str, int]:
    with open_memory(store) as m:
        return {t: m.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                for t in ("analogy_log", "analogy_outcomes", "transfer_ledger")}


def test_record_outcomes_then_triggers_fit_prints_fitted_rates(tmp_path: Path, store: str
                                                               ) -> None:
    log = tmp_path / "actions.json"
    repair = {"kind": "repair", "error_class": "timeout", "failed": True}
    log.write_text(json.dumps({"actions": [repair, repair,
                                           {"kind": "error", "error_class": "timeout"}]}))
    ids = []
    for _ in range(3):
        r = _invoke("triggers", "check", str(log), "--store", str(store), "--record", "--json")
        ids.append(json.loads(r.stdout)["log_id"])
    r = _invoke("triggers", "fit", "--store", str(store))
    assert "useful n/a" in r.output                      # before: nothing to fit
    _invoke("outcome", str(ids[0]), "--used", "deadlock-sw-lock-ordering", "--helped",
            "--store", str(store))
    _invoke("outcome", str(ids[1]), "--used", "deadlock-fin-payment-gridlock", "--not-helped",
            "--store", str(store))
    r = _invoke("outcome", str(ids[2]), "--negative", "--result", "3", "--counterfactual", "5",
                "--item", "ticket-17", "--store", str(store))
    assert "negative" in r.output and "ledger verdict worse" in r.output
    r = _invoke("outcome", "--used", "goodhart-edu-pass-rate", "--helped", "--store", str(store),
                "--json")
    assert json.loads(r.stdout)["log_id"] not in ids     # used outside find: a new log entry
    fit = json.loads(_invoke("triggers", "fit", "--store", str(store), "--json").stdout)
    t = fit["triggers"]["repeated_failed_repair"]
    assert t["firings"] == 3 and t["with_outcome"] == 3
    assert t["useful_rate"] == pytest.approx(1 / 3) and t["negative_rate"] == pytest.approx(1 / 3)
    lo, hi = t["useful_ci95"]
    assert 0 < lo < 1 / 3 < hi < 1
    assert fit["untriggered"]["with_outcome"] == 1 and fit["untriggered"]["useful_rate"] == 1.0
    text = _invoke("triggers", "fit", "--store", str(store)).output
    assert "repeated_failed_repair" in text and "useful 0.33, negative transfer 0.33" in text
    assert "(no trigger): 1 with outcome; useful 1.00" in text
    led = json.loads(_invoke("ledger", "--store", str(store), "--json").stdout)
    assert led["entries"] == 1 and led["worse"] == 1 and led["negative_transfer_rate"] == 1.0


@pytest.mark.parametrize("args, needle", [
    (["1", "--helped", "--negative"], "not both"),
    (["1"], "neither"),
    (["9999999999999999999999999999999999999999", "--helped"], "LOG_ID"),
    (["3x", "--helped"], "LOG_ID"),
    (["77", "--helped"], "no analogy log entry 77"),
    (["--helped"], "analogue used"),
    (["1", "--helped", "--counterfactual", "2"], "result"),
])
def test_bad_outcomes_are_one_line_and_write_nothing(store: str, args: list[str],
                                                     needle: str) -> None:
    with open_memory(store) as m:
        m.log_analogy(target={}, candidates=[], trigger=["error_logged"], tier=0)
    before = _rows(store)
    r = runner.invoke(app, ["outcome", *args, "--store", str(store)])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in r.output
    assert _rows(store) == before


def test_library_outcome_is_one_transaction(store: str) -> None:
    with open_memory(store) as m:
        lid = m.log_analogy(target={}, candidates=[], trigger={"fired": ["high_stakes"]}, tier=2)
        with pytest.raises(AnalogistError) as e:     # a bad ledger value: nothing is written
            record_outcome(m, lid, helped=True, result=float("nan"))
        assert e.value.field == "analogy_result"
        assert m.outcomes() == [] and m.ledger() == [] and m.log()[0]["outcome"] is None
        got = record_outcome(m, lid, helped=True, result=7, counterfactual=5)
        assert got["verdict"] == "better" and m.log()[0]["outcome"] == "useful"
        assert fit_triggers(m)["triggers"]["high_stakes"]["useful_rate"] == 1.0
        assert m.outcomes()[0]["ledger_verdict"] == "better"


def test_app_find_then_record_outcome_feeds_fit_and_ledger(store: str) -> None:
    """The application layer closes the loop the way every face does: find, act, record."""
    from analogist import Analogist
    from analogist.casebook import load_casebook

    cases = [c for c in load_casebook() if c.decoy_of is None][:4]
    with Analogist.open(store, embeddings=False, llm=False) as api:
        for c in cases[1:]:
            api.add(c.signature)
        found = api.find(cases[0].signature, k=2)
        assert found.log_id is not None
        used = found.results[0].episode_id
        got = api.record_outcome(found.log_id, helped=True, used=used)
        assert got["log_id"] == found.log_id and got["outcome"] == "useful"
        neg = api.record_outcome(used=used, negative=True, result=2, counterfactual=4,
                                 item="task-9")
        assert neg["verdict"] == "worse" and neg["log_id"] != found.log_id
        with pytest.raises(AnalogistError, match="not both"):
            api.record_outcome(found.log_id, helped=True, negative=True)
        fit = fit_triggers(api.memory())
        assert fit["untriggered"]["with_outcome"] == 2
        assert fit["untriggered"]["useful_rate"] == 0.5
        assert fit["untriggered"]["negative_rate"] == 0.5
    assert _rows(store) == {"analogy_log": 2, "analogy_outcomes": 2,
                                          "transfer_ledger": 1}
