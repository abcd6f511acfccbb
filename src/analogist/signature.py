"""Structural Signatures: one episode as a small typed relational record (seed 000 §6).

A :class:`Signature` holds an episode's ``kind``, its ``roles`` (tag → description), the
``relations`` among the roles, a short ``causal_chain`` of typed, signed edges, the
``violated_invariant``, the ``symptom``, the ``fix_operator``, four abstraction ``levels`` (L0
concrete … L3 most abstract), the ``surface`` (domain and entity names, kept apart from the
structure), ``provenance`` and whether the record was ``verified``.

Accepted input shapes
---------------------
* a relation: ``["derives_from", "DER", "SRC"]`` (seed form), ``"derives_from(DER,SRC)"`` or
  ``{"predicate": "derives_from", "args": ["DER", "SRC"]}``;
* a causal-chain atom: ``"diverges_from(DER,SRC)"`` (seed form), ``["diverges_from", "DER",
  "SRC"]`` or ``{"predicate": ..., "args": [...]}``; ``"outage()"`` (no arguments) is allowed;
* a causal edge: ``[cause, edge, effect]`` (seed form; sign +1, status observed) or
  ``{"cause": ..., "edge": "prevents", "effect": ..., "sign": -1, "status": "inferred"}``;
  ``edge`` is one of :data:`EDGE_TYPES`; ``sign`` is ``1``/``-1`` (also ``"+"``, ``"-"``,
  ``"positive"``, ``"negative"``); ``status`` is ``observed`` or ``inferred``.

Canonical shape (what :func:`dump_signature` writes)
-----------------------------------------------------
Fields in schema order (episode_id, kind, roles, relations, causal_chain, violated_invariant,
symptom, fix_operator, levels, surface, provenance, verified); ``roles`` sorted by tag;
``relations`` as ``[predicate, role, ...]`` lists, deduplicated and sorted (their order carries no
meaning; the model sorts them on validation, so a loaded Signature is already canonical);
``causal_chain`` in the given order (a chain is read in order) as objects
``{"cause": "pred(A,B)", "edge": ..., "effect": "pred(C)", "sign": 1, "status": "observed"}`` with
atoms written ``pred(A,B)`` (no spaces) and sign/status always explicit; optional fields that are
unset (None) are left out, as are ``levels``, ``surface`` and ``provenance`` when entirely empty.
``load(dump(x)) == x`` for every valid ``x``, and dumping is byte-for-byte deterministic.
Signatures are immutable (frozen models). A causal edge repeated with the same cause, edge type
and effect is an error (naming both positions), as is a role not declared in ``roles``.

Compilation (:func:`compile_signature`)
---------------------------------------
* roles → entities, in **sorted tag order** (not declaration order), so that two signatures that
  differ only in how their roles were listed compile identically;
* each relation → the expression ``(predicate ROLE ...)``, in canonical (sorted) relation order;
* each causal-chain atom ``pred(ROLE, ...)`` → the expression ``(pred ROLE ...)``; an atom equal to
  a relation is the *same* (shared) expression;
* each causal edge → the higher-order expression ``(edge cause_expr effect_expr)``, e.g.
  ``(causes (diverges_from DER SRC) (false_claim CON))``; its sign and status go into
  ``Description.metadata["edges"][sexpr] = {"edge": ..., "sign": 1, "status": "observed"}``;
* a zero-argument atom such as ``outage()`` cannot be an SME expression (SME has no 0-ary
  expressions), so it compiles to an attribute of the synthetic entity :data:`EPISODE_ENTITY`
  (``(outage _episode)``), which is then appended after the role entities. Role tags must start
  with a letter, so ``_episode`` never collides with a role. Relations (as opposed to
  causal-chain atoms) must have at least one role argument;
* predicate names are resolved through the vocabulary (synonyms become the declared name).
  Unknown names become *proposed* terms (with a :class:`ProposedTermWarning`) unless ``strict``.
  A vocabulary passed in is not modified: proposals are made on a copy, which the Description
  carries as its ``vocabulary``.

The same Signature always compiles to an identical Description (same entities, expressions in the
same order, same metadata).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from analogist.description import Description, Expr
from analogist.errors import InputTooLargeError, SignatureError, VocabularyError
from analogist.io import MAX_FILE_BYTES, parse_structured, read_text
from analogist.vocabulary import Predicate, ProposedTermWarning, Vocabulary

__all__ = [
    "EDGE_TYPES",
    "EPISODE_ENTITY",
    "KNOWN_KINDS",
    "MAX_TEXT",
    "Atom",
    "CausalEdge",
    "Levels",
    "Provenance",
    "ProposedTermWarning",
    "Signature",
    "Surface",
    "check_vocabulary",
    "compile_signature",
    "default_signature_vocabulary",
    "dump_signature",
    "load_signature",
    "loads_signature",
    "parse_atom",
    "signature_json_schema",
    "validate_signature",
]

# -- limits ------------------------------------------------------------------------------------
MAX_TEXT = 4000
"""Longest accepted free-text field (role descriptions, invariant, symptom, levels, …)."""
MAX_NAME = 100
"""Longest predicate name, episode id, kind or provenance token."""
MAX_TAG = 64
"""Longest role tag."""
MAX_ROLES = 64
MAX_RELATIONS = 256
MAX_EDGES = 256
MAX_ARGS = 16
MAX_SURFACE_ENTITIES = 256

EDGE_TYPES: tuple[str, ...] = ("causes", "prevents", "enables", "masks", "delays")
"""The causal edge types, in documentation order."""

EPISODE_ENTITY = "_episode"
"""Synthetic entity that zero-argument causal atoms (``outage()``) are compiled onto."""

KNOWN_KINDS: tuple[str, ...] = ("failure", "solution", "success", "near_miss", "event", "plan")
"""Common values of ``kind`` (any lower-case identifier is accepted)."""

_TAG_RE = r"[A-Za-z][A-Za-z0-9_\-]*"
_PRED_RE = r"[A-Za-z_][A-Za-z0-9_\-]*"
TAG_PATTERN = rf"^{_TAG_RE}$"
PRED_PATTERN = rf"^{_PRED_RE}$"
ATOM_PATTERN = rf"^\s*{_PRED_RE}\s*\(\s*({_TAG_RE}(\s*,\s*{_TAG_RE})*)?\s*\)\s*$"
_ATOM = re.compile(rf"^\s*({_PRED_RE})\s*\((.*)\)\s*$", re.DOTALL)
_TAG = re.compile(TAG_PATTERN)

RoleTag = Annotated[str, Field(pattern=TAG_PATTERN, max_length=MAX_TAG)]
PredName = Annotated[str, Field(pattern=PRED_PATTERN, max_length=MAX_NAME)]
Text = Annotated[str, Field(max_length=MAX_TEXT)]
Token = Annotated[str, Field(min_length=1, max_length=MAX_NAME)]
EdgeType = Literal["causes", "prevents", "enables", "masks", "delays"]


# -- atoms and edges ---------------------------------------------------------------------------
def parse_atom(text: str) -> tuple[str, tuple[str, ...]]:
    """Split ``"pred(A, B)"`` into ``("pred", ("A", "B"))``; ValueError when malformed."""
    if len(text) > MAX_TEXT:
        raise ValueError(f"atom is {len(text)} characters, over the limit of {MAX_TEXT}")
    m = _ATOM.match(text)
    if m is None:
        raise ValueError(f"malformed atom {text!r}: expected pred(ROLE, ...)")
    inner = m.group(2).strip()
    args = tuple(a.strip() for a in inner.split(",")) if inner else ()
    for a in args:
        if not _TAG.match(a):
            raise ValueError(
                f"malformed atom {text!r}: argument {a!r} is not a role tag "
                f"(a letter, then letters, digits, '_' or '-')")
    return m.group(1), args


class Atom(BaseModel):
    """``predicate(ROLE, ...)``: a relation over roles, or a state in a causal chain."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    predicate: PredName
    args: tuple[RoleTag, ...] = Field(default=(), max_length=MAX_ARGS)

    @model_validator(mode="before")
    @classmethod
    def _coerce(cls, data: Any) -> Any:
        if isinstance(data, str):
            pred, args = parse_atom(data)
            return {"predicate": pred, "args": args}
        if isinstance(data, (list, tuple)):
            if not data or not all(isinstance(x, str) for x in data):
                raise ValueError(f"expected [predicate, role, ...] (strings), got {data!r}"[:300])
            return {"predicate": data[0], "args": tuple(data[1:])}
        return data

    def text(self) -> str:
        """The compact form ``pred(A,B)``."""
        return f"{self.predicate}({','.join(self.args)})"

    def to_list(self) -> list[str]:
        return [self.predicate, *self.args]

    def sort_key(self) -> tuple[str, tuple[str, ...]]:
        return (self.predicate, self.args)

    def __str__(self) -> str:
        return self.text()


