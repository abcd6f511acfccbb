"""The Event model, its bad-input errors, cutoff views, compilation and the bundled corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from analogist.errors import AnalogistError, InputTooLargeError, ParseError
from analogist.foresight.event import (
    DOMAINS,
    POSITIONS,
    Event,
    EventError,
    event_from_signature,
    foresight_vocabulary,
    load_corpus,
    load_event,
    mechanism_definitions,
    parse_date,
    validate_event,
)
from analogist.signature import compile_signature
from tests.foresight_fixtures import CRISIS, CRISIS_LINKS, crisis, make_event


def _data(**over):
    ev = crisis("some-crisis", cutoff="1900-06-15", name="Some Crisis")
    d = ev.model_dump(mode="json", exclude_none=True)
    d.update(over)
    return d


def test_round_trip_through_json_and_yaml(tmp_path):
    ev = crisis("some-crisis", cutoff="1900-06-15", name="Some Crisis")
    again = validate_event(ev.model_dump(mode="json"))
    assert again == ev
    p = tmp_path / "e.yaml"
    p.write_text(yaml.safe_dump(ev.model_dump(mode="json", exclude_none=True)))
    assert load_event(p) == ev


def test_dates():
    assert parse_date("1907-10-14") == (1907, 10, 14)
    assert parse_date("2007-08") == (2007, 8, 0)
    assert parse_date("1900") == (1900, 0, 0)
    assert parse_date("-0044-03-15") == (-44, 3, 15)
    assert parse_date("-0044") < parse_date("0001")
    for bad in ("1907-13", "yesterday", "1907-1-1", "", "1907-00-05"):
        with pytest.raises(EventError):
            parse_date(bad)


def test_cutoff_splits_observed_and_hidden():
    ev = crisis("some-crisis", cutoff="1900-06-15", name="Some Crisis")
    tv = ev.at_cutoff()
    assert [f.id for f in tv.view.factors] == ["BOOM", "SHADOW", "BET"]
    assert [f.id for f in tv.hidden] == ["RUN", "CRUNCH", "RESCUE", "SLUMP"]
    assert all(ln.cause in {"BOOM", "SHADOW", "BET"} for ln in tv.view.links)
    assert ("amplifier", "bank_run") in tv.hidden_hypotheses()
    later = ev.at_cutoff("1900-08")
    assert "CRUNCH" in {f.id for f in later.view.factors}
    assert tv.brief_text().endswith("brief of some-crisis")
    with pytest.raises(EventError, match="no factor"):
        ev.at_cutoff("1899")


def test_explicit_status_overrides_time():
    d = _data()
    d["factors"][0]["status"] = "hidden"
    d["factors"][3]["status"] = "observed"
    tv = validate_event(d).at_cutoff()
    assert "BOOM" in {f.id for f in tv.hidden}
    assert "RUN" in {f.id for f in tv.view.factors}


def test_compiles_deterministically_with_positions_as_attributes():
    ev = crisis("some-crisis", name="Some Crisis")
    vocab = foresight_vocabulary()
    a = compile_signature(ev.to_signature(), vocab, strict=True)
    b = compile_signature(ev.to_signature(), foresight_vocabulary(), strict=True)
    assert [e.sexpr() for e in a.expressions] == [e.sexpr() for e in b.expressions]
    text = " ".join(e.sexpr() for e in a.expressions)
    assert "(pos_amplifier RUN)" in text and "(bank_run RUN)" in text
    assert "(causes (failed_speculation BET) (bank_run RUN))" in text


def test_event_from_signature_round_trip():
    ev = crisis("some-crisis", name="Some Crisis", aliases=("The Crisis",))
    back = event_from_signature(ev.to_signature())
    assert back is not None
    assert back.hypotheses() == ev.hypotheses()
    assert {(ln.cause, ln.edge, ln.effect) for ln in back.links} == set(CRISIS_LINKS)
    assert back.name == "Some Crisis" and back.provenance == "memory"


@pytest.mark.parametrize(("change", "needle"), [
    (lambda d: d["factors"][0].update(mechanism="made_up_thing"), "factors[0].mechanism"),
    (lambda d: d["factors"][0].update(position="climax"), "unknown position"),
    (lambda d: d["links"].append(["BOOM", "causes", "GHOST"]), "not a factor"),
    (lambda d: d["links"].append(["BOOM", "explodes", "BET"]), "unknown edge type"),
    (lambda d: d["links"].append(["BET", "causes", "BOOM"]), "cycle"),
    (lambda d: d["links"].append(d["links"][0]), "twice"),
    (lambda d: d["factors"].append(dict(d["factors"][0])), "appears twice"),
    (lambda d: d.update(end="1800"), "before start"),
    (lambda d: d.update(start="soon"), "date"),
    (lambda d: d.update(domain="astrology"), "domain"),
    (lambda d: d.update(scale="galactic"), "scale"),
    (lambda d: d.update(event_id="Bad Id"), "event_id"),
    (lambda d: d.update(factors=[]), "factors"),
    (lambda d: d.update(surprise=1), "surprise"),
    (lambda d: d["factors"][0].update(text="x" * 5000), "factors.0.text"),
])
def test_bad_events_name_the_field(change, needle):
    d = _data()
    change(d)
    with pytest.raises(EventError) as ei:
        validate_event(d, source="bad.yaml")
    msg = str(ei.value)
    assert "bad.yaml" in msg
    assert needle in msg


def test_feedback_cycle_through_an_amplifier_is_allowed():
    d = _data()
    d["links"].append(["CRUNCH", "causes", "RUN"])  # RUN is an amplifier
    validate_event(d)


def test_not_a_mapping():
    with pytest.raises(EventError, match="mapping"):
        validate_event(["a", "list"], source="x.yaml")


def test_malformed_and_oversized_files(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("event_id: x\nfactors: [unclosed\n")
    with pytest.raises(ParseError) as ei:
        load_event(p)
    assert ei.value.line is not None
    big = tmp_path / "big.yaml"
    big.write_text("a: " + "x" * 2000)
    with pytest.raises(InputTooLargeError):
        load_event(big, max_bytes=1000)
    with pytest.raises(AnalogistError, match="not found"):
        load_event(tmp_path / "missing.yaml")


def test_corpus_folder_errors(tmp_path):
    with pytest.raises(EventError, match="no .yaml"):
        load_corpus(tmp_path)
    ev = make_event("child-event", [(i, p, m, t) for i, p, m, t in CRISIS], CRISIS_LINKS,
                    name="Child Event", part_of=("missing-parent",))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(ev.model_dump(mode="json",
                                                                   exclude_none=True)))
    with pytest.raises(EventError, match="missing-parent"):
        load_corpus(tmp_path)


# -- the bundled corpus ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


def test_bundled_corpus_size_and_coverage(corpus):
    assert len(corpus) >= 120
    by_domain = {d: sum(e.domain == d for e in corpus) for d in DOMAINS}
    assert all(n >= 10 for n in by_domain.values()), by_domain
    assert sum(e.cutoff is not None for e in corpus) >= 90


def test_bundled_events_are_decomposed(corpus):
    defs = mechanism_definitions()
    for e in corpus:
        assert len({f.position for f in e.factors}) >= 4, e.event_id
        assert e.source.strip(), e.event_id
        assert all(f.mechanism in defs for f in e.factors)
        linked = {x for ln in e.links for x in (ln.cause, ln.effect)}
        assert len(linked) >= len(e.factors) - 1, f"{e.event_id}: factors without links"
        if e.cutoff is not None:
            e.at_cutoff()  # at least one factor observed


def test_mechanism_classes_recur(corpus):
    """The classes are abstract: most are used by several events, in more than one domain."""
    uses: dict[str, set[str]] = {}
    domains: dict[str, set[str]] = {}
    for e in corpus:
        for f in e.factors:
            uses.setdefault(f.mechanism, set()).add(e.event_id)
            domains.setdefault(f.mechanism, set()).add(e.domain)
    recurring = [m for m, evs in uses.items() if len(evs) >= 2]
    assert len(recurring) >= 0.6 * len(uses)
    assert sum(len(d) >= 2 for d in domains.values()) >= 30


def test_every_position_is_declared():
    from analogist.foresight.event import position_definitions

    assert tuple(position_definitions()) == POSITIONS


def test_event_type_is_frozen():
    ev = crisis("some-crisis", name="Some Crisis")
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen error
        ev.name = "other"  # type: ignore[misc]
    assert isinstance(ev, Event)


def test_data_files_ship_with_the_package():
    import analogist

    root = Path(analogist.__file__).parent / "data" / "history"
    assert (root / "mechanisms.yaml").is_file()
    assert any((root / "events").glob("*.yaml"))
