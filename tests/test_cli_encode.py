"""`analogist encode` and `analogist add --from-text`: both writers, a real SQLite store, a real
local chat-completions server for the LLM writer, and bad input."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analogist.cli import app
from tests.chat_server import ChatServer, Recorded

DATA = Path(__file__).parent / "data" / "llm"
TEXT_A = ("The cache was copied from the database. The cache drifted from the database. "
          "Because the cache was stale, the monitor reported a false alarm.")
TEXT_B = ("The pump failed after the valve stuck. The operator never checked the valve, so the "
          "tank overflowed.")
LLM_TEXT = (
    "The billing dashboard showed the monthly revenue from a cached summary table instead of "
    "querying the ledger. The nightly refresh job that rebuilt the summary table failed silently "
    "for three days, so the summary drifted from the ledger. The finance lead reported the stale "
    "revenue figure to the board as correct. Fix: the dashboard now reconciles the summary "
    "against the ledger before displaying totals.")



def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(app, list(args), env=env)


def _err(r) -> str:
    return r.output + (r.stderr if r.stderr_bytes is not None else "")


def test_encode_text_argument_deterministic(no_llm):
    r = run("encode", TEXT_A)
    assert r.exit_code == 0, _err(r)
    assert "writer=deterministic" in r.output
    assert "causal_chain" in r.output and "observed" in r.output


def test_encode_file_json_and_out(no_llm, tmp_path):
    f = tmp_path / "cache incident.txt"
    f.write_text(TEXT_A, encoding="utf-8")
    out = tmp_path / "sig.yaml"
    r = run("encode", str(f), "--json", "--domain", "software", "--out", str(out))
    assert r.exit_code == 0, _err(r)
    d = json.loads(r.output)
    assert d["writer"] == "deterministic"
    sig = d["signature"]
    assert sig["episode_id"] == "cache_incident"
    assert sig["surface"]["domain"] == "software"
    assert sig["provenance"]["source_hash"].startswith("sha256-")
    assert sig["verified"] is False
    assert 0.0 <= d["confidence"] <= 1.0
    assert any(lk["status"] == "observed" for lk in d["links"])
    assert out.read_text().startswith("episode_id: cache_incident")


def test_encode_check_reports_both_judges(no_llm):
    r = run("encode", TEXT_A, "--json", "--check", "--domain", "software_operations")
    assert r.exit_code == 0, _err(r)
    checks = json.loads(r.output)["checks"]
    emb = next(v for k, v in checks.items() if k.startswith("embedding"))
    assert set(emb) == {"faithfulness", "de_surfacing"}
    assert isinstance(emb["faithfulness"]["picked_original"], bool)
    assert checks["llm"]["skipped"].startswith("skipped: no LLM configured")


def test_encode_llm_writer_without_llm_says_so(no_llm):
    r = run("encode", TEXT_A, "--writer", "llm")
    assert r.exit_code == 2
    assert "no LLM configured" in _err(r)


def test_encode_llm_writer_over_real_server(no_llm):
    with ChatServer(Recorded(DATA / "writer_clean.json")) as srv:
        env = {"ANALOGIST_LLM_BASE_URL": srv.base_url, "ANALOGIST_LLM_MODEL": "test-model"}
        r = run("encode", LLM_TEXT, "--writer", "llm", "--json", env=env)
        n_calls = len(srv.requests)
    assert r.exit_code == 0, _err(r)
    d = json.loads(r.output)
    assert d["writer"] == "llm:test-model"
    assert d["signature"]["provenance"]["prompt_version"]
    assert n_calls >= 4                      # L0 → L1 → L2 → L3 in sequence
    assert d["usage"]["calls"] >= 4


@pytest.mark.parametrize("content, expect", [
    (b"", "empty"),
    (b"\x00\x01\x02binary\xff\xfe", ""),
])
def test_encode_bad_files(no_llm, tmp_path, content, expect):
    f = tmp_path / "bad.txt"
    f.write_bytes(content)
    r = run("encode", str(f))
    assert r.exit_code == 2
    assert "bad.txt" in _err(r)
    assert expect in _err(r).lower()


def test_encode_missing_file_path(no_llm, tmp_path):
    r = run("encode", str(tmp_path / "nope.txt"))
    assert r.exit_code == 2
    assert "nope.txt" in _err(r)


def test_add_from_text_stores_in_sqlite_and_is_all_or_nothing(no_llm, tmp_path):
    store = tmp_path / "s.db"
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(TEXT_A, encoding="utf-8")
    b.write_text(TEXT_B, encoding="utf-8")
    bad = tmp_path / "c.txt"
    bad.write_text("   \n", encoding="utf-8")
    r = run("add", "--from-text", str(a), str(bad), "--store", str(store), "--no-embed")
    assert r.exit_code == 2 and "c.txt" in _err(r)
    if store.exists():                       # nothing of the batch was written
        with sqlite3.connect(store) as con:
            assert con.execute("select count(*) from signatures").fetchone()[0] == 0
    r = run("add", "--from-text", str(a), str(b), "--store", str(store), "--no-embed",
            "--domain", "ops")
    assert r.exit_code == 0, _err(r)
    assert "added 2" in r.output
    r = run("show", "a", "--store", str(store), "--json")
    assert r.exit_code == 0, _err(r)
    shown = json.loads(r.output)
    sig = shown.get("signature", shown)
    assert sig["provenance"]["writer"] == "deterministic-encoder-1"
    assert sig["surface"]["domain"] == "ops"
    # the writers' new relations are recorded as proposed, each with a definition
    from analogist.memory.sqlite import Memory
    with Memory.open(store) as m:
        terms = m.terms()
    for t in terms:
        assert t["status"] == "proposed" and t["definition"].strip() and t["count"] >= 1


def test_unknown_writer_is_refused_everywhere(no_llm, tmp_path):
    f = tmp_path / "a.txt"
    f.write_text(TEXT_A, encoding="utf-8")
    store = tmp_path / "s.db"
    for args in (["encode", TEXT_A, "--writer", "gpt"],
                 ["add", "--from-text", str(f), "--writer", "gpt", "--store", str(store)],
                 ["find", str(f), "--from-text", "--writer", "gpt", "--store", str(store)],
                 ["bench", "parb", "--items", "8", "--representation", "encoded", "--writer",
                  "gpt", "--out", str(tmp_path / "parb")]):
        r = run(*args)
        assert r.exit_code == 2, args
        assert "deterministic" in _err(r) and "llm" in _err(r)
    assert not (tmp_path / "parb").exists()
    if store.exists():
        with sqlite3.connect(store) as con:
            assert con.execute("select count(*) from signatures").fetchone()[0] == 0


def test_find_from_text_bad_file_names_it(no_llm, tmp_path):
    f = tmp_path / "situation.txt"
    f.write_bytes(b"\x00\x00\xff")
    r = run("find", str(f), "--from-text", "--store", str(tmp_path / "s.db"))
    assert r.exit_code == 2
    assert "situation.txt" in _err(r)


def test_run_parb_unknown_arm(tmp_path):
    from analogist.bench.parb.runner import run_parb
    from analogist.errors import AnalogistError

    with pytest.raises(AnalogistError, match="unknown arm"):
        run_parb(8, ["C", "Z9"], out_dir=tmp_path / "o", progress=False)
    assert not (tmp_path / "o").exists()


def test_add_from_text_reports_texts_per_second(no_llm, tmp_path):
    files = []
    for i, text in enumerate((TEXT_A, TEXT_B)):
        f = tmp_path / f"t{i}.txt"
        f.write_text(text, encoding="utf-8")
        files.append(str(f))
    r = run("add", "--from-text", *files, "--store", str(tmp_path / "s.db"), "--no-embed")
    assert r.exit_code == 0, _err(r)
    line = next(x for x in r.stderr.splitlines() if x.startswith("encoded "))
    assert line.startswith("encoded 2 text(s) in ") and line.endswith(" texts/s)")
    assert "Warning" not in r.stderr          # no raw Python warnings reach the user
