"""The bundled casebook: hand-written episode Signatures for analogical retrieval.

The casebook lives in ``analogist/data/casebook/``:

* ``episodes/<id>.yaml`` — one :class:`~analogist.signature.Signature` per file, in the canonical
  shape accepted by :func:`~analogist.signature.validate_signature`;
* ``index.yaml`` — the casebook's own labels, kept out of the Signatures (whose model rejects
  unknown fields): a ``casebook`` metadata block, a ``mechanisms`` block (mechanism name → one-line
  definition) and an ``entries`` list with one row per episode:
  ``{id, file, mechanism, domain, decoy_of, note, source}``. ``decoy_of`` is null for a real
  entry, or the id of the real entry whose surface (domain, vocabulary, entity names) a near-miss
  decoy copies while its mechanism differs. ``source`` is the one-line source note (the
  Signature's ``provenance`` has no free-text field);
* ``vocab_additions.yaml`` — relations the casebook needs that the bundled signature vocabulary
  lacks, each with a one-line definition; :func:`casebook_vocabulary` merges them in.

Entries of one mechanism in different domains share a structural core (the same relation
predicates over corresponding roles and the same causal edge pattern) while their role
descriptions, L0 narratives and surface entities are domain-specific.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from analogist.errors import AnalogistError
from analogist.io import parse_structured
from analogist.signature import Signature, default_signature_vocabulary, validate_signature
from analogist.vocabulary import Vocabulary

__all__ = [
    "CaseEntry",
    "casebook_index",
    "casebook_vocabulary",
    "load_casebook",
    "mechanisms",
]

_ROOT = "analogist:data/casebook"
_ROW_KEYS = ("id", "file", "mechanism", "domain", "decoy_of", "note", "source")


@dataclass(frozen=True)
class CaseEntry:
    """One casebook entry: its index labels and its Signature.

    ``decoy_of`` is None for a real entry, else the id of the real entry it imitates on the
    surface. ``source`` is the one-line source note from the index.
    """

    id: str
    mechanism: str
    domain: str
    decoy_of: str | None
    note: str
    signature: Signature
    source: str = ""

    @property
    def is_decoy(self) -> bool:
        return self.decoy_of is not None


def _dir() -> Traversable:
    return resources.files("analogist") / "data" / "casebook"


def _read_yaml(node: Traversable, label: str) -> tuple[Any, str]:
    try:
        text = node.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AnalogistError("file not found", source=label) from None
    return parse_structured(text, source=label, fmt="yaml"), text


@lru_cache(maxsize=1)
def _index() -> dict[str, Any]:
    label = f"{_ROOT}/index.yaml"
    data, _ = _read_yaml(_dir() / "index.yaml", label)
    if not isinstance(data, dict):
        raise AnalogistError("expected a mapping at the top level", source=label)
    for key in ("casebook", "mechanisms", "entries"):
        if key not in data:
            raise AnalogistError(f"missing top-level key {key!r}", source=label, field=key)
    rows = data["entries"]
    if not isinstance(rows, list) or not rows:
        raise AnalogistError("expected a non-empty list of entries", source=label,
                             field="entries")
    mechs = data["mechanisms"]
    if not isinstance(mechs, dict):
        raise AnalogistError("expected a mapping mechanism -> definition", source=label,
                             field="mechanisms")
    seen: dict[str, int] = {}
    for i, row in enumerate(rows):
        field = f"entries[{i}]"
        if not isinstance(row, dict):
            raise AnalogistError("expected a mapping", source=label, field=field)
        missing = [k for k in _ROW_KEYS if k not in row]
        extra = sorted(set(row) - set(_ROW_KEYS))
        if missing or extra:
            raise AnalogistError(
                f"row keys must be exactly {', '.join(_ROW_KEYS)}"
                + (f"; missing {', '.join(missing)}" if missing else "")
                + (f"; unexpected {', '.join(extra)}" if extra else ""),
                source=label, field=field)
        for k in ("id", "file", "mechanism", "domain", "note", "source"):
            if not isinstance(row[k], str) or not row[k].strip():
                raise AnalogistError(f"{k} must be a non-empty string", source=label,
                                     field=f"{field}.{k}")
        if row["decoy_of"] is not None and not isinstance(row["decoy_of"], str):
            raise AnalogistError("decoy_of must be null or an entry id", source=label,
                                 field=f"{field}.decoy_of")
        if row["decoy_of"] is None and row["mechanism"] not in mechs:
            raise AnalogistError(
                f"mechanism {row['mechanism']!r} is not defined under 'mechanisms'",
                source=label, field=f"{field}.mechanism")
        if row["id"] in seen:
            raise AnalogistError(f"id {row['id']!r} repeats entries[{seen[row['id']]}]",
                                 source=label, field=f"{field}.id")
        seen[row["id"]] = i
    for i, row in enumerate(rows):
        target = row["decoy_of"]
        if target is None:
            continue
        if target not in seen:
            raise AnalogistError(f"decoy_of {target!r} names no entry", source=label,
                                 field=f"entries[{i}].decoy_of")
        if rows[seen[target]]["decoy_of"] is not None:
            raise AnalogistError(f"decoy_of {target!r} names another decoy", source=label,
                                 field=f"entries[{i}].decoy_of")
    return data


def casebook_index() -> dict[str, Any]:
    """The parsed ``index.yaml`` (``casebook``, ``mechanisms``, ``entries``); a fresh copy."""
    return copy.deepcopy(_index())


@lru_cache(maxsize=1)
def _entries() -> tuple[CaseEntry, ...]:
    rows = _index()["entries"]
    episodes = _dir() / "episodes"
    indexed = {row["file"] for row in rows}
    on_disk = {p.name for p in episodes.iterdir() if p.name.endswith((".yaml", ".yml"))}
    stray = sorted(f"episodes/{n}" for n in on_disk if f"episodes/{n}" not in indexed)
    if stray:
        raise AnalogistError(f"episode file(s) not listed in index.yaml: {', '.join(stray)}",
                             source=f"{_ROOT}/episodes")
    out: list[CaseEntry] = []
    for row in rows:
        label = f"{_ROOT}/{row['file']}"
        data, text = _read_yaml(_dir().joinpath(*row["file"].split("/")), label)
        sig = validate_signature(data, source=label, text=text)
        if sig.episode_id != row["id"]:
            raise AnalogistError(
                f"episode_id {sig.episode_id!r} differs from its index id {row['id']!r}",
                source=label, field="episode_id")
        if sig.surface.domain != row["domain"]:
            raise AnalogistError(
                f"surface.domain {sig.surface.domain!r} differs from the index domain "
                f"{row['domain']!r}", source=label, field="surface.domain")
        out.append(CaseEntry(id=row["id"], mechanism=row["mechanism"], domain=row["domain"],
                             decoy_of=row["decoy_of"], note=row["note"], signature=sig,
                             source=row["source"]))
    return tuple(out)


def load_casebook() -> list[CaseEntry]:
    """Every casebook entry (real entries and decoys), in index order.

    Each episode file is validated with :func:`~analogist.signature.validate_signature`; any
    problem (malformed YAML, a bad field, an id or domain that disagrees with the index, a file
    missing from or absent in the index) raises :class:`AnalogistError` naming the file.
    """
    return list(_entries())


@lru_cache(maxsize=1)
def _vocabulary() -> Vocabulary:
    base = default_signature_vocabulary()
    node = _dir() / "vocab_additions.yaml"
    if not node.is_file():
        return base
    label = f"{_ROOT}/vocab_additions.yaml"
    data, _ = _read_yaml(node, label)
    extra = Vocabulary.from_data(data, source=label)
    for p in extra:
        if not p.definition.strip():
            raise AnalogistError(f"relation {p.name!r} has no definition", source=label)
        clash = base.get(p.name)
        if clash is not None:
            raise AnalogistError(f"relation {p.name!r} is already in the bundled vocabulary "
                                 f"(as {clash.name!r})", source=label)
    merged = base.merged(extra)
    merged.name = base.name
    merged.version = f"{base.version}+casebook.{extra.version}"
    return merged


def casebook_vocabulary() -> Vocabulary:
    """The bundled signature vocabulary plus ``casebook/vocab_additions.yaml`` when present
    (a fresh copy on every call)."""
    return _vocabulary().model_copy(deep=True)


def mechanisms() -> dict[str, list[CaseEntry]]:
    """Real (non-decoy) entries grouped by mechanism, in index order; decoys are left out (their
    mechanism labels name what actually happens in them, not a casebook mechanism)."""
    out: dict[str, list[CaseEntry]] = {}
    for e in _entries():
        if e.decoy_of is None:
            out.setdefault(e.mechanism, []).append(e)
    return out
