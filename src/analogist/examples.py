"""Bundled classic examples: the reference SME's own test descriptions.

The files under ``analogist/data/sme4/`` come from the reference Structure-Mapping Engine (SME v4,
Northwestern University's Qualitative Reasoning Group; BSD licence, see ``LICENSE`` beside them):
the simple water-flow / heat-flow analogy and the solar-system / Rutherford-atom analogy, with the
``sys2lang.vcb`` vocabulary they are written in.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable

from analogist.description import Description
from analogist.errors import AnalogistError
from analogist.sme.formats import read_dgr_text, read_vcb_text
from analogist.vocabulary import Vocabulary

_DATA = ("data", "sme4")
SME_VOCABULARY_FILE = "sys2lang.vcb"


@dataclass(frozen=True, slots=True)
class Example:
    """One bundled base/target pair."""

    name: str
    base_file: str
    target_file: str
    title: str


EXAMPLES: dict[str, Example] = {
    "heat-water": Example("heat-water", "swater.dgr", "sheat.dgr",
                          "Simple heat/water analogy (water flow → heat flow)"),
    "solar-atom": Example("solar-atom", "solar.dgr", "ruther.dgr",
                          "Rutherford analogy (solar system → atom)"),
}


def data_file(name: str) -> Traversable:
    """The bundled file ``data/sme4/<name>``."""
    return resources.files("analogist").joinpath(*_DATA, name)


def default_sme_vocabulary() -> Vocabulary:
    """The bundled ``sys2lang.vcb`` vocabulary the classic examples are written in."""
    f = data_file(SME_VOCABULARY_FILE)
    return read_vcb_text(f.read_text(encoding="utf-8"), source=SME_VOCABULARY_FILE)


def load_example_file(name: str, vocabulary: Vocabulary | None = None) -> Description:
    """Read one bundled ``.dgr`` file (e.g. ``"swater.dgr"``) against ``vocabulary``."""
    f = data_file(name)
    if not f.is_file():
        raise AnalogistError(f"no bundled description file {name!r}")
    vocab = vocabulary if vocabulary is not None else default_sme_vocabulary()
    return read_dgr_text(f.read_text(encoding="utf-8"), vocab, source=name)[0]


def load_example(name: str) -> tuple[Description, Description]:
    """The (base, target) descriptions of the bundled example ``name``."""
    ex = EXAMPLES.get(name)
    if ex is None:
        raise AnalogistError(
            f"unknown example {name!r}; expected one of {', '.join(EXAMPLES)}")
    vocab = default_sme_vocabulary()
    return load_example_file(ex.base_file, vocab), load_example_file(ex.target_file, vocab)
