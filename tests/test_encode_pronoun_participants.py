"""Ordinary text whose participants are pronouns always encodes (hand-written sentences): the
speaker or the addressee ("I", "you"), an indefinite "something" / "someone", a "he" / "she"
the story never names, a text of commands alone, and a text naming no participant at all each
give a valid signature, and a batch of such texts stores; only empty, binary, oversized or
letterless input is refused, with the file named."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from analogist.cli import app
from analogist.encode.base import MAX_EPISODE_CHARS
from analogist.encode.deterministic import DeterministicEncoder
from analogist.errors import AnalogistError
from analogist.signature import compile_signature


@pytest.fixture(scope="module")
def enc() -> DeterministicEncoder:
    return DeterministicEncoder(embedder=None)


def _roles(enc: DeterministicEncoder, text: str) -> set[str]:
    sig = enc.encode(text, source="story.txt").signature
    compile_signature(sig)
    return set(sig.roles.values())


def _pairs(enc: DeterministicEncoder, text: str) -> set[tuple[str, str]]:
    return {(t.subject, t.object) for t in enc.triples(text)}


# -- each way a story can name its participants by pronouns only --------------------------------
def test_the_speaker_and_an_indefinite_thing_are_participants(enc: DeterministicEncoder) -> None:
    text = "I tried to say how strange something felt, but in the end could only be silent."
    assert {"I", "something"} <= _roles(enc, text)


def test_an_unnamed_he_or_she_is_a_participant(enc: DeterministicEncoder) -> None:
    text = ("She was so tired, she believed she would faint. She simply could not keep herself "
            "awake any longer.")
    roles = _roles(enc, text)
    assert "she" in roles and not roles & {"her", "herself"}


def test_the_addressee_and_what_they_lost(enc: DeterministicEncoder) -> None:
    text = "You dropped something and are anxiously looking for it. Keep looking until it turns up."
    assert {"you", "something"} <= _roles(enc, text)
    # "it" stands for the something, not for the addressee
    assert ("you", "something") in _pairs(enc, text)
    assert ("you", "you") not in _pairs(enc, text)


def test_commands_alone_have_the_addressee_as_subject(enc: DeterministicEncoder) -> None:
    assert _roles(enc, "Never stop trying. Keep going.") == {"you"}
    assert "you" in _roles(enc, "Peel the apples and slice them thinly.")


def test_a_command_beside_statements_has_the_addressee_as_subject(enc) -> None:
    # the car is a participant of the second sentence; the packing is still the addressee's
    text = "Pack the tent into the boot. The car waits outside."
    assert ("you", "tent") in _pairs(enc, text)
    res = enc.encode(text, source="story.txt")
    assert "you" in res.signature.roles.values()
    # a clause with its own subject, or one that inherits one, gets no addressee
    assert all(s != "you" for s, _o in _pairs(enc, "The clerk stamped the form and filed it."))


@pytest.mark.parametrize("text", ["Oh, how lovely!", "Because.", "Not now, maybe later.",
                                  "To go or to stay?"])
def test_a_text_naming_no_participant_still_encodes(enc: DeterministicEncoder,
                                                    text: str) -> None:
    res = enc.encode(text, source="story.txt")
    assert len(res.signature.roles) == 1 and not res.signature.relations
    assert any("found no participant" in n for n in res.notes)


# -- a pronoun participant is stood for only by an agreeing pronoun -------------------------------
def test_it_never_stands_for_the_speaker(enc: DeterministicEncoder) -> None:
    assert ("I", "kettle") in _pairs(enc, "The kettle whistled. I lifted it.")


def test_he_finds_a_named_person_past_the_speaker(enc: DeterministicEncoder) -> None:
    pairs = _pairs(enc, "The ferryman greeted the harbour master. I waved. He smiled at me.")
    assert ("ferryman", "I") in pairs


def test_an_unnamed_he_stays_himself_past_a_thing(enc: DeterministicEncoder) -> None:
    # the later "He" is the person of the first sentence, not the bus named between
    walkers = {t.subject for t in enc.triples(
        "He hurried to the stop. The bus was full. He walked home.") if t.verb == "walk"}
    assert walkers == {"he"}


def test_a_named_story_keeps_its_roles(enc: DeterministicEncoder) -> None:
    # no pronoun participant where every pronoun has an antecedent
    text = "The baker burned the bread because he left it in the oven too long."
    roles = _roles(enc, text)
    assert {"baker", "bread"} <= roles and not roles & {"he", "it"}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(who=st.sampled_from(["I", "You", "He", "She", "We", "They", "Someone"]),
       verb=st.sampled_from(["lost", "wanted", "feared", "was", "could not find", "kept"]),
       what=st.sampled_from(["something", "it", "everything", "so scared", "them", "himself"]),
       tail=st.sampled_from(["", " Don't give up.", " It never came back.", " Never again!"]))
def test_pronoun_stories_are_never_refused(enc: DeterministicEncoder, who: str, verb: str,
                                           what: str, tail: str) -> None:
    sig = enc.encode(f"{who} {verb} {what}.{tail}", source="gen").signature
    compile_signature(sig)
    for _f, atom in sig.atoms():
        assert set(atom.args) <= set(sig.roles)


# -- bad input is still refused one by one, with the file named -----------------------------------
@pytest.mark.parametrize("text, what", [
    ("", "empty"), ("?!  ...  !!", "no letters"),
    ("\x00\x01\x02binary\x03\x04" * 10, "binary"),
    ("I waited. " * (MAX_EPISODE_CHARS // 10 + 1), "over the limit"),
])
def test_bad_input_is_refused_with_the_file_named(enc: DeterministicEncoder, text: str,
                                                  what: str) -> None:
    with pytest.raises(AnalogistError) as ei:
        enc.encode(text, source="story.txt")
    assert "story.txt" in str(ei.value) and what in str(ei.value)


def test_a_batch_of_pronoun_stories_stores(no_llm: None, tmp_path: Path) -> None:
    texts = ["I wanted to explain how odd something seemed, but could only stare.",
             "He was so frightened, he thought he would fall. He could not calm himself.",
             "You misplaced something and are searching for it. Don't stop until it is found.",
             "Never stop trying. Keep going.",
             "Oh, how lovely!"]
    files = []
    for i, t in enumerate(texts):
        f = tmp_path / f"s{i}.txt"
        f.write_text(t, encoding="utf-8")
        files.append(str(f))
    store = tmp_path / "s.db"
    r = CliRunner().invoke(app, ["add", "--from-text", *files, "--store", str(store),
                                 "--no-embed"])
    assert r.exit_code == 0, r.output
    with sqlite3.connect(store) as con:
        assert con.execute("select count(*) from signatures").fetchone()[0] == len(texts)


# -- L1 is the same in every process -------------------------------------------------------------
_L1_SCRIPT = """
import warnings
warnings.simplefilter("ignore")
from analogist.encode.deterministic import DeterministicEncoder
text = ("The moss, growing on the rocks, soaks up the rain and uses it to feed the ferns "
        "and the beetles.")
print(DeterministicEncoder(embedder=None).encode(text).signature.levels.L1)
"""


def test_l1_tags_a_pronoun_read_twice_alike_in_every_process() -> None:
    # "uses *it* to feed": the pronoun is read by its own verb (the rain) and again as the
    # infinitive's subject; L1 takes its own verb's reading whatever the process's hash seed
    outs = set()
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        r = subprocess.run([sys.executable, "-c", _L1_SCRIPT], env=env, capture_output=True,
                           text=True, check=True)
        outs.add(r.stdout.strip())
    assert len(outs) == 1
