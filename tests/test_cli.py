"""The ``analogist`` command line: output shapes, and bad input → exit 2, file named, no traceback.

Tests that need the structure-mapping engine use the ``engine`` fixture, which *fails* (never
skips) when ``analogist.sme.match`` is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from analogist import __version__
from analogist.cli import app
from analogist.io import MAX_FILE_BYTES

try:  # click < 8.2 mixes stderr into output unless told not to
    runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
except TypeError:
    runner = CliRunner()

DATA = Path(__file__).resolve().parents[1] / "src" / "analogist" / "data" / "sme4"
MAPPING_KEYS = {"score", "mh_count", "entity_mhs", "root_mhs", "cis", "alignable_differences"}

SEED_SIGNATURE: dict[str, Any] = {
    "episode_id": "ep_cache",
    "kind": "failure",
    "roles": {"SRC": "authoritative source", "DER": "derived copy", "CON": "consumer"},
    "relations": [["derives_from", "DER", "SRC"], ["trusts_as_authoritative", "CON", "DER"],
                  ["skips_check", "CON", "SRC"], ["diverges_from", "DER", "SRC"]],
    "causal_chain": [["diverges_from(DER,SRC)", "causes", "false_claim(CON)"],
                     ["skips_check(CON,SRC)", "enables", "false_claim(CON)"]],
}
OTHER_SIGNATURE: dict[str, Any] = {
    "episode_id": "ep_mirror",
    "kind": "failure",
    "roles": {"ORIG": "upstream repository", "MIR": "stale mirror", "BUILD": "build job"},
    "relations": [["derives_from", "MIR", "ORIG"], ["trusts_as_authoritative", "BUILD", "MIR"],
                  ["diverges_from", "MIR", "ORIG"]],
    "causal_chain": [["diverges_from(MIR,ORIG)", "causes", "false_claim(BUILD)"]],
}


@pytest.fixture
def engine() -> Any:
    """The engine's ``match``; a test using this fails (not skips) while the engine is missing."""
    try:
        from analogist.sme import match
    except ImportError as e:  # pragma: no cover - only before the engine lands
        pytest.fail(f"the structure-mapping engine is not available: {e}")
    return match


def invoke(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def stderr_of(result: Any) -> str:
    return result.stderr


def assert_bad_input(result: Any, *needles: str) -> None:
    """Exit 2, one error message on stderr naming what it should, no traceback anywhere."""
    err = stderr_of(result)
    assert result.exit_code == 2, (result.exit_code, result.stdout, err, result.exception)
    for n in needles:
        assert n in err, (n, err)
    assert "Traceback" not in err and "Traceback" not in result.stdout
    assert result.stdout == ""
    # The exception that ended the command is the clean exit, not a crash.
    assert result.exception is None or isinstance(result.exception, SystemExit)


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# -- happy paths ---------------------------------------------------------------------------------

def test_version() -> None:
    r = invoke("--version")
    assert r.exit_code == 0
    assert __version__ in r.stdout


def test_list_examples() -> None:
    r = invoke("map", "--list-examples")
    assert r.exit_code == 0
    assert "heat-water" in r.stdout and "solar-atom" in r.stdout


def test_example_json_shape(engine: Any) -> None:
    r = invoke("map", "--example", "heat-water", "--json")
    assert r.exit_code == 0, stderr_of(r)
    data = json.loads(r.stdout)
    assert set(data) == {"mh_count", "kernel_count", "mappings"}
    assert data["mh_count"] == 20 and data["kernel_count"] == 5
    assert data["mappings"], "expected at least one mapping"
    for m in data["mappings"]:
        assert set(m) == MAPPING_KEYS
        assert all(len(p) == 2 for p in m["entity_mhs"])
    assert sorted(map(tuple, data["mappings"][0]["entity_mhs"])) == sorted(
        [("beaker", "coffee"), ("vial", "ice-cube"), ("water", "heat"), ("pipe", "bar")])


def test_example_json_is_stable(engine: Any) -> None:
    a = invoke("map", "--example", "solar-atom", "--json")
    b = invoke("map", "--example", "solar-atom", "--json")
    assert a.exit_code == 0 and a.stdout == b.stdout


def test_example_human_output(engine: Any) -> None:
    r = invoke("map", "--example", "heat-water")
    assert r.exit_code == 0, stderr_of(r)
    out = r.stdout
    assert "score" in out
    assert "MH count" in out and "kernel count" in out
    for word in ("correspondences", "root matches", "candidate inferences", "coffee"):
        assert word in out


def test_map_dgr_files(engine: Any) -> None:
    r = invoke("map", DATA / "solar.dgr", DATA / "ruther.dgr", "--vocab", DATA / "sys2lang.vcb",
               "--json")
    assert r.exit_code == 0, stderr_of(r)
    data = json.loads(r.stdout)
    assert data["mh_count"] == 22 and data["kernel_count"] == 6
    assert ["sun", "nucleus"] in data["mappings"][0]["entity_mhs"]


def test_map_signature_files(engine: Any, tmp_path: Path) -> None:
    b = write(tmp_path, "base.json", json.dumps(SEED_SIGNATURE))
    t = write(tmp_path, "target.yaml", json.dumps(OTHER_SIGNATURE))  # JSON is valid YAML
    r = invoke("map", b, t, "--json")
    assert r.exit_code == 0, stderr_of(r)
    data = json.loads(r.stdout)
    best = dict(map(tuple, data["mappings"][0]["entity_mhs"]))
    assert best.get("DER") == "MIR" and best.get("SRC") == "ORIG"
    human = invoke("map", b, t)
    assert human.exit_code == 0 and "score" in human.stdout


def test_python_dash_m_json(engine: Any) -> None:
    p = subprocess.run([sys.executable, "-m", "analogist", "map", "--example", "heat-water",
                        "--json"], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "NO_COLOR": "1"})
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert {"mh_count", "kernel_count", "mappings"} <= set(data)
    assert set(data["mappings"][0]) == MAPPING_KEYS


