"""Episodes through :class:`analogist.app.Analogist`: signatures from objects, texts and stored
episodes, and the memory's add, list, read, delete, outcome recording and bulk add."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from analogist.app.components import Components
from analogist.errors import AnalogistError
from analogist.memory.sqlite import StoredEpisode
from analogist.signature import Signature, validate_signature

if TYPE_CHECKING:
    from analogist.encode.base import EncodeResult
    from analogist.foresight.event import Event


class Episodes(Components):
    """The signatures and memory sections of :class:`~analogist.app.Analogist`."""

    def signature(self, value: Signature | Mapping[str, Any] | int | str, *,
                  namespace: str | None = None, field: str = "signature") -> Signature:
        """A Signature from an object, or from a stored episode (row id or episode id) of
        ``namespace``."""
        if isinstance(value, Signature):
            return value
        if isinstance(value, Mapping):
            return validate_signature(dict(value), source=field)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return self.episode(value, namespace=namespace, field=field).signature
        raise AnalogistError("expected a Signature object or an episode id", field=field)

    def encode(self, text: str, *, writer: str | None = None, episode_id: str | None = None,
               domain: str | None = None, source: str = "<text>") -> EncodeResult:
        """Write a Signature for one episode text (seen alone)."""
        return self.writer(writer).encode(text, episode_id=episode_id, domain=domain,
                                          source=source)

    # -- the memory --------------------------------------------------------------------------
    def add(self, signature: Signature | Mapping[str, Any] | None = None, *,
            text: str | None = None, event: Event | Mapping[str, Any] | None = None,
            episode_id: str | None = None, domain: str | None = None,
            namespace: str | None = None, writer: str | None = None) -> StoredEpisode:
        """Store one episode — a Signature, an episode text (encoded first) or a foresight
        Event (as its kind-``event`` Signature) — with its level embeddings when embeddings are
        on. Returns the stored row; refused, with nothing written, when the episode id exists.
        """
        given = [n for n, v in (("signature", signature), ("text", text), ("event", event))
                 if v is not None]
        if len(given) != 1:
            raise AnalogistError("give exactly one of signature, text, event (got "
                                 f"{', '.join(given) or 'none'})", field="signature")
        if signature is not None:
            data = signature if isinstance(signature, Signature) else dict(signature)
            if episode_id is not None:
                data = (data.model_copy(update={"episode_id": episode_id})
                        if isinstance(data, Signature) else {**data, "episode_id": episode_id})
            sig = self.signature(data)
        elif text is not None:
            sig = self.encode(text, writer=writer, episode_id=episode_id, domain=domain,
                              source="text").signature
        else:
            from analogist.foresight.event import Event, validate_event  # foresight, on use

            ev = event if isinstance(event, Event) else validate_event(dict(event),  # type: ignore[arg-type]
                                                                       source="event")
            sig = ev.to_signature()
        embed = self.level_embedder()
        ns = self.namespace(namespace)
        m = self.memory()
        sid = m.add(sig, namespace=ns, embeddings=None if embed is None else embed(sig))
        row = m.get(sid, ns)
        assert row is not None
        return row

    def episodes(self, namespace: str | None = None, *, include_superseded: bool = False,
                 limit: int | None = None, offset: int = 0) -> list[StoredEpisode]:
        """The stored episodes of ``namespace`` in id order (a page of them with ``limit`` /
        ``offset``)."""
        return self.memory().list(self.namespace(namespace),
                                  include_superseded=include_superseded, limit=limit,
                                  offset=offset)

    def delete(self, episode: int | str, *, namespace: str | None = None) -> StoredEpisode:
        """Delete one stored episode (row id or episode id; a string of digits is tried as an
        episode id, then as a row id). Returns the deleted row; an error naming ``episode``
        when ``namespace`` has no such episode (nothing is deleted)."""
        ns = self.namespace(namespace)
        m = self.memory()
        row = self.episode(episode, namespace=ns)
        m.delete(row.id, ns)
        return row

    def episode(self, value: int | str, *, namespace: str | None = None,
                field: str = "episode") -> StoredEpisode:
        """The stored episode with this episode id or row id (a string of digits is tried as an
        episode id, then as a row id), else an error naming ``field``."""
        ns = self.namespace(namespace)
        return _by_ref(self.memory, "get", value, ns, field)

    def episode_row(self, value: int | str, *, namespace: str | None = None,
                    field: str = "episode") -> int:
        """The row id of :meth:`episode`'s episode (found the same way), without reading it."""
        ns = self.namespace(namespace)
        return _by_ref(self.memory, "row_id", value, ns, field)

    def record_outcome(self, log_id: int | None = None, *, helped: bool | None = None,
                       negative: bool = False, used: str | None = None,
                       note: str | None = None, result: float | None = None,
                       counterfactual: float | None = None, higher_is_better: bool = True,
                       item: str | None = None, action: str | None = None,
                       namespace: str | None = None) -> dict[str, Any]:
        """Close the loop: record what the analogy attempt ``log_id`` (a ``find``'s
        ``FindResult.log_id``, or a recorded trigger firing) led to — ``helped`` True or False,
        or ``negative=True`` for a negative transfer — so that ``triggers fit`` and ``ledger``
        have data. ``used`` names the analogue acted on (required without ``log_id``: an
        analogy used outside ``find`` gets its own log entry); ``result`` with
        ``counterfactual`` (the no-analogy result on the same item) also writes a ledger entry.
        One transaction; nothing is written when any value is bad. Returns ``{"id", "log_id",
        "ledger", "outcome", "verdict"}`` (see :func:`analogist.triggers.record_outcome`)."""
        from analogist.triggers import (
            record_outcome,  # loaded on use (`analogist add` starts without)
        )

        return record_outcome(self.memory(), log_id, helped=helped, negative=negative,
                              used=used, note=note, result=result,
                              counterfactual=counterfactual, higher_is_better=higher_is_better,
                              item=item, action=action, namespace=self.namespace(namespace))

    def add_many(self, signatures: Iterable[Signature | Mapping[str, Any]], *,
                 namespace: str | None = None, batch_size: int = 500,
                 progress: Callable[[int], None] | None = None,
                 validated: bool = False) -> list[int]:
        """Store many episodes, one transaction per batch (a bad record rejects its batch).
        ``validated=True``: Signature objects among ``signatures`` come from
        :func:`~analogist.signature.validate_signature` and are not validated again (see
        :meth:`analogist.memory.sqlite.Memory.add_many`)."""
        return self.memory().add_many(signatures, namespace=self.namespace(namespace),
                                      batch_size=batch_size, progress=progress,
                                      embed=self.level_embedder(), validated=validated)


def _by_ref(memory: Callable[[], Any], method: str, value: int | str, ns: str,
            field: str) -> Any:
    """What the memory's ``method`` (``get`` or ``row_id``) answers for an episode reference:
    an episode id, or else a string of digits as a row id; an error naming ``field`` when
    neither is in namespace ``ns``. A malformed reference is refused before the store is
    opened."""
    _check_ref(value, ns, field)
    lookup = getattr(memory(), method)
    found = lookup(value, ns)
    if found is None and isinstance(value, str) and value.isdigit() and len(value) < 19:
        found = lookup(int(value), ns)
    if found is None:
        raise AnalogistError(f"no episode {value!r} in namespace {ns!r}"[:300], field=field)
    return found


def _check_ref(value: Any, ns: str, field: str) -> None:
    """A stored episode's key must be an episode id (text) or a row id (a whole number)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise AnalogistError("expected an episode id (text) or a row id (integer)", field=field)
    if isinstance(value, int) and not 0 <= value < 2 ** 63:
        raise AnalogistError(f"no episode {value} in namespace {ns!r}"[:300], field=field)
