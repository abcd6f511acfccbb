"""The two reliability checks of the abstraction levels (seed 000 §9), for either encoder.

* **Faithfulness** — given only an episode's L2, can a separate judge pick the original episode out
  of itself and five distractors (drawn, seeded, from the other items)? A good abstraction
  *passes*: the rate is well above chance.
* **De-surfacing** — given only the L2, can the judge guess the episode's domain? A good
  abstraction *fails* this: the rate stays near chance (``1 / len(domains)``), because the
  surface has been abstracted away.

Both are cheap and meant to run on a sample during consolidation. Two judges implement them:

* :class:`EmbeddingJudge` — deterministic, offline: cosine similarity between the L2 and each
  candidate text (faithfulness), or between the L2 and each domain's name plus an optional
  few-word description (de-surfacing); the highest wins (ties: the first).
* :class:`LLMJudge` — one structured call per item (schemas ``check_faithfulness`` /
  ``check_desurface``); with no provider every check reports ``skipped`` =
  :data:`~analogist.llm.base.NO_LLM_REASON`.

A :class:`CheckResult` has the rate, ``n``, the chance rate, a seeded percentile-bootstrap 95%
interval, one record per item, the judge's name and the skip reason. Same items, judge and seed →
the same result.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from analogist.errors import AnalogistError
from analogist.llm.base import NO_LLM_REASON, LLMProvider, LLMResult, Message, Usage
from analogist.llm.prompts import load_prompt, wrap_data
from analogist.llm.schemas import check_desurface_schema, check_faithfulness_schema
from analogist.stats import N_BOOT, bootstrap_ci

__all__ = ["CheckResult", "Chooser", "EmbeddingJudge", "Guesser", "LLMJudge", "bootstrap_ci",
           "de_surfacing", "faithfulness"]

N_DISTRACTORS = 5


class Chooser(Protocol):
    """Picks, from ``candidates``, the index of the text ``abstract`` was written from."""

    name: str
    skipped: str | None

    def choose(self, abstract: str, candidates: Sequence[str]) -> int: ...


class Guesser(Protocol):
    """Guesses the index of the domain ``abstract`` came from."""

    name: str
    skipped: str | None

    def guess(self, abstract: str, domains: Sequence[str],
              descriptions: Sequence[str]) -> int: ...


@dataclass
class CheckResult:
    """One reliability check's outcome (see the module docstring).

    ``good`` — for faithfulness: the interval's lower end is above chance; for de-surfacing: it
    is not (the judge cannot tell the domain better than chance). None when skipped.
    """

    check: str
    judge: str
    rate: float | None
    n: int
    chance: float | None
    ci: tuple[float, float] | None
    items: list[dict[str, Any]] = field(default_factory=list)
    skipped: str | None = None
    seed: int = 0
    usage: dict[str, Any] | None = None

    @property
    def good(self) -> bool | None:
        if self.skipped is not None or self.ci is None or self.chance is None:
            return None
        above = self.ci[0] > self.chance
        return above if self.check == "faithfulness" else not above

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "judge": self.judge, "rate": self.rate, "n": self.n,
                "chance": self.chance, "ci": list(self.ci) if self.ci else None,
                "good": self.good, "skipped": self.skipped, "seed": self.seed,
                "usage": self.usage, "items": [dict(x) for x in self.items]}


def _text(x: Any, where: str) -> str:
    if not isinstance(x, str) or not x.strip():
        raise AnalogistError("expected a non-empty string", field=where)
    return x


def _usage(judge: Any) -> dict[str, Any] | None:
    f = getattr(judge, "usage", None)
    return f() if callable(f) else None


def faithfulness(items: Sequence[tuple[str, str]], *, chooser: Chooser,
                 n_distractors: int = N_DISTRACTORS, seed: int = 0,
                 n_boot: int = N_BOOT) -> CheckResult:
    """Faithfulness of L2: ``items`` are ``(episode_text, L2)`` pairs; for each, the chooser sees
    only its L2 and picks among its text and ``n_distractors`` texts of other items (fewer when
    there are fewer items), shuffled with a seed derived from ``seed`` and the item index."""
    name = getattr(chooser, "name", type(chooser).__name__)
    if getattr(chooser, "skipped", None):
        return CheckResult("faithfulness", name, None, 0, None, None,
                           skipped=chooser.skipped, seed=seed)
    items = list(items)
    if len(items) < 2:
        raise AnalogistError(f"faithfulness needs at least 2 items (distractors come from the "
                             f"other items), got {len(items)}", field="items")
    texts = [_text(t, f"items[{i}][0]") for i, (t, _a) in enumerate(items)]
    abstracts = [_text(a, f"items[{i}][1]") for i, (_t, a) in enumerate(items)]
    records: list[dict[str, Any]] = []
    for i in range(len(items)):
        rng = random.Random(seed * 1_000_003 + i)
        others = [j for j in range(len(items)) if j != i]
        cand = [i, *rng.sample(others, min(n_distractors, len(others)))]
        rng.shuffle(cand)
        pick = chooser.choose(abstracts[i], [texts[j] for j in cand])
        valid = isinstance(pick, int) and not isinstance(pick, bool) and 0 <= pick < len(cand)
        chosen = cand[pick] if valid else None
        records.append({"item": i, "candidates": cand, "chosen": chosen,
                        "correct": chosen == i, "chance": 1.0 / len(cand)})
    correct = [r["correct"] for r in records]
    return CheckResult(
        "faithfulness", name, round(float(np.mean(correct)), 6), len(records),
        round(float(np.mean([r["chance"] for r in records])), 6),
        bootstrap_ci(correct, seed=seed, n_boot=n_boot), records, seed=seed,
        usage=_usage(chooser))


def de_surfacing(items: Sequence[tuple[str, str]], *, guesser: Guesser,
                 domains: Sequence[str] | Mapping[str, str], seed: int = 0,
                 n_boot: int = N_BOOT) -> CheckResult:
    """De-surfacing of L2: ``items`` are ``(L2, true_domain)`` pairs; the guesser sees only the
    L2 and picks one of ``domains`` (names, or a mapping name → few-word description)."""
    name = getattr(guesser, "name", type(guesser).__name__)
    if getattr(guesser, "skipped", None):
        return CheckResult("de_surfacing", name, None, 0, None, None,
                           skipped=guesser.skipped, seed=seed)
    if isinstance(domains, Mapping):
        names = list(domains)
        descs = [str(domains[d] or "") for d in names]
    else:
        names = list(domains)
        descs = [""] * len(names)
    if len(names) < 2 or len(set(names)) != len(names):
        raise AnalogistError("de-surfacing needs at least 2 distinct domains", field="domains")
    items = list(items)
    if not items:
        raise AnalogistError("de-surfacing needs at least 1 item", field="items")
    records: list[dict[str, Any]] = []
    for i, (abstract, true) in enumerate(items):
        _text(abstract, f"items[{i}][0]")
        if true not in names:
            raise AnalogistError(f"true domain {true!r} is not among the domains",
                                 field=f"items[{i}][1]")
        pick = guesser.guess(abstract, names, descs)
        valid = isinstance(pick, int) and not isinstance(pick, bool) and 0 <= pick < len(names)
        guessed = names[pick] if valid else None
        records.append({"item": i, "domain": true, "guessed": guessed,
                        "correct": guessed == true})
    correct = [r["correct"] for r in records]
    return CheckResult(
        "de_surfacing", name, round(float(np.mean(correct)), 6), len(records),
        round(1.0 / len(names), 6), bootstrap_ci(correct, seed=seed, n_boot=n_boot), records,
        seed=seed, usage=_usage(guesser))


class EmbeddingJudge:
    """Deterministic judge: cosine between the abstract and each candidate (or domain text)."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.name = f"embedding:{getattr(embedder, 'name', type(embedder).__name__)}"
        self.skipped: str | None = None
        self._cache: dict[str, np.ndarray] = {}

    def _vecs(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            for t, v in zip(todo, self.embedder.embed(list(todo)), strict=True):
                self._cache[t] = np.asarray(v, dtype=np.float64)
        return np.stack([self._cache[t] for t in texts])

    def _best(self, abstract: str, options: Sequence[str]) -> int:
        m = self._vecs([abstract, *options])
        scores = m[1:] @ m[0]
        return int(np.argmax(scores))

    def choose(self, abstract: str, candidates: Sequence[str]) -> int:
        return self._best(abstract, candidates)

    def guess(self, abstract: str, domains: Sequence[str], descriptions: Sequence[str]) -> int:
        opts = [f"{d}: {s}" if s else d for d, s in zip(domains, descriptions, strict=True)]
        return self._best(abstract, opts)


class LLMJudge:
    """One structured LLM call per item; ``skipped`` = :data:`NO_LLM_REASON` without a
    provider. Use a different model from the writer's when possible (a separate judge)."""

    def __init__(self, provider: LLMProvider | None, *, prompt_version: str = "v1",
                 temperature: float | None = 0.0, max_tokens: int | None = None) -> None:
        self.provider = provider
        self.skipped: str | None = NO_LLM_REASON if provider is None else None
        self.name = "llm" if provider is None else f"llm:{provider.model}"
        self.prompt_version = prompt_version
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.results: list[LLMResult] = []

    def usage(self) -> dict[str, Any]:
        u = Usage()
        for r in self.results:
            u.add(r)
        return u.to_json()

    def _call(self, name: str, user: str, schema: dict[str, Any]) -> dict[str, Any]:
        if self.provider is None:
            raise AnalogistError(NO_LLM_REASON)
        msgs: list[Message] = [
            {"role": "system", "content": load_prompt(name, self.prompt_version).render()},
            {"role": "user", "content": user}]
        r = self.provider.complete_json(msgs, schema, schema_name=name,
                                        temperature=self.temperature, max_tokens=self.max_tokens)
        self.results.append(r)
        return r.data

    def choose(self, abstract: str, candidates: Sequence[str]) -> int:
        user = ("Which candidate episode is the abstract below written from? Answer with its "
                "number.\n\n" + wrap_data("abstract", abstract) + "\n\n"
                + "\n\n".join(wrap_data("candidate", c, n=k + 1)
                              for k, c in enumerate(candidates)))
        d = self._call("check_faithfulness", user, check_faithfulness_schema(len(candidates)))
        choice = d.get("choice")
        return choice - 1 if isinstance(choice, int) and not isinstance(choice, bool) else -1

    def guess(self, abstract: str, domains: Sequence[str], descriptions: Sequence[str]) -> int:
        listing = "\n".join(f"- {d}" + (f": {s}" if s else "")
                            for d, s in zip(domains, descriptions, strict=True))
        user = ("Which domain is the abstract below from?\n\n" + wrap_data("abstract", abstract)
                + "\n\nDomains:\n" + listing)
        d = self._call("check_desurface", user, check_desurface_schema(domains))
        dom = d.get("domain")
        return list(domains).index(dom) if dom in domains else -1
