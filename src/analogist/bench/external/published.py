"""Published human and language-model figures to print beside our scores.

Only figures we could trace to the paper are listed, each with its source; every other cell of
the report says "not reported" (issue 15: never invent a number). A figure is the accuracy of
the authors' own protocol, which is not ours (they prompt a model; we score texts offline), so
it is an anchor for the reader, not a paired comparison.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Anchor:
    """One published figure: who (``humans`` or a model), the value, and where it is from."""

    who: str
    kind: str            # "human" or "llm"
    value: float
    source: str


_STORYANALOGY = ("Jiayang et al., StoryAnalogy, EMNLP 2023 — multiple-choice results (figures "
                 "as given in the project's issue 15; the table number was not checked here; "
                 "the paper's abstract: ChatGPT about 30%, humans over 85%)")

#: (set, variant, cell) → anchors; cell "all" is the whole set.
PUBLISHED: dict[tuple[str, str | None, str], tuple[Anchor, ...]] = {
    ("storyanalogy", None, "all"): (
        Anchor("humans", "human", 0.857, _STORYANALOGY),
        Anchor("FlanT5-xxl", "llm", 0.450, _STORYANALOGY),
        Anchor("ChatGPT", "llm", 0.358, _STORYANALOGY),
    ),
}

NOT_REPORTED = "not reported"


def anchors(name: str, variant: str | None, cell: str) -> tuple[Anchor, ...]:
    """The published figures for one set, variant and cell (empty: not reported)."""
    return PUBLISHED.get((name, variant, cell), ())


def render(found: tuple[Anchor, ...], kind: str) -> str:
    """``"ChatGPT 35.8%; FlanT5-xxl 45.0%"`` for ``kind`` (``human``/``llm``), or "not
    reported"."""
    got = [a for a in found if a.kind == kind]
    if not got:
        return NOT_REPORTED
    return "; ".join(f"{a.who} {100 * a.value:.1f}%" for a in got)
