"""Readers for the reference SME's file formats: ``.vcb`` vocabularies and ``.dgr`` descriptions.

Supported forms (``sme:`` or ``sme::`` package prefixes, or none):

* ``(in-package ...)`` — ignored.
* ``(defpredicate NAME (ARG ...) KIND [:n-ary? t] [:commutative? t] [:symmetric? t]
  [:expression-type TYPE] [:documentation "..."] ...)`` with KIND one of relation, function,
  attribute, logical, taxonomy. An argument is a symbol or ``(role type)``.
* ``(defubiquitous-predicate NAME)`` — marks a predicate ubiquitous (never matched locally).
* ``(defentity NAME [:type TYPE])`` — a declared entity constant.
* ``(defsmetype ...)`` — type declarations; recorded nowhere (the reference ignores them too).
* ``(defdescription NAME entities (E ...) expressions (((EXPR) :name N) ...))`` — expressions may
  refer to other ones by name. A name means its latest definition before the reference (the
  reference reads names in order and lets a later definition shadow an earlier one); a name used
  before any definition is a forward reference to its first definition. Cycles are errors.
* ``(defdescription NAME (EXPR) (EXPR) ...)`` — bare expressions, no entity list.
* ``(defdescription "name" :documentation "..." :notes "..." :expressions ((EXPR) ...))`` — no
  entity list: a symbol argument that is not a declared functor or a named expression is an entity.

``.dgr`` files are always read in strict vocabulary mode: an undeclared functor or a wrong arity is
an error naming the file and line. Any other top-level form is an error too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analogist.description import Description
from analogist.errors import ParseError, VocabularyError
from analogist.io import MAX_FILE_BYTES, read_text
from analogist.sexpr import LispString, SList, parse
from analogist.vocabulary import Predicate, PredicateKind, Vocabulary

_KINDS = {k.value: k for k in PredicateKind}


def _head(form: Any) -> str | None:
    if isinstance(form, list) and form and isinstance(form[0], str) and not isinstance(
            form[0], LispString):
        h = form[0]
        return h.split(":")[-1] if ":" in h else h
    return None


def _keywords(items: list[Any], *, source: str, line: int | None) -> dict[str, Any]:
    if len(items) % 2:
        raise ParseError(f"keyword arguments must come in pairs, got {len(items)} items",
                         source=source, line=line)
    out: dict[str, Any] = {}
    for k, v in zip(items[::2], items[1::2], strict=True):
        if not (isinstance(k, str) and k.startswith(":")):
            raise ParseError(f"expected a :keyword, got {k!r}", source=source, line=line)
        out[k[1:]] = v
    return out


def _truthy(v: Any) -> bool:
    return v not in (None, "nil", False, 0)


def read_vcb_text(text: str, *, source: str = "<vcb>", name: str | None = None) -> Vocabulary:
    """Parse ``.vcb`` text into a :class:`Vocabulary` (all predicates *declared*)."""
    vocab = Vocabulary(name=name or Path(source).stem, source=source)
    ubiquitous: list[tuple[str, int | None]] = []
    for form in parse(text, source=source):
        line = getattr(form, "line", None)
        h = _head(form)
        if h == "in-package" or h == "defsmetype":
            continue
        if h == "defpredicate":
            if len(form) < 4:
                raise ParseError("defpredicate needs NAME (ARGS...) KIND", source=source,
                                 line=line)
            pname, args, kind = form[1], form[2], form[3]
            if not isinstance(pname, str) or isinstance(pname, LispString):
                raise ParseError(f"predicate name must be a symbol, got {pname!r}",
                                 source=source, line=line)
            if not isinstance(args, list):
                raise ParseError(f"argument list of {pname!r} must be a list", source=source,
                                 line=line)
            if kind not in _KINDS:
                raise VocabularyError(
                    f"unknown predicate kind {kind!r} for {pname!r}; expected one of "
                    f"{', '.join(_KINDS)}", source=source, line=line)
            kw = _keywords(list(form[4:]), source=source, line=line)
            arg_names = []
            for a in args:
                if isinstance(a, list) and a:
                    arg_names.append(str(a[0]))
                elif isinstance(a, str):
                    arg_names.append(a)
                else:
                    raise ParseError(f"bad argument spec {a!r} in {pname!r}", source=source,
                                     line=line)
            n_ary = _truthy(kw.get("n-ary?"))
            commutative = _truthy(kw.get("commutative?"))
            et = kw.get("expression-type")
            doc = kw.get("documentation")
            vocab.declare(Predicate(
                name=pname, kind=_KINDS[kind], arity=len(args), arg_names=tuple(arg_names),
                n_ary=n_ary, commutative=commutative, symmetric=_truthy(kw.get("symmetric?")),
                expression_type=str(et) if et is not None else None,
                definition=str(doc) if doc is not None else "",
            ), source=source, line=line)
        elif h == "defubiquitous-predicate":
            if len(form) != 2:
                raise ParseError("defubiquitous-predicate takes one name", source=source,
                                 line=line)
            ubiquitous.append((str(form[1]), line))
        elif h == "defentity":
            if len(form) < 2 or not isinstance(form[1], str):
                raise ParseError("defentity needs a name", source=source, line=line)
            kw = _keywords(list(form[2:]), source=source, line=line)
            t = kw.get("type")
            vocab.entities[str(form[1])] = str(t) if t is not None else None
        else:
            raise ParseError(f"unknown form {_describe(form)} in vocabulary file; expected "
                             "defpredicate, defentity, defubiquitous-predicate or in-package",
                             source=source, line=line)
    for pname, line in ubiquitous:
        p = vocab.get(pname)
        if p is None:
            raise VocabularyError(f"defubiquitous-predicate names undeclared {pname!r}",
                                  source=source, line=line)
        vocab.predicates[p.name] = p.model_copy(update={"ubiquitous": True})
    return vocab


def read_vcb(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> Vocabulary:
    return read_vcb_text(read_text(path, max_bytes=max_bytes), source=str(path))


def _describe(form: Any) -> str:
    h = form[0] if isinstance(form, list) and form else form
    return repr(h if not isinstance(h, list) else "(...)")


def read_dgr_text(text: str, vocabulary: Vocabulary, *, source: str = "<dgr>",
                  ) -> list[Description]:
    """Parse ``.dgr`` text into descriptions (strict vocabulary)."""
    vocab = vocabulary.model_copy(deep=True)
    out: list[Description] = []
    for form in parse(text, source=source):
        line = getattr(form, "line", None)
        h = _head(form)
        if h in ("in-package", "defsmetype"):
            continue
        if h == "defentity":
            if len(form) < 2 or not isinstance(form[1], str):
                raise ParseError("defentity needs a name", source=source, line=line)
            kw = _keywords(list(form[2:]), source=source, line=line)
            t = kw.get("type")
            vocab.entities[str(form[1])] = str(t) if t is not None else None
            continue
        if h == "defpredicate":
            raise ParseError("defpredicate belongs in the vocabulary (.vcb) file", source=source,
                             line=line)
        if h != "defdescription":
            raise ParseError(f"unknown form {_describe(form)} in description file; expected "
                             "defdescription, defentity or in-package", source=source, line=line)
        out.append(_read_description(form, vocab, source=source))
    if not out:
        raise ParseError("no defdescription form found", source=source, line=1)
    return out


def _read_description(form: SList, vocab: Vocabulary, *, source: str) -> Description:
    line = form.line
    if len(form) < 2:
        raise ParseError("defdescription needs a name", source=source, line=line)
    name = str(form[1])
    rest = list(form[2:])
    entities: list[str] | None = None
    exprs: list[Any] | None = None
    documentation = ""
    if rest and isinstance(rest[0], str) and rest[0].startswith(":") and not isinstance(
            rest[0], LispString):
        kw = _keywords(rest, source=source, line=line)
        documentation = str(kw.get("documentation", "") or "")
        if "entities" in kw:
            entities = _symbol_list(kw["entities"], "entities", source)
        exprs = kw.get("expressions")
        unknown = set(kw) - {"documentation", "notes", "expressions", "entities"}
        if unknown:
            raise ParseError(f"unknown defdescription keyword(s) {sorted(unknown)}",
                             source=source, line=line)
    elif rest and all(isinstance(x, list) for x in rest):
        exprs = rest  # (defdescription NAME (expr) (expr) ...)
    else:
        i = 0
        while i < len(rest):
            key = rest[i]
            if i + 1 >= len(rest):
                raise ParseError(f"defdescription: {key!r} has no value", source=source,
                                 line=line)
            val = rest[i + 1]
            k = str(key).lstrip(":")
            if k == "entities":
                entities = _symbol_list(val, "entities", source)
            elif k == "expressions":
                exprs = val
            elif k in ("documentation", "notes"):
                if k == "documentation":
                    documentation = str(val)
            else:
                raise ParseError(f"unknown defdescription part {key!r}; expected entities, "
                                 "expressions, documentation or notes", source=source,
                                 line=getattr(val, "line", line))
            i += 2
    if exprs is None:
        raise ParseError(f"defdescription {name!r} has no expressions", source=source, line=line)
    if not isinstance(exprs, list):
        raise ParseError("expressions must be a list", source=source, line=line)
    items: list[Any] = []
    lines: list[int | None] = []
    for e in exprs:
        eline = getattr(e, "line", line)
        if not isinstance(e, list) or not e:
            raise ParseError(f"expected an expression, got {e!r}", source=source, line=eline)
        if isinstance(e[0], list):
            # ((expr) :name n) form
            kw = _keywords(list(e[1:]), source=source, line=eline)
            nm = kw.get("name")
            items.append((_plain(e[0]), str(nm) if nm is not None else None))
        else:
            items.append((_plain(e), None))
        lines.append(eline)
    return Description.build(name, items, vocab, entities=entities, strict=True, source=source,
                             lines=lines, documentation=documentation)


def _plain(form: Any) -> Any:
    if isinstance(form, list):
        return [_plain(x) for x in form]
    if isinstance(form, LispString):
        return str(form)
    return form


def _symbol_list(val: Any, what: str, source: str) -> list[str]:
    if not isinstance(val, list) or not all(isinstance(x, str) for x in val):
        raise ParseError(f"{what} must be a list of symbols", source=source,
                         line=getattr(val, "line", None))
    return [str(x) for x in val]


def read_dgr(path: str | Path, vocabulary: Vocabulary, *,
             max_bytes: int = MAX_FILE_BYTES) -> Description:
    """Read the (first) description in a ``.dgr`` file."""
    return read_dgr_text(read_text(path, max_bytes=max_bytes), vocabulary, source=str(path))[0]
