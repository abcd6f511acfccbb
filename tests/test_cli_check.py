"""`analogist check`: JSON and plain-text turns, stdin, modes, exit codes 0/1/2, --json shape,
and the LLM path through the real local chat-completions server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analogist.cli import app
from analogist.llm.base import NO_LLM_REASON
from tests.chat_server import ChatServer, Reply

DATA = Path(__file__).parent / "data" / "safeguard"


pytestmark = pytest.mark.usefixtures("no_llm")


def run(*args: str, input: str | None = None, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, list(args), input=input, env=env)


def test_passing_json_turn_exits_0():
    r = run("check", str(DATA / "good_turn.json"), "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout[r.stdout.index("{"):r.stdout.rindex("}") + 1])
    assert set(out) == {"analogies", "content_share", "content_share_flag"}
    assert [(a["section"], a["mode"], a["pass"]) for a in out["analogies"]] == [
        ("arguments", "strict", True), ("historical_wisdom", "advisory", True)]
    assert out["analogies"][0]["classification"] == "supporting_evidence"
    assert out["analogies"][1]["grade"] == "strong_parallel"
    assert out["content_share_flag"] is False


def test_failing_json_turn_exits_1_with_table():
    r = run("check", str(DATA / "bad_turn.json"))
    assert r.exit_code == 1, r.output
    assert "FAIL" in r.stdout and "heuristic_only" in r.stdout
    assert "too vague" in r.stdout or "surface resemblance" in r.stdout
    assert "FLAGGED" in r.stdout
    assert NO_LLM_REASON in r.stdout


def test_plain_text_file_and_chinese():
    r = run("check", str(DATA / "turn_zh.txt"), "--json")
    assert r.exit_code == 0, r.output
    r = run("check", str(DATA / "turn_seed_bad.txt"), "--json")
    assert r.exit_code == 1
    out = json.loads(r.stdout[r.stdout.index("{"):r.stdout.rindex("}") + 1])
    assert len(out["analogies"]) == 2
    assert all(a["classification"] == "heuristic_only" for a in out["analogies"])


def test_stdin_and_text_flag():
    r = run("check", "-", "--json", input="This is just like the 1929 crash")
    assert r.exit_code == 1, r.output
    r = run("check", "-", input="Our pilot cut backlogs by a third at no extra cost.")
    assert r.exit_code == 0 and "(no analogies found)" in r.stdout
    # --text reads JSON-looking input as text: no analogy markers → nothing to fail
    r = run("check", "-", "--text", input='{"arguments": "our pilot cut backlogs"}')
    assert r.exit_code == 0, r.output


def test_mode_forcing():
    r = run("check", str(DATA / "bad_turn.json"), "--mode", "advisory", "--json")
    out = json.loads(r.stdout[r.stdout.index("{"):r.stdout.rindex("}") + 1])
    (a,) = out["analogies"]
    assert a["mode"] == "advisory" and a["classification"] is None
    assert a["grade"] == "weak_parallel" and out["content_share_flag"] is False
    r = run("check", str(DATA / "good_turn.json"), "--mode", "strict", "--json")
    out = json.loads(r.stdout[r.stdout.index("{"):r.stdout.rindex("}") + 1])
    assert [a["mode"] for a in out["analogies"]] == ["strict", "strict"]


@pytest.mark.parametrize("args,content,message", [
    (["--mode", "lenient"], None, "--mode must be strict or advisory"),
    ([], '{\n  "arguments": [\n', "line 3: malformed JSON"),
    ([], '{"arguments": [{"analogies": [{"differences": "none"}]}]}',
     "field arguments.0.analogies.0.differences"),
    ([], '["not", "an", "object"]', "expected a JSON object"),
    ([], "   \n", "empty"),
])
def test_bad_input_exits_2(tmp_path, args, content, message):
    path = tmp_path / "turn.json"
    path.write_text(content if content is not None else "{}", encoding="utf-8")
    r = run("check", str(path), *args)
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output


def test_missing_file_and_binary_exit_2(tmp_path):
    r = run("check", str(tmp_path / "nope.json"))
    assert r.exit_code == 2 and "file not found" in r.output
    b = tmp_path / "b.txt"
    b.write_bytes(b"\xff\xfe\x00abc")
    r = run("check", str(b))
    assert r.exit_code == 2 and "UTF-8" in r.output


def test_llm_path_and_no_llm_flag():
    text = (DATA / "turn_seed_bad.txt").read_text(encoding="utf-8")

    def respond(req, _i):
        if req["response_format"]["json_schema"]["name"] == "safeguard_find":
            return Reply.json({"analogies": [{"quote": "This is just like the 1929 crash.",
                                              "source": "1929 crash", "similarities": [],
                                              "differences": []}]})
        return Reply.json({"share": 0.9, "rationale": "the whole turn is analogy"})

    with ChatServer(respond) as srv:
        env = {"ANALOGIST_LLM_BASE_URL": srv.base_url, "ANALOGIST_LLM_MODEL": "test-model"}
        r = run("check", "-", "--json", input=text, env=env)
        calls = srv.calls
        r2 = run("check", "-", "--json", "--no-llm", input=text, env=env)
        assert srv.calls == calls  # --no-llm: no request
    assert r.exit_code == 1, r.output
    out = json.loads(r.stdout[r.stdout.index("{"):r.stdout.rindex("}") + 1])
    assert out["content_share"] == 0.9 and calls == 2
    assert r2.exit_code == 1 and NO_LLM_REASON in r2.output