_SIGNS: dict[Any, int] = {"+": 1, "+1": 1, "1": 1, "positive": 1, "-": -1, "-1": -1,
                          "negative": -1}


class CausalEdge(BaseModel):
    """One typed, signed edge of a causal chain: ``cause --edge--> effect``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cause: Atom
    edge: EdgeType
    effect: Atom
    sign: Literal[1, -1] = Field(default=1, description="+1 (positive, default) or -1")
    status: Literal["observed", "inferred"] = "observed"

    @model_validator(mode="before")
    @classmethod
    def _coerce(cls, data: Any) -> Any:
        if isinstance(data, (list, tuple)):
            if len(data) != 3:
                hint = ""
                if any(isinstance(x, str) and x.count("(") != x.count(")") for x in data):
                    hint = ("; an atom was split at a comma: in a YAML flow list [...] quote "
                            "atoms such as 'pred(A,B)'")
                raise ValueError(
                    f"expected [cause, edge, effect] (3 items), got {len(data)} item(s){hint}")
            return {"cause": data[0], "edge": data[1], "effect": data[2]}
        return data

    @field_validator("edge", mode="before")
    @classmethod
    def _edge_ok(cls, v: Any) -> Any:
        if isinstance(v, str):
            w = v.strip().lower()
            if w in EDGE_TYPES:
                return w
        shown = repr(v)[:60]
        raise ValueError(f"unknown edge type {shown}; expected one of {', '.join(EDGE_TYPES)}")

    @field_validator("sign", mode="before")
    @classmethod
    def _sign_ok(cls, v: Any) -> Any:
        if isinstance(v, bool):
            raise ValueError("sign must be 1 or -1, not a boolean")
        if isinstance(v, str):
            s = v.strip().lower()
            if s in _SIGNS:
                return _SIGNS[s]
            raise ValueError(f"sign must be 1 or -1 (or '+', '-'), got {v[:40]!r}")
        return v

    def atoms(self) -> tuple[Atom, Atom]:
        return (self.cause, self.effect)

    def to_data(self) -> dict[str, Any]:
        return {"cause": self.cause.text(), "edge": self.edge, "effect": self.effect.text(),
                "sign": self.sign, "status": self.status}


class Levels(BaseModel):
    """The episode at four abstraction levels: L0 concrete, L1, L2, L3 most abstract."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    L0: Text | None = None
    L1: Text | None = None
    L2: Text | None = None
    L3: Text | None = None


class Surface(BaseModel):
    """Surface features, kept apart from the structure: domain and entity names."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    domain: Text | None = None
    entities: list[Text] = Field(default_factory=list, max_length=MAX_SURFACE_ENTITIES)


class Provenance(BaseModel):
    """Who wrote the signature, when, from which source text, with which prompt version."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    writer: Token | None = None
    time: datetime | None = None
    source_hash: Token | None = None
    prompt_version: Token | None = None


def _unknown_role(atom: Atom, roles: dict[str, str], field: str) -> None:
    for a in atom.args:
        if a not in roles:
            declared = ", ".join(sorted(roles)) or "none"
            raise SignatureError(
                f"role {a!r} in {atom.text()} is not a declared role (declared: {declared})",
                field=field)


