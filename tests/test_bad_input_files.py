"""Deeply nested JSON/YAML and out-of-range ids (issue 21, build item 2, the library half): every
command that reads a file answers with one line and exit 2, and the store is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from analogist.cli import app
from analogist.errors import AnalogistError, ParseError
from analogist.io import MAX_DEPTH, check_depth, parse_structured
from analogist.memory.sqlite import MAX_ID, Memory, StoreError
from tests.hostile_inputs import row_counts

runner = CliRunner()
DEEP = "[" * 200_000 + "]" * 200_000




@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("deep")
    store = d / "store.db"
    with Memory.open(store) as m:
        m.add({"episode_id": "tiny", "kind": "failure", "roles": {"A": "a copy", "B": "source"},
               "relations": [["derives_from", "A", "B"]]})
        m.log_analogy(target={}, candidates=[])
    out = {"dir": d, "store": store}
    for name, text in (("deep.json", DEEP), ("deep.yaml", "a: " + DEEP),
                       ("deep_block.yaml", "- " * 5_000 + "x")):
        (d / name).write_text(text, encoding="utf-8")
        out[name] = d / name
    return out


@pytest.mark.parametrize("command", [
    ["add", "@deep.json"], ["add", "@deep.yaml"], ["add", "@deep_block.yaml"],
    ["find", "@deep.json"], ["map", "@deep.json", "@deep.json"],
    ["check", "@deep.json"], ["eval", "check", "@deep.json"],
    ["eval", "run", "@deep.json", "--out", "@dir/r.json"],
    ["delete", "1234567890123456789012345678901234567890"],
    ["show", "1234567890123456789012345678901234567890"],
])
def test_one_line_exit_2_store_unchanged(files: dict[str, Path], command: list[str]) -> None:
    args = [str(files[a[1:].split("/")[0]]) + ("/r.json" if a.endswith("/r.json") else "")
            if a.startswith("@") else a for a in command]
    before = row_counts(files["store"])
    r = runner.invoke(app, args, env={"ANALOGIST_STORE": str(files["store"])})
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.output
    if "deep" in " ".join(command):
        name = Path(args[1] if args[0] != "eval" else args[2]).name
        assert name in lines[0]
        assert "nested" in lines[0] or "more than" in lines[0]
    else:
        # a 40-digit id is no episode (too large for a row id, and no episode has that id)
        assert "no episode '1234567890123456789012345678901234567890'" in lines[0]
    assert row_counts(files["store"]) == before


def test_depth_limit_is_exact_and_strings_do_not_count() -> None:
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_structured(ok, fmt="json") is not None
    assert parse_structured(ok, fmt="yaml") is not None
    with pytest.raises(ParseError, match="nested deeper"):
        parse_structured("[" + ok + "]", fmt="json")
    with pytest.raises(ParseError, match="nested deeper"):
        parse_structured("[" + ok + "]", fmt="yaml")
    assert parse_structured('{"a": "' + "[" * 500 + '\\"["}', fmt="json") == {
        "a": "[" * 500 + '"['}
    with pytest.raises(ParseError) as e:
        parse_structured('{"a":\n [\n' + "[" * 100, source="x.json", fmt="json")
    assert e.value.line == 2 + 1 and e.value.source == "x.json"


def test_self_referencing_yaml_is_refused() -> None:
    with pytest.raises(ParseError, match="nested deeper|more than"):
        parse_structured("a: &a [*a]", fmt="yaml")
    with pytest.raises(ParseError, match="more than"):
        check_depth([[1, 2]] * 10, max_values=5)


def test_ids_out_of_range_are_refused_at_the_memory_layer(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m.db") as m:
        for call in (lambda: m.get(MAX_ID + 1), lambda: m.delete(10 ** 40),
                     lambda: m.log(limit=2 ** 64), lambda: m.set_outcome(2 ** 70, "useful"),
                     lambda: m.plan_uses(plan_id=2 ** 63), lambda: m.use_schema(-1)):
            with pytest.raises(StoreError) as e:
                call()
            assert isinstance(e.value, AnalogistError) and e.value.field
        assert m.get(MAX_ID) is None
