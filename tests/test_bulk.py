"""Bulk signature files read as a stream: every accepted shape, bad input located by file, record
and line, files over the old 4 MiB cap, and ``analogist add`` over them (all or nothing), on a
store of each backend (conftest's ``store``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from analogist.bulk import MAX_RECORD_BYTES, iter_records
from analogist.cli import app
from analogist.errors import AnalogistError, InputTooLargeError, ParseError
from analogist.memory import open_memory

RECS = [{"episode_id": f"e{i}", "note": "n" * (i % 7)} for i in range(60)]


def ledger(eid: str) -> dict:
    return {"episode_id": eid, "kind": "failure",
            "roles": {"ACC": "bank account", "TOT": "copied ledger total", "CLK": "clerk"},
            "relations": [["derives_from", "TOT", "ACC"], ["trusts_as_authoritative", "CLK",
                                                          "TOT"]],
            "causal_chain": [], "surface": {"domain": "accounting", "entities": ["ledger"]}}


@pytest.mark.parametrize(("name", "text"), [
    ("a.json", json.dumps(RECS, indent=2)),
    ("b.json", json.dumps({"episodes": RECS, "source": {"k": [1, 2]}})),
    ("c.json", json.dumps({"source": "x", "episodes": RECS})),
    ("d.jsonl", "\n".join(json.dumps(r) for r in RECS) + "\n\n"),
    ("e.ndjson", "\n".join(json.dumps(r) for r in RECS)),
    ("f.yaml", yaml.safe_dump_all(RECS)),
    ("g.yml", yaml.safe_dump({"episodes": RECS})),
])
def test_every_shape_streams_the_same_records(tmp_path: Path, name: str, text: str) -> None:
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    got = list(iter_records(f))
    assert [r for _w, r in got] == RECS
    assert [w for w, _r in got] == [f"{f}[{i}]" for i in range(len(RECS))]


def test_one_object_is_one_record(tmp_path: Path) -> None:
    f = tmp_path / "one.json"
    f.write_text(json.dumps(RECS[3]))
    assert list(iter_records(f)) == [(str(f), RECS[3])]


def test_a_file_over_four_mib_is_read_record_by_record(tmp_path: Path) -> None:
    f = tmp_path / "big.json"
    rec = {"episode_id": "x", "pad": "p" * 50_000}
    with f.open("w") as out:
        out.write("[\n")
        out.write(",\n".join(json.dumps({**rec, "episode_id": f"x{i}"}) for i in range(100)))
        out.write("\n]\n")
    assert f.stat().st_size > 4 * 1024 * 1024
    n = 0
    for n, (_w, r) in enumerate(iter_records(f), 1):
        assert r["episode_id"] == f"x{n - 1}"
    assert n == 100


@pytest.mark.parametrize(("name", "text", "err", "needle"), [
    ("a.json", '[{"a": 1},\n {"b": 2},, {}]', ParseError, "line 2"),
    ("b.json", '[{"a": 1}', ParseError, "malformed JSON"),
    ("c.json", '[{"a": 1}] [2]', ParseError, "extra data"),
    ("d.json", '"text"', AnalogistError, "expected a signature object"),
    ("e.jsonl", '{"a": 1}\n{"a": \n', ParseError, "line 2"),
    ("f.yaml", "a: 1\n---\nb: [1\n", ParseError, "malformed YAML"),
    ("g.json", '{"episodes": [{"a": 1}] "x"}', ParseError, "after the episodes list"),
    ("h.json", '[{"a": "\x00"}]', ParseError, "NUL"),
    ("i.txt", "[]", AnalogistError, "expected a .json"),
])
def test_bad_files_are_located(tmp_path: Path, name: str, text: str, err: type,
                               needle: str) -> None:
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    with pytest.raises(err) as ei:
        list(iter_records(f))
    assert needle in str(ei.value) and str(f) in str(ei.value)


def test_a_record_over_the_limit_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "huge.json"
    f.write_text(json.dumps([RECS[0], {"pad": "x" * (MAX_RECORD_BYTES + 10)}]))
    with pytest.raises(InputTooLargeError, match="record 1 is"):
        list(iter_records(f))
    f = tmp_path / "small-limit.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in RECS))
    with pytest.raises(InputTooLargeError, match="record 0"):
        list(iter_records(f, max_record_bytes=10))
    f = tmp_path / "bad-utf8.json"
    f.write_bytes(b'[{"a": "\xff"}]')
    with pytest.raises(ParseError, match="UTF-8"):
        list(iter_records(f))


def test_cli_add_streams_a_bulk_file_all_or_nothing(tmp_path: Path, store: str) -> None:
    runner = CliRunner()
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(json.dumps(ledger(f"l{i}")) for i in range(30)))
    r = runner.invoke(app, ["add", str(good), "--store", str(store), "--no-embed",
                            "--batch-size", "7"])
    assert r.exit_code == 0, r.output
    assert "added 30 episode(s)" in r.output
    # a bad record at the end, or an episode already stored: nothing of the file is written
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([ledger(f"m{i}") for i in range(20)] + [{"episode_id": "x"}]))
    again = tmp_path / "again.yaml"
    again.write_text(yaml.safe_dump_all([ledger(f"n{i}") for i in range(20)] + [ledger("l3")]))
    twice = tmp_path / "twice.jsonl"
    twice.write_text("\n".join(json.dumps(ledger(e)) for e in ("p1", "p2", "p1")))
    for f, needle in ((bad, "bad.json[20]"), (again, "'l3' is already stored"),
                      (twice, "appears twice")):
        r = runner.invoke(app, ["add", str(f), "--store", str(store), "--no-embed",
                                "--batch-size", "5"])
        assert r.exit_code == 2 and needle in r.output and "Traceback" not in r.output
    with open_memory(store) as m:
        assert m.count() == 30
