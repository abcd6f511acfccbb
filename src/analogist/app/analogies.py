"""The analogies of :class:`analogist.app.Analogist`: ``find`` (MAC/FAC retrieval, the judge,
the critic and the parametric channel), ``map`` (SME and the judge on two cases, its
:class:`MapOutcome`) and the safeguard's ``check`` of a debate turn."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from analogist.app.episodes import Episodes
from analogist.app.inputs import LIMITS
from analogist.errors import AnalogistError
from analogist.signature import Signature, compile_signature

if TYPE_CHECKING:
    from analogist.judge import AnalogyReport, JudgeParams
    from analogist.retrieve import FindResult
    from analogist.safeguard import SafeguardReport, Turn
    from analogist.sme import MatchResult


@dataclass(frozen=True, slots=True)
class MapOutcome:
    """Two cases mapped with SME and judged: the judge's report and SME's match result."""

    report: AnalogyReport
    result: MatchResult

    def to_json(self) -> dict[str, Any]:
        best = self.result.best
        return {"report": self.report.to_json(), "rendered": self.report.render(),
                "mapping": None if best is None else best.to_json(),
                "mappings": len(self.result.mappings)}


class Analogies(Episodes):
    """The find, map and safeguard sections of :class:`~analogist.app.Analogist`."""

    def find(self, target: Signature | Mapping[str, Any] | int | str | None = None, *,
             text: str | None = None, namespace: str | None = None, k: int | None = None,
             critic: bool | None = None, parametric: bool | None = None,
             writer: str | None = None, defer_log: bool = False) -> FindResult:
        """Have I seen this shape before? MAC/FAC retrieval plus the judge over ``namespace``,
        with the critic and the parametric channel as :class:`Settings` (or the call) say.

        ``target`` is a Signature, its data, or a stored episode's id; ``text`` an episode text
        written by ``writer`` first. Steps skipped for want of an LLM are listed in
        ``FindResult.skipped``. ``defer_log``: the analogy-log row is returned in
        ``FindResult.log_row`` instead of written (write it with :meth:`log_find`).
        """
        if (target is None) == (text is None):
            raise AnalogistError("give exactly one of target and text", field="target")
        LIMITS.check("k", k)
        stored: int | None = None
        if text is not None:
            sig = self.encode(text, writer=writer, source="text").signature
        elif isinstance(target, (str, int)) and not isinstance(target, bool):
            # a stored episode: the retriever reads it by its row (and keeps what it derives)
            stored = self.episode_row(target, namespace=namespace, field="target")
        else:
            sig = self.signature(target, namespace=namespace, field="target")  # type: ignore[arg-type]
        s = self.settings
        notes: list[str] = []
        critic_obj = None
        if s.critic if critic is None else critic:
            cp = self.provider("critic", notes, "critic")
            if cp is not None:
                from analogist.critic import Critic  # the LLM path (prompts, schemas), on use

                critic_obj = Critic(cp)
        par_fn = None
        if s.parametric if parametric is None else parametric:
            pp = self.provider("parametric", notes, "parametric channel")
            if pp is not None:
                from analogist.parametric import propose_parametric  # the LLM path, on use

                def par_fn(t: Signature) -> Any:
                    return propose_parametric(t, pp, k=3)
        res = self.retriever(namespace).find(sig if stored is None else stored, k=k,
                                             critic=critic_obj, parametric=par_fn,
                                             defer_log=defer_log)
        if notes:
            res = replace(res, skipped=(*res.skipped, *notes))
        return res

    def log_find(self, result: FindResult, *, namespace: str | None = None) -> FindResult:
        """Write the analogy-log row a ``find(..., defer_log=True)`` returned; the result with
        its ``log_id`` (unchanged when it carries no row)."""
        if result.log_row is None:
            return result
        log_id = self.memory().log_analogy(self.namespace(namespace), **result.log_row)
        return replace(result, log_id=log_id, log_row=None)

    def map(self, source: Signature | Mapping[str, Any] | int | str,
            target: Signature | Mapping[str, Any] | int | str, *,
            namespace: str | None = None, params: JudgeParams | None = None) -> MapOutcome:
        """Map ``source`` onto ``target`` with SME and judge the best mapping (likeness /
        difference / unknown, candidate inferences and their transfer status, blockers,
        prediction)."""
        # the engine and the judge, loaded on use (`analogist add` starts without them)
        from analogist.judge import JudgeParams, judge_mapping
        from analogist.sme import match

        s = self.signature(source, namespace=namespace, field="source")
        t = self.signature(target, namespace=namespace, field="target")
        params = params or JudgeParams()
        sd, td = compile_signature(s), compile_signature(t)
        result = match(sd, td, params.sme)
        return MapOutcome(judge_mapping(s, t, sd, td, result, params=params), result)

    def check(self, turn: Turn | Mapping[str, Any] | str, *,
              mode: Literal["strict", "advisory"] | None = None) -> SafeguardReport:
        """Check the analogies of a debate turn (a :class:`~analogist.safeguard.Turn` or its
        data: ``{arguments, historical_wisdom}``) or of plain text (seed 003)."""
        sg = self.safeguard()
        if isinstance(turn, Mapping):
            from analogist.safeguard import parse_turn  # spaCy and the lexicons, on use

            turn = parse_turn(dict(turn), source="turn")
        return sg.check(turn, mode=mode)