class Signature(BaseModel):
    """One episode's structural signature (seed 000 §6). See the module docstring."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    episode_id: Token
    kind: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=MAX_NAME)] = Field(
        description="failure, solution, success, near_miss, event, plan, … (lower-case id)")
    roles: dict[RoleTag, Text] = Field(min_length=1, max_length=MAX_ROLES,
                                       description="role tag → description")
    relations: list[Atom] = Field(default_factory=list, max_length=MAX_RELATIONS)
    causal_chain: list[CausalEdge] = Field(default_factory=list, max_length=MAX_EDGES)
    violated_invariant: Text | None = None
    symptom: Text | None = None
    fix_operator: Text | None = None
    levels: Levels = Field(default_factory=Levels)
    surface: Surface = Field(default_factory=Surface)
    provenance: Provenance = Field(default_factory=Provenance)
    verified: bool = False

    @field_validator("relations", mode="after")
    @classmethod
    def _relations_ok(cls, v: list[Atom], info: ValidationInfo) -> list[Atom]:
        roles = info.data.get("roles")
        for i, atom in enumerate(v):
            if not atom.args:
                raise SignatureError(
                    f"relation {atom.text()} has no role arguments; a relation holds over "
                    f"at least one role", field=f"relations[{i}]")
            if roles is not None:
                _unknown_role(atom, roles, f"relations[{i}]")
        return sorted(set(v), key=Atom.sort_key)

    @field_validator("causal_chain", mode="after")
    @classmethod
    def _chain_ok(cls, v: list[CausalEdge], info: ValidationInfo) -> list[CausalEdge]:
        roles = info.data.get("roles")
        seen: dict[tuple[Atom, str, Atom], int] = {}
        for i, e in enumerate(v):
            if roles is not None:
                _unknown_role(e.cause, roles, f"causal_chain[{i}].cause")
                _unknown_role(e.effect, roles, f"causal_chain[{i}].effect")
            key = (e.cause, e.edge, e.effect)
            if key in seen:
                raise SignatureError(
                    f"edge {e.cause.text()} {e.edge} {e.effect.text()} repeats "
                    f"causal_chain[{seen[key]}]", field=f"causal_chain[{i}]")
            seen[key] = i
        return v

    @field_serializer("relations")
    def _ser_relations(self, v: list[Atom]) -> list[list[str]]:
        return [a.to_list() for a in v]

    @field_serializer("causal_chain")
    def _ser_chain(self, v: list[CausalEdge]) -> list[dict[str, Any]]:
        return [e.to_data() for e in v]

    # -- views ----------------------------------------------------------------------------
    def atoms(self) -> Iterator[tuple[str, Atom]]:
        """Every atom with its field path: relations first, then causal-chain atoms."""
        for i, a in enumerate(self.relations):
            yield f"relations[{i}]", a
        for i, e in enumerate(self.causal_chain):
            yield f"causal_chain[{i}].cause", e.cause
            yield f"causal_chain[{i}].effect", e.effect

    def to_data(self) -> dict[str, Any]:
        """The canonical JSON-able form (see the module docstring)."""
        out: dict[str, Any] = {
            "episode_id": self.episode_id,
            "kind": self.kind,
            "roles": {k: self.roles[k] for k in sorted(self.roles)},
            "relations": [[a.predicate, *a.args] for a in self.relations],
            # CausalEdge.to_data, inline (bulk adds write thousands a second)
            "causal_chain": [{"cause": f"{c.predicate}({','.join(c.args)})", "edge": e.edge,
                              "effect": f"{f.predicate}({','.join(f.args)})", "sign": e.sign,
                              "status": e.status}
                             for e in self.causal_chain for c, f in ((e.cause, e.effect),)],
        }
        for f in ("violated_invariant", "symptom", "fix_operator"):
            val = getattr(self, f)
            if val is not None:
                out[f] = val
        levels = {k: v for k, v in self.levels.__dict__.items() if v is not None}
        if levels:
            out["levels"] = levels
        surface: dict[str, Any] = {}
        if self.surface.domain is not None:
            surface["domain"] = self.surface.domain
        if self.surface.entities:
            surface["entities"] = list(self.surface.entities)
        if surface:
            out["surface"] = surface
        prov = self.provenance
        if prov.time is not None:  # the model writes times in its own ISO form
            out["provenance"] = prov.model_dump(mode="json", exclude_none=True)
        else:
            sub = {k: v for k, v in prov.__dict__.items() if v is not None}
            if sub:
                out["provenance"] = sub
        out["verified"] = self.verified
        return out


# -- errors ------------------------------------------------------------------------------------
def _loc_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for x in loc:
        if isinstance(x, int):
            out += f"[{x}]"
        elif x == "[key]":
            out += " (key)"
        elif isinstance(x, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", x):
            out += f".{x}" if out else x
        else:
            out += f"[{x!r}]"
    return out


def _path_loc(path: str) -> list[str | int]:
    """Inverse of :func:`_loc_path` (roughly): ``causal_chain[1].cause`` → [..., 1, 'cause']."""
    loc: list[str | int] = []
    for name, idx, key in re.findall(r"([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\['([^']*)'\]", path):
        if name:
            loc.append(name)
        elif idx:
            loc.append(int(idx))
        else:
            loc.append(key)
    return loc


_EDGE_SLOTS = {"cause": 0, "edge": 1, "effect": 2}


def _line_of(text: str | None, path: str | None) -> int | None:
    """Best effort: the 1-based line where ``path`` sits in JSON/YAML ``text``."""
    if not text or not path:
        return None
    try:
        node: Any = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line = None
    for step in _path_loc(path):
        if node is None:
            break
        line = node.start_mark.line + 1
        nxt = None
        if isinstance(node, yaml.MappingNode) and isinstance(step, str):
            for k, val in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == step:
                    nxt = val
                    break
        elif isinstance(node, yaml.SequenceNode):
            if isinstance(step, str):  # an edge written [cause, edge, effect]
                step = _EDGE_SLOTS.get(step, -1)
            if 0 <= step < len(node.value):
                nxt = node.value[step]
        node = nxt
    if node is not None:
        line = node.start_mark.line + 1
    return line


def _from_validation(e: ValidationError, source: str | None, text: str | None) -> SignatureError:
    errs = e.errors()
    first = errs[0] if errs else {"loc": (), "msg": str(e)}
    field = _loc_path(tuple(first.get("loc", ()))) or None
    msg = str(first.get("msg", "invalid value"))
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    more = f" (and {len(errs) - 1} more problem(s))" if len(errs) > 1 else ""
    return SignatureError(f"{msg}{more}", source=source, line=_line_of(text, field), field=field)


# -- the fast path of validation ---------------------------------------------------------------
# Bulk adds validate thousands of records a second, and most are already in canonical shape. For
# those, _fast_signature checks every constraint of the model itself and builds the objects with
# model_construct; whenever anything is unusual (another type, a form it does not handle, a value
# the model would reject) it returns None and the model validates as before, so errors and their
# messages are the model's. tests/test_signature_fast.py holds the two paths equal.
_TAG_FULL = re.compile(_TAG_RE)
_TAGS_FULL = re.compile(rf"{_TAG_RE}(?:\n{_TAG_RE})*")
_PRED_FULL = re.compile(_PRED_RE)
_KIND_FULL = re.compile(r"[a-z][a-z0-9_]*")
_SIG_KEYS = frozenset(Signature.model_fields)
_EDGE_KEYS = frozenset(CausalEdge.model_fields)
_EDGE_SET = frozenset(EDGE_TYPES)
_TEXT_FIELDS = ("violated_invariant", "symptom", "fix_operator")
_SUB_MODELS: tuple[tuple[str, type[BaseModel]], ...] = (
    ("levels", Levels), ("surface", Surface), ("provenance", Provenance))
_ATOM_FIELDS = frozenset(("predicate", "args"))
_LIST_EDGE_FIELDS = frozenset(("cause", "edge", "effect"))


def _tag_ok(t: Any) -> bool:
    return type(t) is str and len(t) <= MAX_TAG and _TAG_FULL.fullmatch(t) is not None


_GOOD_PREDICATES: set[str] = set()
"""Predicate names already seen to match the model's pattern and length (exactly strs; a
bounded cache: a corpus has few predicates)."""

_CANON_ATOM = re.compile(rf"({_PRED_RE})\(([A-Za-z0-9_,\-]*)\)")


def _good_predicate(pred: str) -> bool:
    """Whether ``pred`` is a predicate name the model accepts (remembered in
    :data:`_GOOD_PREDICATES` when it is)."""
    if len(pred) > MAX_NAME or _PRED_FULL.fullmatch(pred) is None:
        return False
    if len(_GOOD_PREDICATES) < 1 << 16:
        _GOOD_PREDICATES.add(pred)
    return True


def _fast_key(x: Any, roles: dict[str, str]) -> tuple[str, tuple[str, ...]] | None:
    """(predicate, args) of an atom written as text or as a list, when the model would accept
    it unchanged and every argument is a declared role (so a valid tag); None otherwise."""
    if type(x) is str:
        m = _CANON_ATOM.fullmatch(x)  # pred(A,B) without spaces: what parse_atom splits alike
        if m is not None:
            pred, inner = m.groups()
            if len(pred) > MAX_NAME:
                return None
            if not inner:
                return pred, ()
            args = tuple(inner.split(","))  # exactly strs
            if len(args) > MAX_ARGS:
                return None
            for a in args:
                if a not in roles:
                    return None
            return pred, args
        try:
            pred, args = parse_atom(x)
        except ValueError:
            return None
    elif type(x) is list and x and type(x[0]) is str:
        pred, args = x[0], tuple(x[1:])
        if pred not in _GOOD_PREDICATES:
            if len(pred) > MAX_NAME or _PRED_FULL.fullmatch(pred) is None:
                return None
            if len(_GOOD_PREDICATES) < 1 << 16:
                _GOOD_PREDICATES.add(pred)
    else:
        return None
    if len(pred) > MAX_NAME or len(args) > MAX_ARGS:
        return None
    for a in args:  # exactly a str (a list item may be anything) naming a declared role
        if type(a) is not str or a not in roles:
            return None
    return pred, args


def _built(cls: type[BaseModel], values: dict[str, Any], fields: set[str]) -> Any:
    """What ``cls.model_construct(fields, **values)`` returns when ``values`` holds every field
    (the same four attributes, set without its per-call overhead)."""
    m = cls.__new__(cls)
    _set_dict(m, values)
    _set_fields(m, fields)
    _set_extra(m, None)
    _set_private(m, None)
    return m


# the setters of BaseModel's four slots, taken once: what object.__setattr__ would find and call
# for each of them (the models are frozen, so their own __setattr__ refuses), without the lookup
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _fast_atom(key: tuple[str, tuple[str, ...]], cache: dict[Any, Atom]) -> Atom:
    a = cache.get(key)
    if a is None:
        a = cache[key] = _built(Atom, {"predicate": key[0], "args": key[1]}, set(_ATOM_FIELDS))
    return a


_LEVEL_FIELDS = tuple(Levels.model_fields)
_LEVEL_KEYS = frozenset(_LEVEL_FIELDS)
_SURFACE_KEYS = frozenset(Surface.model_fields)
_PROV_FIELDS = tuple(Provenance.model_fields)
_PROV_KEYS = frozenset(_PROV_FIELDS)
_STATUSES = frozenset(("observed", "inferred"))
_Key = tuple[str, tuple[str, ...]]


class _Plain:
    """A valid signature as plain values (no model objects): what a bulk add stores and indexes
    of it, read straight from the record (:func:`_fast_plain`) or from a Signature
    (:func:`_plain_of`).

    ``relations``: the (predicate, args) of each relation, distinct and sorted (the model's
    order); ``nodes``: the distinct causal-chain atoms as (predicate, args), in order of first
    appearance (cause before effect), ``names`` their canonical texts; ``edges``: (cause
    node, effect node, edge type, sign) of each causal edge in chain order, ``meta`` its
    (status, the edge fields given); ``texts``: violated_invariant, symptom, fix_operator; ``levels`` / ``surface``: the given fields of
    each (all of them when read from a Signature); ``provenance``: its given fields, or the
    Provenance model itself when it holds a time (written in the model's own ISO form);
    ``given``: the top-level fields given."""

    __slots__ = ("episode_id", "kind", "roles", "relations", "nodes", "names", "edges", "meta",
                 "texts", "levels", "surface", "provenance", "verified", "given")

    def __init__(self, episode_id: str, kind: str, roles: dict[str, str],
                 relations: list[_Key], nodes: list[_Key], names: list[str],
                 edges: list[tuple[int, int, str, int]], meta: list[tuple[str, Any]],
                 texts: tuple[str | None, str | None, str | None], levels: dict[str, Any],
                 surface: dict[str, Any], provenance: dict[str, Any] | Provenance,
                 verified: bool, given: Any) -> None:
        self.episode_id = episode_id
        self.kind = kind
        self.roles = roles
        self.relations = relations
        self.nodes = nodes
        self.names = names
        self.edges = edges
        self.meta = meta
        self.texts = texts
        self.levels = levels
        self.surface = surface
        self.provenance = provenance
        self.verified = verified
        self.given = given

    def source_hash(self) -> str | None:
        p = self.provenance
        return p.source_hash if isinstance(p, Provenance) else p.get("source_hash")

    def surface_text(self) -> str:
        """The domain, entity names and L0 narrative joined (what ``surface_tokens`` reads)."""
        sf = self.surface
        return " ".join([sf.get("domain") or "", *(sf.get("entities") or ()),
                         self.levels.get("L0") or ""])


def _plain_end(x: Any, roles: dict[str, str], index: dict[_Key, int], nodes: list[_Key],
               names: list[str], memo: dict[str, int]) -> int | None:
    """The node of one end of a causal edge (a new one for an atom not seen before, its
    canonical text appended to ``names``), None when it needs the model; an end given as text
    is read once per signature (``memo``)."""
    if type(x) is str:
        i = memo.get(x)
        if i is not None:
            return i
        # pred(A,B) without spaces, every argument a declared role: its own canonical text
        # (what _CANON_ATOM matches, split without it: the roles are valid tags, so the text
        # between the brackets holds only tag characters and commas)
        pred, paren, rest = x.partition("(")
        args: tuple[str, ...] | None = None
        if paren and rest[-1:] == ")" and (pred in _GOOD_PREDICATES or _good_predicate(pred)):
            args = tuple(rest[:-1].split(",")) if len(rest) > 1 else ()
            if len(args) > MAX_ARGS:
                return None
            for a in args:
                if a not in roles:
                    args = None  # (spaces, or an undeclared role: read as _fast_key reads it)
                    break
        if args is not None:
            k = (pred, args)
            name = x
        else:
            got = _fast_key(x, roles)
            if got is None:
                return None
            k = got
            name = f"{k[0]}({','.join(k[1])})"
        i = index.get(k)
        if i is None:
            i = index[k] = len(nodes)
            nodes.append(k)
            names.append(name)
        memo[x] = i
        return i
    k = _fast_key(x, roles)
    if k is None:
        return None
    i = index.get(k)
    if i is None:
        i = index[k] = len(nodes)
        nodes.append(k)
        names.append(f"{k[0]}({','.join(k[1])})")
    return i


def _plain_chain(chain: list[Any], roles: dict[str, str], nodes: list[_Key], names: list[str],
                 edges: list[tuple[int, int, str, int]], meta: list[tuple[str, Any]]) -> bool:
    """Read the causal edges the model would build from ``chain`` into ``nodes``/``names``
    (the distinct atoms, first appearance first), ``edges`` (cause node, effect node, edge type,
    sign) and ``meta`` (status, the edge fields given); False to let the model decide (an edge
    it would normalise or refuse, or one that repeats an earlier edge)."""
    index: dict[_Key, int] = {}
    memo: dict[str, int] = {}  # an end given as text: read once per signature
    seen = set()
    for x in chain:
        if type(x) is dict:
            keys = x.keys()
            if keys == _EDGE_KEYS:  # every field given: the usual canonical form
                cause, edge, effect = x["cause"], x["edge"], x["effect"]
                sign: Any = x["sign"]
                status: Any = x["status"]
                fields: Any = _EDGE_KEYS
            elif keys <= _EDGE_KEYS and keys >= _LIST_EDGE_FIELDS:
                cause, edge, effect = x["cause"], x["edge"], x["effect"]
                sign = x.get("sign", 1)
                status = x.get("status", "observed")
                fields = frozenset(keys)
            else:
                return False
        elif type(x) is list:
            if len(x) != 3:
                return False
            cause, edge, effect = x
            sign = 1
            status = "observed"
            fields = _LIST_EDGE_FIELDS
        else:
            return False
        if type(edge) is not str:
            return False
        if edge not in _EDGE_SET:
            edge = edge.strip().lower()
            if edge not in _EDGE_SET:
                return False
        if type(sign) is str:
            sign = _SIGNS.get(sign.strip().lower())
        if type(sign) is not int or sign not in (1, -1):
            return False
        if type(status) is not str or status not in _STATUSES:
            return False
        # (an end already read as text: its node, without a call)
        i = memo.get(cause) if type(cause) is str else None
        if i is None:
            i = _plain_end(cause, roles, index, nodes, names, memo)
            if i is None:
                return False
        j = memo.get(effect) if type(effect) is str else None
        if j is None:
            j = _plain_end(effect, roles, index, nodes, names, memo)
            if j is None:
                return False
        key = (i, edge, j)  # the model's duplicate key: nodes are atoms one to one
        if key in seen:
            return False
        seen.add(key)
        edges.append((i, j, edge, sign))
        meta.append((status, fields))
    return True


def _text_ok(v: Any) -> bool:
    return v is None or (type(v) is str and len(v) <= MAX_TEXT)


def _fast_plain(data: dict[str, Any]) -> _Plain | None:
    """The signature the model would build from ``data`` as a :class:`_Plain`, or None to let
    the model decide (it then accepts or refuses the record, in its own words)."""
    if not data.keys() <= _SIG_KEYS:
        return None
    eid, kind, roles = data.get("episode_id"), data.get("kind"), data.get("roles")
    if type(eid) is not str or not 1 <= len(eid) <= MAX_NAME:
        return None
    if type(kind) is not str or len(kind) > MAX_NAME or _KIND_FULL.fullmatch(kind) is None:
        return None
    if type(roles) is not dict or not 1 <= len(roles) <= MAX_ROLES:
        return None
    for k, v in roles.items():  # (_tag_ok, inline; the patterns all at once below)
        if type(k) is not str or len(k) > MAX_TAG or type(v) is not str or len(v) > MAX_TEXT:
            return None
    if _TAGS_FULL.fullmatch("\n".join(roles)) is None:  # a tag holds no line break
        return None
    relations: list[_Key] = []
    if "relations" in data:
        rels = data["relations"]
        if type(rels) is not list or len(rels) > MAX_RELATIONS:
            return None
        keys = set()
        for r in rels:
            if type(r) is list and 1 < len(r) <= MAX_ARGS + 1 and type(r[0]) is str \
                    and r[0] in _GOOD_PREDICATES:
                # the usual [predicate, role, ...] (_fast_key, inline)
                args = tuple(r[1:])
                for a in args:
                    if type(a) is not str or a not in roles:
                        return None
                keys.add((r[0], args))
                continue
            k = _fast_key(r, roles)
            if k is None or not k[1]:
                return None
            keys.add(k)
        relations = sorted(keys)
    nodes: list[_Key] = []
    names: list[str] = []
    edges: list[tuple[int, int, str, int]] = []
    meta: list[tuple[str, Any]] = []
    if "causal_chain" in data:
        chain = data["causal_chain"]
        if type(chain) is not list or len(chain) > MAX_EDGES \
                or not _plain_chain(chain, roles, nodes, names, edges, meta):
            return None
    texts = (data.get("violated_invariant"), data.get("symptom"), data.get("fix_operator"))
    for v in texts:  # (_text_ok, inline)
        if v is not None and (type(v) is not str or len(v) > MAX_TEXT):
            return None
    levels: dict[str, Any] = {}
    if "levels" in data:
        v = data["levels"]
        if type(v) is not dict or not v.keys() <= _LEVEL_KEYS:
            return None
        for x in v.values():
            if x is not None and (type(x) is not str or len(x) > MAX_TEXT):
                return None
        levels = dict(v)
    surface: dict[str, Any] = {}
    if "surface" in data:
        v = data["surface"]
        if type(v) is not dict or not v.keys() <= _SURFACE_KEYS:
            return None
        if "domain" in v:
            if not _text_ok(v["domain"]):
                return None
            surface["domain"] = v["domain"]
        if "entities" in v:
            ents = v["entities"]
            if type(ents) is not list or len(ents) > MAX_SURFACE_ENTITIES:
                return None
            for x in ents:
                if type(x) is not str or len(x) > MAX_TEXT:
                    return None
            surface["entities"] = list(ents)
    provenance: dict[str, Any] | Provenance = {}
    if "provenance" in data:
        v = data["provenance"]
        if type(v) is not dict or not v.keys() <= _PROV_KEYS:
            return None
        if v.get("time") is not None:  # a time is the model's to read
            try:
                provenance = Provenance.model_validate(v)
            except ValidationError:
                return None
        else:
            for k, x in v.items():
                if x is not None and k != "time" and (type(x) is not str
                                                      or not 1 <= len(x) <= MAX_NAME):
                    return None
            provenance = dict(v)
    verified = data.get("verified", False)
    if type(verified) is not bool:
        return None
    return _Plain(eid, kind, dict(roles), relations, nodes, names, edges, meta, texts, levels,
                  surface, provenance, verified, set(data))


def _fast_signature(data: dict[str, Any]) -> Signature | None:
    """The Signature the model would build from ``data``, or None to let the model decide."""
    p = _fast_plain(data)
    return None if p is None else _signature_of(p)


def _signature_of(p: _Plain) -> Signature:
    """The Signature a :class:`_Plain` read by :func:`_fast_plain` stands for: the objects the
    model builds, made directly."""
    cache: dict[Any, Atom] = {}
    atoms = [_fast_atom(k, cache) for k in p.nodes]
    chain = [_built(CausalEdge, {"cause": atoms[i], "edge": t, "effect": atoms[j], "sign": s,
                                 "status": status}, set(fields))
             for (i, j, t, s), (status, fields) in zip(p.edges, p.meta, strict=True)]
    lv, sf, pv = p.levels, p.surface, p.provenance
    surface = _built(Surface, {"domain": sf.get("domain"),
                               "entities": list(sf.get("entities", ()))}, set(sf))
    values = {"episode_id": p.episode_id, "kind": p.kind, "roles": p.roles,
              "relations": [_fast_atom(k, cache) for k in p.relations], "causal_chain": chain,
              "violated_invariant": p.texts[0], "symptom": p.texts[1],
              "fix_operator": p.texts[2],
              "levels": _built(Levels, {k: lv.get(k) for k in _LEVEL_FIELDS}, set(lv)),
              "surface": surface,
              "provenance": pv if isinstance(pv, Provenance) else _built(
                  Provenance, {k: pv.get(k) for k in _PROV_FIELDS}, set(pv)),
              "verified": p.verified}
    return _built(Signature, {k: values[k] for k in _SIG_ORDER}, p.given)


def _plain_of(sig: Signature) -> _Plain:
    """The :class:`_Plain` of a Signature (its causal atoms numbered as :func:`_fast_plain`
    numbers them)."""
    index: dict[_Key, int] = {}
    nodes: list[_Key] = []
    edges: list[tuple[int, int, str, int]] = []
    meta: list[tuple[str, Any]] = []
    for e in sig.causal_chain:
        ends = []
        for a in (e.cause, e.effect):
            k = (a.predicate, a.args)
            i = index.get(k)
            if i is None:
                i = index[k] = len(nodes)
                nodes.append(k)
            ends.append(i)
        edges.append((ends[0], ends[1], e.edge, e.sign))
        meta.append((e.status, e.model_fields_set))
    pv = sig.provenance
    return _Plain(sig.episode_id, sig.kind, sig.roles,
                  [(a.predicate, a.args) for a in sig.relations], nodes,
                  [f"{q}({','.join(a)})" for q, a in nodes], edges, meta,
                  (sig.violated_invariant, sig.symptom, sig.fix_operator), sig.levels.__dict__,
                  {"domain": sig.surface.domain, "entities": sig.surface.entities},
                  pv if pv.time is not None else pv.__dict__, sig.verified,
                  sig.model_fields_set)


def _empty(model: type[BaseModel]) -> dict[str, Any]:
    """The field values of ``model()`` (every field of Levels, Surface and Provenance defaults to
    None, but the surface's entities to a new empty list)."""
    fields = _SUB_FIELDS.get(model)
    if fields is None:
        fields = tuple(model.model_fields)
    values = dict.fromkeys(fields)
    if "entities" in values:
        values["entities"] = []
    return values


_SUB_FIELDS = {model: tuple(model.model_fields) for _name, model in _SUB_MODELS}
"""The field names of each sub-model, in order (read once, not per signature)."""


_SIG_ORDER = tuple(Signature.model_fields)


def validate_signature(data: Any, *, source: str | None = None,
                       text: str | None = None) -> Signature:
    """Validate parsed data into a Signature; errors are :class:`SignatureError` naming the field
    (and the file and line when ``source``/``text`` are given)."""
    _check_mapping(data, source, text)
    sig = _fast_signature(data)
    if sig is not None:
        return sig
    return _model_signature(data, source, text)


def _validate_plain(data: Any, *, source: str | None = None,
                    text: str | None = None) -> _Plain:
    """:func:`validate_signature`'s checks and errors, giving the signature as plain values
    (no model objects built when the fast path reads the record): for a bulk add that stores
    what it checked (``Memory.add_many(..., validated=True)``)."""
    _check_mapping(data, source, text)
    p = _fast_plain(data)
    return p if p is not None else _plain_of(_model_signature(data, source, text))


def _check_mapping(data: Any, source: str | None, text: str | None) -> None:
    if not isinstance(data, dict):
        raise SignatureError(
            f"expected a mapping (object) at the top level, got {type(data).__name__}",
            source=source, line=1 if text is not None else None)


def _model_signature(data: dict[str, Any], source: str | None = None,
                     text: str | None = None) -> Signature:
    """``data`` validated by the model (what :func:`validate_signature` does when the fast path
    steps aside), errors worded as there."""
    try:
        return Signature.model_validate(data)
    except ValidationError as e:
        raise _from_validation(e, source, text) from None
    except SignatureError as e:
        raise SignatureError(e.message, source=source, field=e.field,
                             line=e.line if e.line is not None else _line_of(text, e.field)
                             ) from None


# -- load / dump -------------------------------------------------------------------------------
def loads_signature(text: str, fmt: Literal["json", "yaml"] = "json", *,
                    source: str | None = None) -> Signature:
    """Parse a Signature from JSON or YAML text."""
    if fmt not in ("json", "yaml"):
        raise SignatureError(f"unknown format {fmt!r}; expected 'json' or 'yaml'", source=source)
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > MAX_FILE_BYTES:
        raise InputTooLargeError(
            f"text is {size} bytes, over the limit of {MAX_FILE_BYTES} bytes", source=source)
    data = parse_structured(text, source=source, fmt=fmt)
    return validate_signature(data, source=source, text=text)


def load_signature(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> Signature:
    """Load a Signature from a ``.json``, ``.yaml`` or ``.yml`` file."""
    p = Path(path)
    text = read_text(p, max_bytes=max_bytes)
    fmt: Literal["json", "yaml"] = "yaml" if p.suffix.lower() in (".yaml", ".yml") else "json"
    data = parse_structured(text, source=str(p), fmt=fmt)
    return validate_signature(data, source=str(p), text=text)


def _is_scalar(x: Any) -> bool:
    return x is None or isinstance(x, (str, int, float, bool))


def _json_pretty(obj: Any, level: int) -> str:
    """JSON with two-space indentation; lists of scalars stay on one line."""
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_json_pretty(v, level + 1)}"
                 for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        if all(_is_scalar(x) for x in obj):
            return json.dumps(obj, ensure_ascii=False)
        return ("[\n" + ",\n".join(inner + _json_pretty(x, level + 1) for x in obj) + "\n"
                + pad + "]")
    return json.dumps(obj, ensure_ascii=False)


class _YamlDumper(yaml.SafeDumper):
    """Block style, except that lists of scalars are written in flow style ``[a, b]``."""


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data,
                                     flow_style=all(_is_scalar(x) for x in data))


_YAML_BREAKS = frozenset("\x85\u2028\u2029\ufeff\r")


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    # PyYAML writes NEL and the Unicode line/paragraph separators raw in plain and single-quoted
    # scalars, and reads them back as line breaks; double quotes escape them.
    style = '"' if any(c in _YAML_BREAKS for c in data) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_YamlDumper.add_representer(list, _represent_list)
_YamlDumper.add_representer(str, _represent_str)


def dump_signature(sig: Signature, fmt: Literal["json", "yaml"] = "json") -> str:
    """The canonical text of ``sig`` (deterministic; see the module docstring)."""
    data = sig.to_data()
    if fmt == "json":
        return _json_pretty(data, 0) + "\n"
    if fmt == "yaml":
        return yaml.dump(data, Dumper=_YamlDumper, sort_keys=False, allow_unicode=True,
                         width=100)
    raise SignatureError(f"unknown format {fmt!r}; expected 'json' or 'yaml'")


def signature_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of every accepted input shape of a Signature."""
    schema = Signature.model_json_schema(mode="validation")
    defs = schema.setdefault("$defs", {})
    atom_obj = defs["Atom"]
    atom_obj["additionalProperties"] = False
    tag = {"type": "string", "pattern": TAG_PATTERN, "maxLength": MAX_TAG}
    defs["Atom"] = {
        "title": "Atom",
        "description": "pred(ROLE, ...) as a string, a [predicate, role, ...] list, or an object",
        "anyOf": [
            {"type": "string", "pattern": ATOM_PATTERN, "maxLength": MAX_TEXT},
            {"type": "array", "minItems": 1, "maxItems": MAX_ARGS + 1,
             "prefixItems": [{"type": "string", "pattern": PRED_PATTERN,
                              "maxLength": MAX_NAME}],
             "items": tag},
            atom_obj,
        ],
    }
    edge_obj = defs["CausalEdge"]
    edge_obj["additionalProperties"] = False
    edge_obj["properties"]["sign"] = {
        "title": "Sign", "default": 1,
        "description": "+1 (positive, default) or -1; also written '+', '-', 'positive', …",
        "anyOf": [{"type": "integer", "enum": [1, -1]},
                  {"type": "string", "enum": sorted(_SIGNS)}],
    }
    defs["CausalEdge"] = {
        "title": "CausalEdge",
        "description": "[cause, edge, effect] (sign +1, observed) or an object",
        "anyOf": [
            {"type": "array", "minItems": 3, "maxItems": 3,
             "prefixItems": [{"$ref": "#/$defs/Atom"}, {"enum": list(EDGE_TYPES)},
                             {"$ref": "#/$defs/Atom"}],
             "items": False},
            edge_obj,
        ],
    }
    for name in ("Levels", "Surface", "Provenance"):
        defs[name]["additionalProperties"] = False
    schema["additionalProperties"] = False
    roles = schema["properties"]["roles"]
    roles["additionalProperties"] = False
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


# -- vocabulary --------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _bundled_vocabulary() -> Vocabulary:
    """The parsed bundled vocabulary; private and never handed out (callers get copies)."""
    text = (resources.files("analogist") / "data" / "signature_vocab.yaml").read_text(
        encoding="utf-8")
    # our own file: parsed by libyaml when PyYAML has it (every start of a command that reads
    # the store pays for this parse; the pure-Python parser takes ten times as long)
    loader = getattr(yaml, "CSafeLoader", None)
    data = yaml.load(text, Loader=loader) if loader is not None else parse_structured(
        text, source="signature_vocab.yaml", fmt="yaml")
    return Vocabulary.from_data(data, source="analogist:data/signature_vocab.yaml")


def default_signature_vocabulary() -> Vocabulary:
    """A fresh copy of the bundled signature vocabulary (``analogist/data/signature_vocab.yaml``):
    relations over roles, the causal edge types and state attributes, each with a definition.
    The file is parsed once per process; each call returns an independent copy."""
    return _bundled_vocabulary().model_copy(deep=True)


_Use = tuple[int, str | None]
"""Where a predicate is used: (relation index, None) or (causal edge index, "cause" / "edge" /
"effect"); :func:`_use_field` writes it as a field path."""


def _use_field(where: _Use) -> str:
    i, slot = where
    return f"relations[{i}]" if slot is None else f"causal_chain[{i}].{slot}"


def _uses(sig: Signature | _Plain) -> Iterator[tuple[_Use, str, int]]:
    """(where, functor, effective arity) of every predicate use, edges included (``where``:
    see :data:`_Use`; the field path is written only for an error).

    A zero-argument atom counts as arity 1 (it compiles onto :data:`EPISODE_ENTITY`)."""
    if isinstance(sig, _Plain):
        for i, (pred, args) in enumerate(sig.relations):
            yield (i, None), pred, len(args)
        nodes = sig.nodes
        for i, (c, f, edge, _sign) in enumerate(sig.edges):
            yield (i, "cause"), nodes[c][0], max(len(nodes[c][1]), 1)
            yield (i, "edge"), edge, 2
            yield (i, "effect"), nodes[f][0], max(len(nodes[f][1]), 1)
        return
    for i, a in enumerate(sig.relations):
        yield (i, None), a.predicate, len(a.args)
    for i, e in enumerate(sig.causal_chain):
        yield (i, "cause"), e.cause.predicate, max(len(e.cause.args), 1)
        yield (i, "edge"), e.edge, 2
        yield (i, "effect"), e.effect.predicate, max(len(e.effect.args), 1)


def check_vocabulary(sig: Signature | _Plain, vocab: Vocabulary, strict: bool = False
                     ) -> list[Predicate]:
    """Check every predicate ``sig`` uses against ``vocab`` (a Signature, or the plain values
    of one from ``_validate_plain``).

    A name not in ``vocab`` (relations, causal-chain atoms and edge types) is an error in strict
    mode (:class:`VocabularyError` naming the field); otherwise it is recorded in ``vocab`` as a
    *proposed* relation with :meth:`Vocabulary.propose`, which warns with
    :class:`ProposedTermWarning`. A wrong arity is always an error. Nothing is recorded unless
    every use checks out. Returns the predicates newly proposed.
    """
    pending: dict[str, int] = {}
    known = vocab.predicates  # (a name, looked up first; synonyms through vocab.get)
    for where, name, n in _uses(sig):
        p = known.get(name)
        if p is None:
            p = vocab.get(name)
        if p is None:
            if strict:
                raise VocabularyError(
                    f"relation {name!r} is not in vocabulary {vocab.name!r}",
                    field=_use_field(where))
            want = pending.setdefault(name, n)
            if want != n:
                raise VocabularyError(
                    f"proposed relation {name!r} used with {n} argument(s) here and "
                    f"{want} elsewhere", field=_use_field(where))
        elif not p.accepts_arity(n):
            want_s = f"at least {max(p.arity - 1, 1)}" if p.n_ary else str(p.arity)
            raise VocabularyError(
                f"wrong arity for {p.name!r}: expected {want_s} argument(s), got {n}",
                field=_use_field(where))
    return [vocab.propose(name, n) for name, n in pending.items()]


# -- compilation -------------------------------------------------------------------------------
def _form(atom: Atom) -> list[str]:
    return [atom.predicate, *(atom.args or (EPISODE_ENTITY,))]


def compile_signature(sig: Signature, vocab: Vocabulary | None = None,
                      strict: bool = False) -> Description:
    """Compile ``sig`` into a :class:`Description` (deterministic; see the module docstring).

    Args:
        sig: the signature.
        vocab: the vocabulary to resolve predicates in; the bundled
            :func:`default_signature_vocabulary` when None. Never modified.
        strict: when True an unknown predicate is a :class:`VocabularyError`; otherwise it is
            accepted as a proposed term (with a :class:`ProposedTermWarning`).
    """
    if vocab is None:
        work = default_signature_vocabulary()
    elif any(vocab.get(name) is None for _f, name, _n in _uses(sig)):
        if strict:
            check_vocabulary(sig, vocab, strict=True)
        work = vocab.model_copy(deep=True)
    else:
        work = vocab
    check_vocabulary(sig, work, strict=strict)

    entities = sorted(sig.roles)
    zero_ary = any(not a.args for e in sig.causal_chain for a in e.atoms())
    if zero_ary:
        entities.append(EPISODE_ENTITY)

    def expr(atom: Atom) -> Expr:
        return Expr(work.canonical(atom.predicate), _form(atom)[1:])

    forms: list[list[Any]] = [_form(a) for a in sig.relations]
    edges: dict[str, dict[str, Any]] = {}
    for i, e in enumerate(sig.causal_chain):
        forms.append([e.edge, _form(e.cause), _form(e.effect)])
        key = Expr(work.canonical(e.edge), (expr(e.cause), expr(e.effect))).sexpr()
        info = {"edge": work.canonical(e.edge), "sign": e.sign, "status": e.status}
        if key in edges and edges[key] != info:
            raise SignatureError(
                f"edge {key} appears twice (through synonyms) with different sign or status",
                field=f"causal_chain[{i}]")
        edges[key] = info

    metadata: dict[str, Any] = {
        "episode_id": sig.episode_id,
        "kind": sig.kind,
        "roles": {k: sig.roles[k] for k in sorted(sig.roles)},
        "edges": edges,
        "synthetic_entities": [EPISODE_ENTITY] if zero_ary else [],
    }
    return Description.build(sig.episode_id, forms, work, entities=entities, strict=True,
                             metadata=metadata)
