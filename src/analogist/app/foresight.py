"""Foresight through :class:`analogist.app.Analogist` (Algorithm 1 of seed 001): the events of a
namespace, resolving a target, the parameters within :data:`~analogist.app.LIMITS`, the
candidate pool, the run and its brief."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analogist.app.components import Components
from analogist.app.inputs import LIMITS
from analogist.errors import AnalogistError

if TYPE_CHECKING:
    from analogist.foresight.event import Corpus, Event
    from analogist.foresight.loop import ForesightParams, ForesightResult


class ForesightOps(Components):
    """The foresight section of :class:`~analogist.app.Analogist`."""

    def namespace_events(self, namespace: str | None = None) -> list[Event]:
        """The foresight Events stored (as kind-``event`` episodes) in ``namespace``."""
        from analogist.foresight.event import event_from_signature  # foresight, on use

        out = []
        for row in self.memory().list(self.namespace(namespace)):
            ev = event_from_signature(row.signature)
            if ev is not None:
                out.append(ev)
        return out

    def resolve_event(self, target: Event | Mapping[str, Any] | str, *,
                      corpus: Corpus | None = None, namespace: str | None = None,
                      use_store: bool = True, files_too: bool = False) -> Event:
        """An Event from an object, or the id, name or alias of a corpus event or of an event
        episode of ``namespace`` (a single close match of the corpus is taken)."""
        from analogist.foresight.event import Event, validate_event  # foresight, on use

        if isinstance(target, Event):
            return target
        if isinstance(target, Mapping):
            return validate_event(dict(target), source="target")
        if not isinstance(target, str) or not target.strip():
            raise AnalogistError("expected an Event object or an event id", field="target")
        corpus = corpus or self.corpus()
        ev = corpus.lookup(target)
        if ev is None and use_store:
            ev = next((e for e in self.namespace_events(namespace) if e.event_id == target),
                      None)
        if ev is not None:
            return ev
        close = corpus.search(target)
        if len(close) == 1:
            return close[0]
        hint = (" — did you mean " + ", ".join(f"{e.event_id} ({e.name})" for e in close) + "?"
                if close else " (see 'analogist foresight events')")
        what = ("an event file nor the id, name or alias of an event in the corpus" if files_too
                else "an event of the corpus (its id, name or alias)")
        where = " nor an event episode of the namespace" if use_store else ""
        raise AnalogistError(f"{target!r} is neither {what}{where}{hint}",
                             field="target")

    def foresight_params(self, *, rounds: int | None = None, per_round: int | None = None,
                         carryover: int | None = None, calibration: str = "bundled",
                         pi: float | None = None, q: float | None = None, p: float | None = None,
                         delta: float = 0.05, min_fidelity: float = 0.05) -> ForesightParams:
        """Algorithm 1's settings within :data:`LIMITS`: the bundled calibration unless π, q or
        p is given or ``calibration`` says otherwise (``none`` or a calibration JSON file)."""
        # foresight, loaded on use
        from analogist.foresight.calibration import bundled_calibration, load_calibration
        from analogist.foresight.confirm import ConfirmParams
        from analogist.foresight.loop import ForesightParams

        s = self.settings
        rounds = LIMITS.check("rounds", rounds) if rounds is not None else s.foresight_rounds
        per_round = (LIMITS.check("per_round", per_round) if per_round is not None
                     else s.foresight_per_round)
        carryover = (LIMITS.check("carryover", carryover) if carryover is not None
                     else s.foresight_carryover)
        homogeneous = any(x is not None for x in (pi, q, p))
        if homogeneous and calibration not in ("bundled", "none"):
            raise AnalogistError("give either --calibration FILE or --pi/--q/--p, not both",
                                 field="calibration")
        cal = None
        if not homogeneous and calibration == "bundled":
            cal = bundled_calibration("cana")
        elif not homogeneous and calibration != "none":
            cal = load_calibration(Path(calibration), "cana")
        confirm = ConfirmParams(pi=0.5 if pi is None else pi, q=0.9 if q is None else q,
                                p=0.2 if p is None else p, delta=delta)
        return ForesightParams(rounds=rounds, per_round=per_round, carryover=carryover,
                               min_fidelity=min_fidelity, confirm=confirm, calibration=cal)

    def foresight_pool(self, target: Event, *, corpus: Corpus | None = None,
                       namespace: str | None = None, use_store: bool = True) -> list[Event]:
        """The candidates: the corpus's events and ``namespace``'s event episodes (when
        ``use_store``), the target left out, each event id once."""
        corpus = corpus or self.corpus()
        pool = [e for e in corpus.events if e.event_id != target.event_id]
        if use_store:
            seen = {e.event_id for e in pool} | {target.event_id}
            for ev in self.namespace_events(namespace):
                if ev.event_id not in seen:
                    pool.append(ev)
                    seen.add(ev.event_id)
        return pool

    def foresight(self, target: Event | Mapping[str, Any] | str, *, cutoff: str | None = None,
                  namespace: str | None = None, params: ForesightParams | None = None,
                  rounds: int | None = None, per_round: int | None = None,
                  carryover: int | None = None, corpus: Corpus | None = None,
                  use_store: bool = True, embedding: bool | None = None,
                  llm: bool | None = None,
                  progress: Callable[[int, int], None] | None = None
                  ) -> tuple[ForesightResult, int]:
        """Foresight for ``target`` (Algorithm 1 of seed 001): historical analogies by
        mechanism from ``corpus`` (default: the bundled one) and the namespace's event
        episodes, hidden factors confirmed across independent analogies. The LLM's own
        candidates are asked for when ``llm`` (default: :attr:`Settings.llm`) and one is
        configured. Returns the result and the size of the pool."""
        from analogist.foresight.loop import run_foresight  # foresight, loaded on use

        corpus = corpus or self.corpus()
        ev = self.resolve_event(target, corpus=corpus, namespace=namespace, use_store=use_store)
        if params is None:
            params = self.foresight_params(rounds=rounds, per_round=per_round,
                                           carryover=carryover)
        pool = self.foresight_pool(ev, corpus=corpus, namespace=namespace, use_store=use_store)
        notes: list[str] = []
        gen = None
        if self.settings.llm if llm is None else llm:
            prov = self.provider("parametric", notes, "parametric candidates")
            if prov is not None:
                from analogist.foresight.llm import ParametricGenerator  # the LLM path

                gen = ParametricGenerator(prov, corpus=corpus)
        else:
            notes.append("parametric candidates: the LLM is off")
        use_emb = self.settings.embeddings if embedding is None else embedding
        res = run_foresight(ev.at_cutoff(cutoff), pool, params=params, corpus=corpus,
                            generate=gen, progress=progress,
                            embedder=self.embedder() if use_emb else None,
                            vectors=self._vectors if corpus is self._corpus else None)
        if notes:
            res = replace(res, skipped=(*res.skipped, *notes))
        return res, len(pool)

    def brief(self, target: Event | Mapping[str, Any] | str, **kw: Any) -> dict[str, Any]:
        """:meth:`foresight`'s Structural Analogy Brief as JSON-able data (``skipped``
        included)."""
        from analogist.foresight.brief import brief_data  # foresight, loaded on use

        res, n = self.foresight(target, **kw)
        return {"pool_size": n, **brief_data(res), "skipped": list(res.skipped)}