def test_python_dash_m_bad_input(tmp_path: Path) -> None:
    missing = tmp_path / "nope.dgr"
    p = subprocess.run([sys.executable, "-m", "analogist", "map", str(missing), str(missing)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    assert "nope.dgr" in p.stderr and "not found" in p.stderr
    assert "Traceback" not in p.stderr + p.stdout
    assert p.stdout == ""


# -- bad input -----------------------------------------------------------------------------------

GOOD_TARGET = DATA / "sheat.dgr"


def test_missing_file(tmp_path: Path) -> None:
    r = invoke("map", tmp_path / "absent.dgr", GOOD_TARGET)
    assert_bad_input(r, "absent.dgr", "not found")


def test_unknown_example() -> None:
    assert_bad_input(invoke("map", "--example", "no-such-example"), "no-such-example")


def test_no_files_given() -> None:
    assert_bad_input(invoke("map"), "BASE")


def test_unknown_suffix(tmp_path: Path) -> None:
    p = write(tmp_path, "notes.txt", "hello")
    assert_bad_input(invoke("map", p, GOOD_TARGET), "notes.txt", ".dgr")


DGR_HEAD = "(defentity a)\n(defentity b)\n"


@pytest.mark.parametrize(
    ("name", "text", "needles"),
    [
        ("unclosed.dgr",
         "(defdescription d\n  entities (a b)\n  expressions (((greater a b) :name g)\n",
         ["unclosed.dgr", "line 3", "unclosed"]),
        ("undeclared.dgr",
         "(defdescription d\n  entities (a b)\n  expressions (((frobnicates a b) :name g)))\n",
         ["undeclared.dgr", "line 3", "frobnicates"]),
        ("arity.dgr",
         "(defdescription d\n  entities (a b)\n  expressions (((greater a) :name g)))\n",
         ["arity.dgr", "line 3", "arity"]),
        ("dangling.dgr",
         "(defdescription d\n  entities (a b)\n  expressions (((greater a b) :name g)\n"
         "               ((cause g h2) :name c)))\n",
         ["dangling.dgr", "line 4", "h2"]),
        ("cyclic.dgr",
         "(defdescription d\n  entities (a b)\n  expressions (((cause y b) :name x)\n"
         "               ((cause x a) :name y)))\n",
         ["cyclic.dgr", "line", "cyclic"]),
    ],
)
def test_bad_dgr(tmp_path: Path, name: str, text: str, needles: list[str]) -> None:
    p = write(tmp_path, name, text)
    assert_bad_input(invoke("map", p, GOOD_TARGET), *needles)
    # same error whichever side the bad file is on
    assert_bad_input(invoke("map", GOOD_TARGET, p), *needles)


def test_file_over_size_limit(tmp_path: Path) -> None:
    p = tmp_path / "huge.dgr"
    with p.open("w", encoding="utf-8") as f:
        f.write(";" + " " * (MAX_FILE_BYTES + 10) + "\n")
    assert_bad_input(invoke("map", p, GOOD_TARGET), "huge.dgr", "limit")


def test_signature_over_size_limit(tmp_path: Path) -> None:
    p = tmp_path / "huge.json"
    with p.open("w", encoding="utf-8") as f:
        f.write(" " * (MAX_FILE_BYTES + 10) + "{}")
    assert_bad_input(invoke("map", p, p), "huge.json", "limit")


def test_malformed_signature_json(tmp_path: Path) -> None:
    p = write(tmp_path, "broken.json", '{\n  "episode_id": "x",\n  "kind": "failure",\n  oops\n}\n')
    assert_bad_input(invoke("map", p, p), "broken.json", "line 4")


def test_invalid_signature(tmp_path: Path) -> None:
    bad = {**SEED_SIGNATURE, "relations": [["derives_from", "DER", "NOBODY"]]}
    p = write(tmp_path, "invalid.json", json.dumps(bad, indent=2))
    good = write(tmp_path, "good.json", json.dumps(SEED_SIGNATURE))
    assert_bad_input(invoke("map", good, p), "invalid.json", "NOBODY")


def test_signature_missing_required_field(tmp_path: Path) -> None:
    bad = {k: v for k, v in SEED_SIGNATURE.items() if k != "roles"}
    p = write(tmp_path, "noroles.yaml", "\n".join(f"{k}: {json.dumps(v)}" for k, v in bad.items()))
    assert_bad_input(invoke("map", p, p), "noroles.yaml", "roles")


def test_bad_vocabulary_file(tmp_path: Path) -> None:
    v = write(tmp_path, "bad.vcb", "(defpredicate greater (a b) relation\n")
    assert_bad_input(invoke("map", DATA / "swater.dgr", GOOD_TARGET, "--vocab", v),
                     "bad.vcb", "line 1")
