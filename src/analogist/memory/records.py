"""Errors, limits, the stored-episode record and the validation of everything the store
writes: the checks a record passes (and the rows prepared from it) before
:class:`~analogist.memory.sqlite.Memory` opens a write transaction.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

import numpy as np

from analogist.errors import AnalogistError, SignatureError
from analogist.index.features import (
    _WORD,
    FINGERPRINT_DEPTH,
    EpisodeFeatures,
    _stored_features,
)
from analogist.signature import (
    _LEVEL_FIELDS,
    _PROV_FIELDS,
    MAX_TEXT,
    Signature,
    _fast_plain,
    _model_signature,
    _Plain,
    _plain_of,
    validate_signature,
)


class StoreError(AnalogistError):
    """A store-level problem: bad arguments, an unreadable file, a failed write."""


class DuplicateEpisodeError(StoreError):
    """An episode id already present in the namespace."""


class NotFoundError(StoreError):
    """No such episode (in this namespace)."""


class SchemaVersionError(StoreError):
    """The file's schema is newer than this version of analogist understands."""


# -- limits --------------------------------------------------------------------------------
MAX_NAMESPACE = 100
MAX_FEATURES = 20_000
MAX_FEATURE_NAME = 1_000
MAX_EMBEDDING_DIM = 65_536
MAX_JSON_BYTES = 1_000_000
MAX_JSON_DEPTH = 64
MAX_LIST = 1_000_000
_CHANNEL = re.compile(r"^[A-Za-z][A-Za-z0-9_.:\-]{0,63}$")
_HEX = re.compile(r"^[0-9a-f]{16,128}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class StoredEpisode:
    """One stored signature with its bookkeeping."""

    id: int
    namespace: str
    episode_id: str
    kind: str
    signature: Signature
    source_hash: str | None
    created_at: str
    superseded_by: int | None
    verified: bool

    @property
    def is_superseded(self) -> bool:
        return self.superseded_by is not None


class _Prepared(NamedTuple):
    """The rows of one episode, ready to insert: its ``signatures`` columns, the compact
    canonical JSON ``text``, fingerprint, vector rows (content counts first), surface tokens
    and relation rows (position, predicate, args JSON, whether the causal chain uses it)
    without the row id.
    (A named tuple: a bulk add makes thousands a second.)"""

    episode_id: str
    kind: str
    source_hash: str | None
    verified: bool
    text: str
    fingerprint: str
    fingerprint_depth: int
    vectors: tuple[tuple[str, str, bytes | str], ...]
    surface: str
    relations: list[tuple[int, str, str, int]]


# -- validation helpers --------------------------------------------------------------------
def _namespace(ns: Any) -> str:
    if not isinstance(ns, str) or not 1 <= len(ns) <= MAX_NAMESPACE or _CONTROL.search(ns):
        raise StoreError(
            f"namespace must be a string of 1 to {MAX_NAMESPACE} characters without control "
            f"characters, got {ns!r}"[:200], field="namespace")
    return ns


def _check_depth(value: Any, field: str) -> None:
    """Reject JSON nested deeper than MAX_JSON_DEPTH (iteratively: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack:
        v, d = stack.pop()
        seen += 1
        if seen > MAX_LIST:
            raise StoreError(f"more than {MAX_LIST} JSON values", field=field)
        if isinstance(v, (dict, list, tuple)):
            if d >= MAX_JSON_DEPTH:
                raise StoreError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels", field=field)
            items = v.values() if isinstance(v, dict) else v
            if isinstance(v, dict) and not all(isinstance(k, str) for k in v):
                raise StoreError("JSON object keys must be strings", field=field)
            stack.extend((x, d + 1) for x in items)


def _json_text(value: Any, field: str, *, nullable: bool = False) -> str | None:
    if value is None:
        if nullable:
            return None
        raise StoreError("a value is required", field=field)
    if isinstance(value, Signature):
        value = value.to_data()
    _check_depth(value, field)
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False,
                          separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise StoreError(f"not JSON-serialisable: {e}"[:300], field=field) from None
    if len(text.encode("utf-8", errors="surrogatepass")) > MAX_JSON_BYTES:
        raise StoreError(f"JSON text over {MAX_JSON_BYTES} bytes", field=field)
    return text


def _check_features(f: Any) -> EpisodeFeatures:
    if not isinstance(f, EpisodeFeatures):
        raise StoreError(f"expected EpisodeFeatures, got {type(f).__name__}", field="features")
    if not isinstance(f.content, Mapping) or len(f.content) > MAX_FEATURES:
        raise StoreError(f"content must be a mapping of at most {MAX_FEATURES} features",
                         field="features.content")
    for k, v in f.content.items():
        if not isinstance(k, str) or not 1 <= len(k) <= MAX_FEATURE_NAME:
            raise StoreError(f"feature names must be strings of 1 to {MAX_FEATURE_NAME} "
                             f"characters, got {k!r}"[:200], field="features.content")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                or v < 0:
            raise StoreError(f"count of {k[:80]!r} must be a finite number >= 0, got {v!r}"[:200],
                             field="features.content")
    if not isinstance(f.fingerprint, str) or not _HEX.match(f.fingerprint):
        raise StoreError("fingerprint must be a lower-case hex digest", field="features.fingerprint")
    if isinstance(f.fingerprint_depth, bool) or not isinstance(f.fingerprint_depth, int) \
            or not 0 <= f.fingerprint_depth <= 16:
        raise StoreError("fingerprint_depth must be an integer from 0 to 16",
                         field="features.fingerprint_depth")
    return f


def _embedding_rows(embeddings: Any) -> list[tuple[str, str, bytes]]:
    if embeddings is None:
        return []
    if not isinstance(embeddings, Mapping):
        raise StoreError("embeddings must map a channel name to a vector", field="embeddings")
    rows = []
    for ch in sorted(embeddings):
        if not isinstance(ch, str) or not _CHANNEL.match(ch) or ch == "content":
            raise StoreError(f"bad embedding channel {ch!r}: a letter then letters, digits or "
                             f"_.:- (at most 64), not 'content'"[:200], field="embeddings")
        try:
            a = np.asarray(embeddings[ch], dtype=np.float64)
        except (TypeError, ValueError):
            raise StoreError("embedding is not a numeric vector", field=f"embeddings.{ch}") from None
        if a.ndim != 1 or not 1 <= a.size <= MAX_EMBEDDING_DIM:
            raise StoreError(f"embedding must be a 1-D vector of 1 to {MAX_EMBEDDING_DIM} "
                             f"numbers, got shape {a.shape}", field=f"embeddings.{ch}")
        if not np.all(np.isfinite(a)):
            raise StoreError("embedding has NaN or infinite values", field=f"embeddings.{ch}")
        rows.append((ch, "float32", a.astype("<f4").tobytes()))
    return rows


def _validated(record: Any) -> Signature:
    if isinstance(record, Signature):
        return validate_signature(_signature_data(record))
    if isinstance(record, Mapping):
        return validate_signature(dict(record))
    raise SignatureError(f"expected a Signature or a mapping, got {type(record).__name__}")


def _signature_data(record: Signature) -> dict[str, Any]:
    try:
        return record.to_data()
    except AnalogistError:
        raise
    except Exception as e:  # a model_construct()ed object with bad fields
        raise SignatureError(f"not a valid Signature: {type(e).__name__}") from None


def _plain_record(record: Any) -> _Plain:
    """A record validated as :func:`_validated` validates it, as plain values: read straight
    from the mapping when the fast path can (no model objects built), else from the model's
    Signature (whose errors, worded by the model, are raised)."""
    if isinstance(record, Signature):
        data = _signature_data(record)
    elif isinstance(record, Mapping):
        data = record if type(record) is dict else dict(record)
    else:
        raise SignatureError(f"expected a Signature or a mapping, got {type(record).__name__}")
    p = _fast_plain(data)
    return p if p is not None else _plain_of(_model_signature(data))


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""What ``json.dumps(x, ensure_ascii=False, separators=(",", ":"))`` writes, without making an
encoder per call."""


_STR = json.encoder.encode_basestring
"""How :data:`_COMPACT` writes a string (``ensure_ascii=False``)."""
_SIGN_TEXT = {1: "1", -1: "-1"}


def _signature_json(sig: Signature) -> str:
    """``_COMPACT.encode(sig.to_data())``, as the store writes it (:func:`_plain_json`;
    ``tests/test_add_rows.py`` holds the two equal)."""
    return _plain_json(_plain_of(sig))


def _plain_json(p: _Plain) -> str:
    """``_COMPACT.encode(sig.to_data())`` of the signature ``p`` stands for, written directly:
    no dicts of the canonical form are built. Role tags, predicates, kinds, edge types and
    statuses are plain identifiers (the model's patterns), quoted as they are; other strings go
    through the encoder's own string function; a provenance with a time through the model's
    own JSON form and the encoder."""
    enc = _STR
    roles = p.roles
    text = p.names
    edges = []
    for (i, j, t, sign), (status, _f) in zip(p.edges, p.meta, strict=True):
        sign_text = _SIGN_TEXT[sign] if type(sign) is int else _COMPACT.encode(sign)
        edges.append(f'{{"cause":"{text[i]}","edge":"{t}","effect":"{text[j]}",'
                     f'"sign":{sign_text},"status":"{status}"}}')
    # (a relation has at least one role argument)
    parts = [f'{{"episode_id":{enc(p.episode_id)},"kind":"{p.kind}","roles":{{'
             + ",".join([f'"{k}":{enc(roles[k])}' for k in sorted(roles)])
             + '},"relations":['
             + ",".join([f'["{q}","' + '","'.join(a) + '"]' for q, a in p.relations])
             + '],"causal_chain":[' + ",".join(edges) + "]"]
    invariant, symptom, fix = p.texts
    if invariant is not None:
        parts.append(',"violated_invariant":' + enc(invariant))
    if symptom is not None:
        parts.append(',"symptom":' + enc(symptom))
    if fix is not None:
        parts.append(',"fix_operator":' + enc(fix))
    lv = p.levels
    if lv:
        levels = [f'"{k}":{enc(lv[k])}' for k in _LEVEL_FIELDS if lv.get(k) is not None]
        if levels:
            parts.append(',"levels":{' + ",".join(levels) + "}")
    sf = p.surface
    if sf:
        domain, entities = sf.get("domain"), sf.get("entities")
        if domain is not None or entities:
            sub = []
            if domain is not None:
                sub.append('"domain":' + enc(domain))
            if entities:
                sub.append('"entities":[' + ",".join([enc(x) for x in entities]) + "]")
            parts.append(',"surface":{' + ",".join(sub) + "}")
    pv = p.provenance
    if not isinstance(pv, dict):  # a Provenance with a time: the model writes it in its ISO form
        parts += (',"provenance":', _COMPACT.encode(pv.model_dump(mode="json",
                                                                  exclude_none=True)))
    elif pv:
        given = {k: pv[k] for k in _PROV_FIELDS if pv.get(k) is not None}
        if given:
            parts += (',"provenance":', _COMPACT.encode(given))
    v = p.verified
    parts.append(',"verified":true}' if v is True else ',"verified":false}' if v is False
                 else ',"verified":' + _COMPACT.encode(v) + "}")
    return "".join(parts)


def _prepare(record: Any, features: Any = None, embeddings: Any = None) -> _Prepared:
    p = _plain_record(record)
    if features is None:
        content, fp = _stored_features([p])[0]
        return _assemble(p, content, fp, FINGERPRINT_DEPTH, _embedding_rows(embeddings))
    feats = _check_features(features)
    return _assemble(p, _COMPACT.encode({k: float(v) for k, v in sorted(feats.content.items())}),
                     feats.fingerprint, feats.fingerprint_depth, _embedding_rows(embeddings))


def _prepare_many(plains: Sequence[_Plain],
                  embedded: Sequence[Sequence[tuple[str, str, bytes]]]) -> list[_Prepared]:
    """Prepared records of validated signatures (as plain values) with their checked embedding
    rows, the features of all of them computed in one pass."""
    feats = _stored_features(plains)
    return [_assemble(p, content, fp, FINGERPRINT_DEPTH, rows)
            for p, rows, (content, fp) in zip(plains, embedded, feats, strict=True)]


def _assemble(p: _Plain, content: str, fingerprint: str, depth: int,
              embedding_rows: Sequence[tuple[str, str, bytes]]) -> _Prepared:
    """The rows of a validated signature with its content counts (compact JSON, keys sorted,
    float counts), fingerprint and checked embedding rows."""
    vectors = (("content", "json-counts", content), *embedding_rows)
    chain = set(p.nodes)
    # args: the JSON list of role tags as json.dumps writes it (tags are plain ASCII
    # identifiers, so nothing needs escaping); a relation has at least one role argument
    relations = [(i, k[0], '["' + '", "'.join(k[1]) + '"]', 1 if k in chain else 0)
                 for i, k in enumerate(p.relations)]
    # compact canonical JSON (the pretty text is for people, not the store)
    return _new_prepared(_Prepared, (
        p.episode_id, p.kind, p.source_hash(), p.verified, _plain_json(p), fingerprint, depth,
        vectors, " ".join(sorted(set(_WORD.findall(p.surface_text().lower())))), relations))


_new_prepared = tuple.__new__
"""``_Prepared(*fields)`` without the named tuple's Python-level ``__new__`` (a bulk add makes
thousands a second)."""


MAX_ID = 2 ** 63 - 1
"""Largest integer SQLite stores (ids, limits, offsets, counts beyond it are refused)."""


def _limit(value: Any, field: str, *, allow_none: bool = True) -> int:
    if value is None and allow_none:
        return -1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ID:
        raise StoreError(f"expected an integer from 0 to {MAX_ID}, got {value!r}"[:200],
                         field=field)
    return value


def _now() -> datetime:
    return datetime.now(UTC)


OUTCOMES: tuple[str, ...] = ("useful", "not_useful", "negative")
"""What a logged analogy attempt led to: a useful analogy, one that did not help, or a negative
transfer (worse than acting without it)."""

PLAN_STATUSES: tuple[str, ...] = ("plan", "macro", "retired")


def _term_row(ns: str, name: Any, kind: Any, arity: Any, definition: Any, status: Any,
              count: Any, merged_into: Any) -> tuple[Any, ...]:
    for f, v, n in (("name", name, 200), ("kind", kind, 50), ("definition", definition,
                                                               MAX_TEXT)):
        if not isinstance(v, str) or len(v) > n or (f != "definition" and not v):
            raise StoreError(f"{f} must be a string of at most {n} characters", field=f)
    if status not in ("declared", "proposed", "merged"):
        raise StoreError("status must be declared, proposed or merged", field="status")
    for f, v in (("arity", arity), ("count", count)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise StoreError(f"{f} must be a non-negative integer", field=f)
    if merged_into is not None and (not isinstance(merged_into, str)
                                    or not 1 <= len(merged_into) <= 200):
        raise StoreError("merged_into must be null or a term name", field="merged_into")
    if (status == "merged") != (merged_into is not None):
        raise StoreError("a merged term names the term it was merged into (and only a merged "
                         "term does)", field="merged_into")
    return (ns, name, kind, arity, definition, status, count, merged_into)


def _trigger_fields(trigger: Any, tier: Any, tokens: Any
                    ) -> tuple[str | None, int | None, int | None]:
    trig = _json_text(trigger, "trigger", nullable=True)
    if tier is not None and (isinstance(tier, bool) or tier not in (0, 1, 2)):
        raise StoreError(f"tier must be 0, 1 or 2, got {tier!r}"[:200], field="tier")
    tok = None if tokens is None else _limit(tokens, "tokens")
    return trig, tier, tok


def _transfer_values(item: Any, action: Any, analogy_result: Any, counterfactual_result: Any,
                     higher_is_better: Any) -> tuple[str, str, float, float | None, bool, str]:
    """Validated ledger values and the verdict (``better``/``same``/``worse``/``unknown``)."""
    for f, v in (("item", item), ("action", action)):
        if not isinstance(v, str) or not 1 <= len(v) <= MAX_TEXT:
            raise StoreError(f"{f} must be a string of 1 to {MAX_TEXT} characters", field=f)
    vals: list[float | None] = []
    for f, v in (("analogy_result", analogy_result),
                 ("counterfactual_result", counterfactual_result)):
        if v is None and f == "counterfactual_result":
            vals.append(None)
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise StoreError(f"{f} must be a finite number, got {v!r}"[:200], field=f)
        vals.append(float(v))
    if not isinstance(higher_is_better, bool):
        raise StoreError("higher_is_better must be a boolean", field="higher_is_better")
    a, cf = vals
    assert a is not None
    if cf is None:
        verdict = "unknown"
    elif a == cf:
        verdict = "same"
    else:
        verdict = "better" if (a > cf) == higher_is_better else "worse"
    return item, action, a, cf, higher_is_better, verdict


def _at(e: AnalogistError, i: int) -> AnalogistError:
    """The same error, located at record ``i`` of a bulk add."""
    field = f"records[{i}]" + (f".{e.field}" if e.field else "")
    out = type(e)(f"record {i}: {e.message}", source=e.source, line=e.line, field=field)
    return out
