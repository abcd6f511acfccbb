"""A causal edge's sign follows the direction of its ends: a decrease at one end flips it."""

from analogist.encode.deterministic import DeterministicEncoder


def _signs(text: str) -> dict[tuple[str, str, str], int]:
    sig = DeterministicEncoder().encode(text).signature.to_data()
    return {(e["cause"].split("(")[0], e["edge"], e["effect"].split("(")[0]): int(e["sign"])
            for e in sig["causal_chain"]}


def test_decrease_at_the_effect_flips_the_edge_sign():
    up = _signs("In the tank the yeast gives off heat as it works. "
                "The warmer beer makes the yeast work faster.")
    down = _signs("In the tank the yeast gives off heat as it works. "
                  "The warmer beer makes the yeast work slower.")
    shared = set(up) & set(down)
    assert shared
    flipped = [k for k in shared if up[k] == -down[k]]
    assert flipped
    assert all(up[k] == 1 for k in flipped)


def test_no_decrease_word_keeps_positive_signs():
    signs = _signs("The warmer beer makes the yeast work faster.")
    assert signs
    assert all(s == 1 for s in signs.values())
