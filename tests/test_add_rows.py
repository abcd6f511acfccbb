"""The rows a store holds after an add do not depend on the way they were added: one at a time,
in batches (with and without embeddings) or by ``analogist add`` of a bulk file; and they are
the rows this fixed input gave before the bulk write path was reworked (the digests below were
taken of the store written by the code of that time, 8af9d8c)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from analogist.cli import app
from analogist.errors import AnalogistError
from analogist.memory.records import _COMPACT, _signature_json
from analogist.memory.sqlite import Memory
from analogist.signature import validate_signature
from tests.add_rows import FIXED_NOW, digest, dump, embed, records
from tests.test_signature_fast import _RECORD

# sha256 of tests/add_rows.dump() of the store written by add_many / add of records(), at 8af9d8c
BEFORE = "b0c001bd37c4927a2473044970f61e838c147c4a971a50ca996eb1a76209b4b5"
BEFORE_EMBED = "bc48afc11c8ec024ab20bdd0aa6f7f4375774c39fe604869da2fcdf1da37443f"


def _store(path: Path, how: str) -> Path:
    recs = records()
    with Memory.open(path, clock=lambda: FIXED_NOW) as m:
        if how == "one":
            for r in recs:
                m.add(r, namespace="rows")
        else:
            m.add_many(recs, namespace="rows", batch_size=97,
                       embed=embed if how == "embed" else None)
    return path


def test_batches_write_the_rows_of_before(tmp_path: Path) -> None:
    assert digest(_store(tmp_path / "many.db", "many")) == BEFORE


def test_batches_with_embeddings_write_the_rows_of_before(tmp_path: Path) -> None:
    assert digest(_store(tmp_path / "embed.db", "embed")) == BEFORE_EMBED


def test_one_at_a_time_writes_the_same_rows(tmp_path: Path) -> None:
    assert digest(_store(tmp_path / "one.db", "one")) == BEFORE


def _without_created_at(text: str) -> str:
    return text.replace(repr(FIXED_NOW.isoformat()), "<now>")


def test_cli_bulk_add_writes_the_same_rows(tmp_path: Path) -> None:
    f = tmp_path / "bulk.jsonl"
    f.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records()),
                 encoding="utf-8")
    cli = tmp_path / "cli.db"
    r = CliRunner().invoke(app, ["add", str(f), "--store", str(cli), "--namespace", "rows",
                                 "--no-embed", "--batch-size", "64"])
    assert r.exit_code == 0, r.output
    want = _without_created_at(dump(_store(tmp_path / "many.db", "many")))
    got = dump(cli)
    # every row but the time of the add, which the CLI takes from the clock
    with Memory.open(cli) as m:
        now = {e.created_at for e in m.list("rows", include_superseded=True)}
    assert len(now) >= 1
    for t in now:
        got = got.replace(repr(t), "<now>")
    assert got == want


def test_validated_signatures_are_stored_as_given_and_mappings_still_checked(
        tmp_path: Path) -> None:
    recs = records()
    sigs = [validate_signature(r) for r in recs]
    path = tmp_path / "validated.db"
    with Memory.open(path, clock=lambda: FIXED_NOW) as m:
        m.add_many(sigs, namespace="rows", batch_size=97, validated=True)
    assert digest(path) == BEFORE
    with Memory.open(tmp_path / "bad.db") as m:
        with pytest.raises(AnalogistError, match=r"record 1: ") as ei:
            m.add_many([sigs[0], {"episode_id": "x"}], validated=True)
        assert ei.value.field is not None and ei.value.field.startswith("records[1]")
        assert m.count() == 0


def _json_agrees(data: Any) -> None:
    try:
        sig = validate_signature(copy.deepcopy(data))
    except AnalogistError:
        return
    assert _signature_json(sig) == _COMPACT.encode(sig.to_data())


def test_signature_json_is_the_compact_canonical_form() -> None:
    for rec in records():
        _json_agrees(rec)
    sig = validate_signature({**records()[0], "verified": True, "symptom": 'a "b"\n\x01'})
    assert _signature_json(sig) == _COMPACT.encode(sig.to_data())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_RECORD)
def test_signature_json_agrees_on_generated_records(data: dict[str, Any]) -> None:
    _json_agrees(data)
