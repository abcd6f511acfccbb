"""The mapping viewer's FastAPI router: the page, its static files and its JSON.

Routes (all under ``/viewer``):

* ``GET /viewer`` — the page (``static/index.html``); ``GET /viewer/static/{name}`` its script
  and style sheet (served from the package; nothing from the network). Neither holds data, so
  neither needs the guard: a plain browser visit gets the page, which signs in when the server
  offers ``/viewer/session`` (:mod:`analogist.server`) and reads only through the API below;
* ``GET /viewer/api/casebook[?namespace=NS]`` — the episodes the page can map: the store's
  episodes in ``NS`` when the router has a store, else the bundled casebook;
* ``GET /viewer/api/map?source=ID&target=ID[&namespace=NS]`` — :func:`map_payload`;
* ``GET /viewer/api/events`` — the corpus events a foresight brief can be run on;
* ``GET /viewer/api/brief?event=ID`` — :func:`brief_payload` (chart as base64);
* ``GET /viewer/api/brief.png?event=ID`` — the coverage chart alone.

Namespaces: with ``namespace_guard`` (a FastAPI dependency returning the set of namespaces the
caller may read) every route depends on it, so its authentication runs first; a store read in a
namespace outside that set is refused with 403 before the store is opened. Without a store the
routes read only bundled data (casebook, historical corpus), which belongs to no namespace.
"""

from __future__ import annotations

import base64
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection
from contextlib import contextmanager
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Query
from fastapi.responses import HTMLResponse, Response

from analogist.casebook import casebook_vocabulary, load_casebook
from analogist.errors import AnalogistError
from analogist.foresight.evaluate import eval_targets
from analogist.foresight.event import load_corpus
from analogist.memory import open_memory
from analogist.signature import Signature
from analogist.viewer.payload import brief_payload, map_payload, signature_gist

__all__ = ["viewer_router"]

_STATIC = {"viewer.js": "text/javascript; charset=utf-8",
           "viewer.css": "text/css; charset=utf-8"}


class ViewerError(HTTPException):
    """An HTTP error of the viewer naming the query parameter (``field``) it is about; the
    server renders it in its one error shape, a bare app as ``{"detail": message}``."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(status, message)
        self.field = field


def _id() -> Any:
    return Query(..., min_length=1, max_length=200)


def _ns() -> Any:
    return Query("default", min_length=1, max_length=100)

BRIEF_CACHE_SIZE = 16

# the page runs only its own script and style, is never framed, and sends no referrer
_PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                               "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
}


def _static(name: str) -> str:
    return (resources.files("analogist.viewer") / "static" / name).read_text(encoding="utf-8")


def _no_guard() -> None:
    return None


@lru_cache(maxsize=1)
def _casebook() -> dict[str, Any]:
    entries = {e.id: e for e in load_casebook()}
    return {"entries": entries, "vocab": casebook_vocabulary()}


@lru_cache(maxsize=1)
def _corpus() -> Any:
    return load_corpus()


StoreSpec = str | Path | Callable[[], Any] | None


def viewer_router(store_path: StoreSpec = None, *,
                  namespace_guard: Callable[..., Collection[str] | None] | None = None
                  ) -> APIRouter:
    """Build the viewer's router.

    Args:
        store_path: a SQLite store file (opened read-side per request, never created), or a
            zero-argument callable returning an open :class:`~analogist.memory.sqlite.Memory`
            (closed after the request); None maps the bundled casebook.
        namespace_guard: a FastAPI dependency returning the namespaces the caller may read
            (None from it means unrestricted); None: no restriction.

    In named steps, in the order the routes are registered: the page and its files
    (:func:`_add_page_routes`), the episodes and their mapping (:func:`_add_store_routes`, over
    the store readers of :func:`_store_readers`) and the foresight briefs
    (:func:`_add_brief_routes`).
    """
    guard = namespace_guard or _no_guard
    router = APIRouter(prefix="/viewer", tags=["viewer"])
    _add_page_routes(router)
    _add_store_routes(router, store_path, guard)
    _add_brief_routes(router, guard)
    return router


def _add_page_routes(router: APIRouter) -> None:
    """``GET /viewer`` (the page) and ``GET /viewer/static/{name}`` (its script and style)."""
    # the page and its files hold no data, so a plain visit gets them (and the sign-in form);
    # everything under /viewer/api goes through the guard
    @router.get("", response_class=HTMLResponse, include_in_schema=False)
    def page() -> HTMLResponse:
        return HTMLResponse(_static("index.html"), headers=_PAGE_HEADERS)

    @router.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        if name not in _STATIC:
            raise ViewerError(404, f"no static file {name[:100]!r}; expected one of "
                                   f"{', '.join(sorted(_STATIC))}", "name")
        return Response(_static(name), media_type=_STATIC[name])



_Lookup = Callable[[list[tuple[str, str]], str, Any], tuple[list[Signature], Any]]


def _store_readers(store_path: StoreSpec
                   ) -> tuple[Callable[[str, Any], None], Callable[[], Any], _Lookup]:
    """The three readers of the episode routes: ``check_ns`` (refuses a namespace outside the
    caller's with 403), ``opened`` (the store for one request, closed after it; 503 when it
    cannot be opened) and ``lookup`` (signatures by id, from the store or the bundled
    casebook; 404 naming the query parameter)."""
    def check_ns(namespace: str, allowed: Any) -> None:
        if allowed is not None and namespace not in set(allowed):
            raise ViewerError(403, f"namespace {namespace[:100]!r} is not permitted for this "
                              "caller", "namespace")

    @contextmanager
    def opened() -> Any:
        if callable(store_path):
            mem = store_path()
        else:
            p = Path(str(store_path))
            server = "://" in str(store_path)  # a PostgreSQL store: a URL, not a file
            if not server and not p.is_file():
                raise ViewerError(503, f"store file not found: {p}")
            try:
                mem = open_memory(str(store_path) if server else p)
            except AnalogistError as e:
                raise ViewerError(503, str(e)) from None
        try:
            yield mem
        finally:
            mem.close()

    def lookup(ids: list[tuple[str, str]], namespace: str, allowed: Any
               ) -> tuple[list[Signature], Any]:
        """The signatures for (field, id) pairs, and the vocabulary to compile them in."""
        cb = _casebook()
        if store_path is None:
            out = []
            for field, i in ids:
                e = cb["entries"].get(i)
                if e is None:
                    raise ViewerError(404, f"{field}: no episode {i!r} in the bundled casebook",
                                      field)
                out.append(e.signature)
            return out, cb["vocab"]
        check_ns(namespace, allowed)
        out = []
        with opened() as mem:
            for field, i in ids:
                row = mem.get(i, namespace)
                if row is None:
                    raise ViewerError(404, f"{field}: no episode {i!r} in namespace "
                                           f"{namespace!r}", field)
                out.append(row.signature)
        return out, cb["vocab"]

    return check_ns, opened, lookup


def _add_store_routes(router: APIRouter, store_path: StoreSpec,
                      guard: Callable[..., Collection[str] | None]) -> None:
    """``GET /viewer/api/casebook`` (the episodes the page can map) and ``GET /viewer/api/map``
    (:func:`map_payload` of two of them), each behind ``guard``."""
    check_ns, opened, lookup = _store_readers(store_path)

    @router.get("/api/casebook")
    def casebook(allowed: Any = Depends(guard), namespace: str = _ns()) -> dict[str, Any]:
        """The episodes /viewer/api/map accepts: id, mechanism, domain, gist."""
        if store_path is None:
            rows = [{"id": e.id, "mechanism": e.mechanism, "domain": e.domain,
                     "decoy_of": e.decoy_of, "gist": signature_gist(e.signature)}
                    for e in _casebook()["entries"].values()]
            return {"mode": "casebook", "namespace": None, "entries": rows}
        check_ns(namespace, allowed)
        with opened() as mem:
            rows = [{"id": r.episode_id, "mechanism": None, "domain": r.signature.surface.domain,
                     "decoy_of": None, "gist": signature_gist(r.signature)}
                    for r in mem.list(namespace)]
        return {"mode": "store", "namespace": namespace, "entries": rows}

    @router.get("/api/map")
    def map_(allowed: Any = Depends(guard), source: str = _id(), target: str = _id(),
             namespace: str = _ns()) -> dict[str, Any]:
        """Both descriptions, the SME correspondences, the judge's report, inferences."""
        (s, t), vocab = lookup([("source", source), ("target", target)], namespace, allowed)
        try:
            return map_payload(s, t, vocab=vocab)
        except AnalogistError as e:
            raise ViewerError(422, str(e), e.field) from None


