"""The second cross-domain narrative set (benchmarks/narratives/cross_domain_v2.yaml) is
well-formed: its counts, fields, pairs and decoys are what the benchmark relies on."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

SET = Path(__file__).resolve().parent.parent / "benchmarks" / "narratives" / "cross_domain_v2.yaml"
OTHER_SETS = [SET.parent / "cross_domain.yaml", SET.parent / "held_out.yaml"]
FIELDS = ("id", "mechanism", "domain", "surface_mechanism", "text", "minimal", "edit",
          "surface")


def _sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.!?])\s+", text.strip())


@pytest.fixture(scope="module")
def stories() -> list[dict]:
    return yaml.safe_load(SET.read_text(encoding="utf-8"))["stories"]


def test_counts(stories: list[dict]) -> None:
    assert len(stories) >= 32
    assert len({s["mechanism"] for s in stories}) >= 16
    assert len({s["domain"] for s in stories}) >= 16
    assert len({s["id"] for s in stories}) == len(stories)


def test_every_story_has_every_field(stories: list[dict]) -> None:
    for s in stories:
        for f in FIELDS:
            assert isinstance(s.get(f), str) and s[f].strip(), f"{s.get('id')}: {f}"


def test_pairs_share_mechanism_and_differ_in_domain(stories: list[dict]) -> None:
    by_mech: dict[str, list[dict]] = defaultdict(list)
    for s in stories:
        by_mech[s["mechanism"]].append(s)
    for mech, told in by_mech.items():
        assert len(told) == 2, mech
        assert told[0]["domain"] != told[1]["domain"], mech


def test_decoys_tell_another_mechanism_of_the_set(stories: list[dict]) -> None:
    mechanisms = {s["mechanism"] for s in stories}
    for s in stories:
        assert s["surface_mechanism"] != s["mechanism"], s["id"]
        assert s["surface_mechanism"] in mechanisms, s["id"]


def test_story_shape(stories: list[dict]) -> None:
    for s in stories:
        for key in ("text", "minimal", "surface"):
            assert 3 <= len(_sentences(s[key])) <= 6, f"{s['id']}: {key}"
        assert s["minimal"] != s["text"], s["id"]
        assert "->" in s["edit"], s["id"]


def test_no_text_duplicated(stories: list[dict]) -> None:
    texts = [" ".join(s[k].split()) for s in stories for k in ("text", "minimal", "surface")]
    assert len(set(texts)) == len(texts)


def test_domains_new_to_this_set(stories: list[dict]) -> None:
    used = set()
    for path in OTHER_SETS:
        used |= {s["domain"] for s in yaml.safe_load(path.read_text(encoding="utf-8"))["stories"]}
    assert not used & {s["domain"] for s in stories}
