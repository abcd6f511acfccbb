"""The decoy probe of a small namespace keeps the surfaces it read across appends (only the rows
appended since are read): a long-lived retriever answers as a fresh one after adds, a
supersession and a delete."""

from __future__ import annotations

from analogist.app import Analogist, Settings
from analogist.casebook import load_casebook
from analogist.retrieve import Retriever


def _answer(r: Retriever, target) -> dict:
    out = r.find(target, k=5).to_json()
    return {k: v for k, v in out.items() if k not in ("timings_ms", "log_id")}


def _copy(data: dict, eid: str, entities: list[str]) -> dict:
    return dict(data, episode_id=eid, surface=dict(data["surface"], entities=entities))


def test_a_long_lived_probe_answers_as_a_fresh_one_after_writes(tmp_path) -> None:
    sigs = [e.signature.to_data() for e in load_casebook() if not e.is_decoy][:12]
    app = Analogist(Settings.from_env(store=str(tmp_path / "s.db"), embeddings=False,
                                      log_finds=False, llm=False))
    app.add_many(sigs[:6], namespace="p")
    live = Retriever(app.memory(), "p", embedder=None, log=False)
    targets = [sigs[0], sigs[7], _copy(sigs[3], "q", ["kiln", "glaze", "the dashboard"])]

    def same() -> None:
        fresh = Retriever(app.memory(), "p", embedder=None, log=False)
        for t in targets:
            assert _answer(live, t) == _answer(fresh, t)

    same()
    # appended rows, one of them sharing the inline target's surface words
    app.add_many([*sigs[6:10], _copy(sigs[5], "look-alike", ["kiln", "glaze", "dashboard"])],
                 namespace="p")
    same()
    assert live.find(targets[2]).decoy is not None
    app.memory().supersede(sigs[1]["episode_id"], "look-alike", "p")
    same()
    app.add_many(sigs[10:], namespace="p")
    same()
    app.memory().delete("look-alike", "p")          # a rewrite: every surface read again
    same()
    app.close()