def _add_brief_routes(router: APIRouter, guard: Callable[..., Collection[str] | None]) -> None:
    """``GET /viewer/api/events``, ``/viewer/api/brief`` and ``/viewer/api/brief.png`` over the
    historical corpus, each behind ``guard``; the briefs are kept in a small LRU cache (the last
    ``BRIEF_CACHE_SIZE`` events), shared by the threads serving requests."""
    brief_lock = threading.Lock()
    brief_cache: OrderedDict[str, dict[str, Any]] = OrderedDict()

    @router.get("/api/events")
    def events(allowed: Any = Depends(guard)) -> dict[str, Any]:
        """Corpus events with a cutoff hiding something (the ones a brief can be checked on)."""
        return {"events": [{"id": e.event_id, "name": e.name, "domain": e.domain}
                           for e in eval_targets(_corpus())]}

    def brief_of(event: str) -> dict[str, Any]:
        with brief_lock:
            hit = brief_cache.get(event)
            if hit is not None:
                brief_cache.move_to_end(event)
                return hit
        corpus = _corpus()
        if all(e.event_id != event for e in corpus.events):
            raise ViewerError(404, f"event: no event {event[:200]!r} in the historical corpus",
                              "event")
        try:
            out = brief_payload(event, corpus)
        except AnalogistError as e:
            raise ViewerError(422, f"event {event!r}: {e}", "event") from None
        with brief_lock:
            brief_cache[event] = out
            while len(brief_cache) > BRIEF_CACHE_SIZE:
                brief_cache.popitem(last=False)
        return out

    @router.get("/api/brief")
    def brief(allowed: Any = Depends(guard), event: str = _id()) -> dict[str, Any]:
        """The Structural Analogy Brief for a corpus event, coverage chart included."""
        return brief_of(event)

    @router.get("/api/brief.png", response_class=Response)
    def brief_png(allowed: Any = Depends(guard), event: str = _id()) -> Response:
        """The brief's coverage chart (PNG)."""
        b = brief_of(event)
        if b["chart_png_base64"] is None:
            raise ViewerError(404, f"event {event!r}: no chart ({b['chart_note']})", "event")
        return Response(base64.b64decode(b["chart_png_base64"]), media_type="image/png")

