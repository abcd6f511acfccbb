"""The bad-input sweep over every CLI command that reads input and every MCP tool (issue 21,
item 2): deep JSON/YAML, empty, binary and oversized files, wrong types, unknown top-level keys,
40-digit ids, bad key names. Every case: no traceback, exit status 2 with one line naming the
file or field (click's own usage errors too), the store's row counts unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from analogist.casebook import load_casebook
from analogist.cli import app
from analogist.signature import dump_signature
from tests.hostile_inputs import BAD_KEY_NAMES, DEEP, HUGE_ID, row_counts, write_all
from tests.mcp_client import SyncClient, stdio_transport

runner = CliRunner()

FILE_COMMANDS: dict[str, list[str]] = {
    "check": ["check", "{f}"],
    "find": ["find", "{f}", "--store", "{s}"],
    "add": ["add", "{f}", "--store", "{s}", "--no-embed"],
    "map": ["map", "{f}", "{f}"],
    "triggers check": ["triggers", "check", "{f}", "--store", "{s}", "--record"],
    "plans add": ["plans", "add", "{f}", "--store", "{s}"],
    "plans match": ["plans", "match", "{f}", "--store", "{s}"],
    "eval check": ["eval", "check", "{f}"],
    "eval run": ["eval", "run", "{f}", "--store", "{s}", "--out", "{o}"],
    "eval compare": ["eval", "compare", "{f}", "{f}"],
    "foresight brief": ["foresight", "brief", "{f}", "--store", "{s}", "--rounds", "0"],
    "foresight show": ["foresight", "show", "{f}"],
    "foresight add": ["foresight", "add", "{f}", "--store", "{s}"],
    "encode": ["encode", "{f}"],
    "eval build --paraphrases": ["eval", "build", "--store", "{s}", "--out", "{o}",
                                 "--paraphrases", "{f}"],
    "foresight brief --calibration": ["foresight", "brief", "arab-spring", "--calibration",
                                      "{f}", "--rounds", "0"],
    **{f"bench external {name}": ["bench", "external", name, "{f}"]
       for name in ("arn", "storyanalogy", "parallelparc", "analobench", "rattermann",
                    "historical")},
}
TEXT_OK = {"encode"}
"""Commands whose input may be any text: a readable text file is an episode to them."""




@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("sweep")
    store = d / "s.db"
    ep = next(e for e in load_casebook() if e.decoy_of is None)
    good = d / "good.json"
    good.write_text(dump_signature(ep.signature))
    r = runner.invoke(app, ["add", str(good), "--store", str(store), "--no-embed"])
    assert r.exit_code == 0, r.output
    return {"dir": d, "store": store, "files": write_all(d), "episode": ep}


def _one_line_refusal(r: Any) -> str | None:
    """None when ``r`` is a clean refusal, else what is wrong."""
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        return f"raised {type(r.exception).__name__}"
    if "Traceback" in r.output:
        return "traceback"
    if r.exit_code != 2:
        return f"exit {r.exit_code}"
    lines = r.output.strip().splitlines()
    if len(lines) != 1 or not lines[0].startswith("error: "):
        return f"{len(lines)} lines: {lines[:3]}"
    return None


def test_every_file_command_refuses_every_hostile_file(world: dict[str, Any]) -> None:
    store, d = world["store"], world["dir"]
    before = row_counts(store)
    problems = []
    n = 0
    for cmd, template in FILE_COMMANDS.items():
        for name, path in world["files"].items():
            args = [a.replace("{f}", str(path)).replace("{s}", str(store))
                    .replace("{o}", str(d / "out.json")) for a in template]
            r = runner.invoke(app, args)
            n += 1
            if cmd in TEXT_OK and r.exit_code == 0 and r.exception is None:
                continue
            why = _one_line_refusal(r)
            if why is not None:
                problems.append((cmd, name, why))
    assert problems == [], problems
    assert n == len(FILE_COMMANDS) * len(world["files"])
    assert row_counts(store) == before
    assert not (d / "out.json").exists()


@pytest.mark.parametrize("args", [
    ["show", HUGE_ID], ["delete", HUGE_ID], ["show", "-" + HUGE_ID],
    ["outcome", HUGE_ID, "--helped"], ["outcome", "1", "--helped", "--negative"],
    ["find", "missing.json"], ["list", "--namespace", ""],
    ["log", "--limit", HUGE_ID], ["map", "--example", "no-such-example"],
    ["check", "-", "--mode", "lenient"],
])
def test_ids_and_options_out_of_range(world: dict[str, Any], args: list[str]) -> None:
    store = world["store"]
    before = row_counts(store)
    r = runner.invoke(app, [*args, "--store", str(store)] if args[0] not in ("map", "check")
                      else args, input="")
    assert _one_line_refusal(r) is None, (args, r.output)
    assert row_counts(store) == before


@pytest.mark.parametrize("name", BAD_KEY_NAMES)
def test_bad_key_names_create_nothing(tmp_path: Path, name: str) -> None:
    store = tmp_path / "k.db"
    r = runner.invoke(app, ["init", "--store", str(store)])
    assert r.exit_code == 0
    before = row_counts(store)
    r = runner.invoke(app, ["keys", "add", name, "--store", str(store)])
    assert _one_line_refusal(r) is None, r.output
    assert row_counts(store) == before            # not even an empty keys table


# -- MCP: every tool, over stdio ---------------------------------------------------------------

def _sig(ep: Any) -> dict[str, Any]:
    return json.loads(dump_signature(ep.signature))


HOSTILE_VALUES: list[Any] = [
    None, True, -1, 10 ** 40, 1.5, "", "x" * 300_000, [], [[[[[]]]]], {"argumentz": []},
    json.loads("[" * 60 + "]" * 60),
]


def test_every_mcp_tool_answers_hostile_arguments_in_one_line(tmp_path: Path) -> None:
    from analogist.memory.sqlite import Memory

    store = tmp_path / "m.db"
    ep = next(e for e in load_casebook() if e.decoy_of is None)
    c = SyncClient(stdio_transport(store, "sw", tmp_path / "server.log"))
    try:
        c.ok("remember_episode", {"signature": _sig(ep)})
        tools = {t.name: t for t in c.run(lambda s: s.list_tools()).tools}
        before = row_counts(store)
        n = 0
        problems = []
        for name, tool in tools.items():
            params = list(tool.input_schema.get("properties", {}))
            for p in params:
                for v in HOSTILE_VALUES:
                    if name == "list_episodes" and v is None:
                        continue                # every argument optional: a valid call
                    if name == "record_outcome" and p == "note" and v is None:
                        continue
                    args = {p: v}
                    res = c.call(name, args)
                    n += 1
                    text = res.content[0].text if res.content else ""
                    if not res.is_error:
                        if name in ("list_episodes",) or (name == "record_outcome"):
                            problems.append((name, p, repr(v)[:40], "accepted"))
                        continue
                    if "\n" in text.strip() or "Traceback" in text or "input_value" in text \
                            or not text:
                        problems.append((name, p, repr(v)[:40], text[:200]))
            res = c.call(name, {"unknown_argument": 1})
            n += 1
            if not res.is_error or "unknown argument" not in res.content[0].text:
                problems.append((name, "unknown_argument", res.content[0].text[:200]))
        assert n > 200
        assert not [p for p in problems if p[-1] != "accepted"], problems
        assert row_counts(store) == before
        big = c.err("map_cases", {"source": json.loads("[" * 60 + "]" * 60), "target": DEEP})
        assert "\n" not in big.strip()
    finally:
        c.close()
    with Memory.open(store) as m:
        assert m.count("sw") == 1


def test_help_has_no_type_placeholders_or_seed_references() -> None:
    import re

    import typer.main

    def paths(cmd: Any, pre: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
        subs = getattr(cmd, "commands", None)
        if not subs:
            return [pre]
        return [pre] + [p for n, c in subs.items() for p in paths(c, (*pre, n))]

    bad = []
    every = paths(typer.main.get_command(app))
    for path in every:
        out = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"}).output
        found = re.findall(r"<(?:str|bool|int|float|path|file)>|\{[a-z_]+\}|seed \d|§", out)
        if found:
            bad.append((" ".join(path), found))
    assert len(every) > 30 and bad == []


# -- click's own usage errors: one line, exit 2, on every command ---------------------------------

def _commands() -> list[tuple[tuple[str, ...], Any]]:
    """Every leaf command of the tree, with its path."""
    import typer.main

    out = []

    def walk(cmd: Any, pre: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for n, c in subs.items():
                walk(c, (*pre, n))
        else:
            out.append((pre, cmd))
    walk(typer.main.get_command(app), ())
    return out


def _usage_refusal(r: Any, path: tuple[str, ...], needle: str) -> str | None:
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        return f"raised {type(r.exception).__name__}"
    if r.exit_code != 2:
        return f"exit {r.exit_code}"
    if r.stdout:
        return f"stdout {r.stdout[:80]!r}"
    lines = r.stderr.strip().splitlines()
    want = f"error: analogist {' '.join(path)}: {needle}"
    if len(lines) != 1 or not lines[0].startswith(want) or "─" in lines[0]:
        return f"{len(lines)} lines: {lines[:3]}"
    return None


def test_click_usage_errors_are_one_line_on_every_command() -> None:
    """An unknown option, a missing argument and a value of the wrong type, on every command
    that has one: one line on stderr naming the command (no boxed usage block), exit 2."""
    commands = _commands()
    problems, n = [], 0
    for path, cmd in commands:
        cases = [([*path, "--no-such-option"], "No such option: --no-such-option")]
        if any(getattr(p, "required", False) and p.param_type_name == "argument"
               for p in cmd.params):
            cases.append(([*path], "Missing argument"))
        for p in cmd.params:
            ann = getattr(getattr(p, "type_descriptor", None), "annotation", None)
            if p.param_type_name == "option" and ann in (int, int | None) and not p.is_flag:
                cases.append(([*path, p.opts[0], "abc"], f"Invalid value for '{p.opts[0]}'"))
                break
        for args, needle in cases:
            n += 1
            why = _usage_refusal(runner.invoke(app, args, input=""), path, needle)
            if why is not None:
                problems.append((" ".join(args), why))
    assert len(commands) > 30 and n > 1.5 * len(commands)
    assert problems == [], problems
    r = runner.invoke(app, ["no-such-command"])
    assert r.exit_code == 2 and r.stderr.strip().splitlines() == [
        "error: analogist: No such command 'no-such-command' (see 'analogist --help')"]
