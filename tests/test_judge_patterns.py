"""The judge matches role names as whole words without compiling a pattern per role map: the
text a fix projects to, and the roles found in a fix, are those the compiled patterns give."""

from __future__ import annotations

import random
import re

from analogist.judge import _has_word, _project_text

NAMES = ["A", "AB", "A-B", "B", "B_2", "SOURCE", "SOURCE_COPY", "COPY", "X-1", "x", "A-", "B-B-",
         "Copy", "Z9"]
WORDS = ["the", "A", "AB", "A-B", "B", "B_2", "SOURCE", "SOURCE_COPY", "COPY", "X-1", "x",
         "SOURCES", "-", ",", "(", ")", "A-B-C", "copy", "B_22", "ZA", "éA", "Aé", "9A", "A9",
         "_A", "A_", "A-", "B-B-", "B-B-B", "Z9", "Z", "\n", "'", "A's"]


def _fresh_projection(text: str, role_map: dict[str, str]) -> str:
    if not role_map:
        return text
    pattern = re.compile(r"\b(" + "|".join(re.escape(r) for r in
                                           sorted(role_map, key=len, reverse=True)) + r")\b")
    return pattern.sub(lambda m: role_map[m.group(1)], text)


def test_projection_and_fix_roles_match_a_freshly_compiled_pattern() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        names = rng.sample(NAMES, rng.randint(0, len(NAMES)))
        role_map = {n: rng.choice(["T1", "T-2", "TARGET", "A"]) for n in names}
        text = rng.choice(["", " "]).join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))
        assert _project_text(text, role_map) == _fresh_projection(text, role_map)
        for n in names:
            assert _has_word(text, n) == \
                bool(re.search(rf"\b{re.escape(n)}\b", text))


def test_the_longest_name_is_tried_first() -> None:
    # the longest name first: "A-B" is replaced whole, not as "A" then "-B"
    assert _project_text("fix A-B now", {"A": "P", "A-B": "Q"}) == "fix Q now"
    assert _project_text("fix A now", {"A-B": "Q", "A": "P"}) == "fix P now"
