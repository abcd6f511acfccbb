"""The HTTP API (issue 9): ``analogist serve``.

A FastAPI app over one SQLite store (:class:`~analogist.memory.sqlite.Memory`), with an OpenAPI
document at ``/openapi.json`` (and ``/docs``). Every data route names its namespace in the path,
``/v1/ns/{namespace}/...``, and needs an API key (``Authorization: Bearer ak_…`` or
``X-API-Key: ak_…``) bound to that namespace:

* 401 — no key, a malformed, unknown or revoked key;
* 403 — a valid key that is not bound to the namespace named in the path. Ids are looked up only
  inside the named namespace, so another namespace's ids are "not found" (404) even there;
* 413 — a body over ``max_body_bytes`` (refused before any handler runs);
* 429 — over the key's rate (a token bucket of ``rate_per_minute``; ``Retry-After`` is set);
* 503 — a find, map, foresight brief or check while the queue of such requests is full
  (``Retry-After`` is set);
* 400 — malformed JSON (the message gives line and column) or input the library refuses (an
  :class:`~analogist.errors.AnalogistError`; the message names the field); 422 — a body of the
  wrong shape (the message names the field). Writes are single transactions, so a refused
  request leaves the store unchanged.

Routes: episodes (create, bulk create all-or-nothing, get, list, delete, supersede), find
(:meth:`Retriever.find`), map (two signatures → the judge's report with the SME mapping),
foresight (an Event → :func:`run_foresight` over the bundled corpus plus the namespace's event
episodes → :func:`brief_data`), check (:meth:`Safeguard.check`), encode (text → signature as a
background job; the LLM writer reports the skip when no LLM is configured), eval runs (a posted
gold set through :func:`run_goldset` as a job; stored runs listed), jobs, health and metrics.
The mapping viewer (``analogist.viewer``), when installed, is mounted under ``/viewer`` with the
caller's namespaces as its guard.

The domain is built by the application layer (:class:`analogist.app.Analogist`), the same one
the CLI and the MCP server use, so a request here gets the answer the other faces give: the same
defaults (:class:`~analogist.app.Settings`) and limits (:data:`~analogist.app.LIMITS`). This
module parses, authenticates, limits and renders.

Concurrency: handlers run in the server's thread pool, off the event loop; each thread has its
own connection to the store (SQLite connections are per thread) and its own retriever per
namespace. Finds, maps, foresight briefs and checks take one of a fixed number of slots (one per
core by default) and wait in arrival order for one; when the queue is full they are refused
with 503 and ``Retry-After`` (:mod:`analogist.service.admission`); no lock serialises checks or
foresight (each thread has its own safeguard). Writes (episodes, bulk, delete, supersede,
outcomes) take turns on a lane of one thread, with the same bounded queue and 503; a find's
analogy-log row is written on a lane of its own once the find has given up its slot (its answer
waits for the row's id). Writes serialise on SQLite's write lock
(``BEGIN IMMEDIATE``, 30 s busy timeout; a write that still finds it taken gets 503 and
``Retry-After`` and changes nothing). ``serve(workers=N)`` runs N such servers as processes on
one listening socket over the same store (:mod:`analogist.service.workers`). A serving process
freezes what survives each full pass of Python's garbage collector
(:class:`~analogist.service.runtime.CollectorPolicy`); ``/v1/metrics`` reports the collector.
"""

import contextlib
import gc
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator
from pydantic_core import PydanticCustomError
from starlette.exceptions import HTTPException as StarletteHTTPException

from analogist.app import DEFAULT_WRITER, LIMITS, WRITERS, Analogist, Settings
from analogist.errors import AnalogistError
from analogist.llm.base import NO_LLM_REASON
from analogist.memory.sqlite import DuplicateEpisodeError, NotFoundError
from analogist.service.admission import Admission, Busy
from analogist.service.docs import SIGNATURE_REF, install_docs
from analogist.service.keys import ApiKey, KeyStore, check_namespace
from analogist.service.runtime import BodyLimit, CollectorPolicy, Jobs, Metrics, RateLimiter
from analogist.service.sessions import (
    COOKIE,
    CSRF_HEADER,
    DEFAULT_TTL,
    Session,
    Sessions,
    same_origin,
)
from analogist.triggers import ledger_summary

__all__ = ["DEFAULT_MAX_BODY", "DEFAULT_RATE", "ApiError", "create_app", "serve"]

DEFAULT_MAX_BODY = 1_000_000
DEFAULT_RATE = 600.0
MAX_BULK = 1000
MAX_ID = 2 ** 63 - 1
"""The largest integer id, offset or limit (SQLite's INTEGER range)."""
WORKER_HEADER = "X-Analogist-Worker"
"""The response header naming the worker process that answered (``serve --workers``)."""


class ApiError(Exception):
    """An HTTP error with a JSON body ``{"error": {"type", "message", "field"}}``."""

    def __init__(self, status: int, type_: str, message: str, field: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.type, self.message, self.field = status, type_, message, field
        self.headers = headers


def _err(status: int, type_: str, message: str, field: str | None = None,
         headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"type": type_, "message": message, "field": field}},
                        status_code=status, headers=headers)


# -- request bodies ------------------------------------------------------------------------
_SIG_OR_NULL: dict[str, Any] = {"anyOf": [{"$ref": SIGNATURE_REF}, {"type": "null"}]}

class _Body(BaseModel):
    """A request body: unknown keys are refused with the valid ones named."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            extra = [k for k in data if k not in cls.model_fields]
            if extra:
                raise PydanticCustomError(
                    "unknown_key", "unknown key '{key}'; expected one of {valid}",
                    {"key": str(extra[0])[:100], "valid": ", ".join(cls.model_fields)})
        return data


class Ref(_Body):
    """A signature given inline (``signature``) or a stored episode of the namespace
    (``episode``: row id or episode id)."""

    signature: dict[str, Any] | None = Field(None, json_schema_extra=_SIG_OR_NULL)
    episode: int | str | None = None


class BulkBody(_Body):
    episodes: list[dict[str, Any]] = Field(..., min_length=1, max_length=MAX_BULK,
                                           json_schema_extra={"items": {"$ref": SIGNATURE_REF}})


class SupersedeBody(_Body):
    by: int | str = Field(..., description="The episode (row id or episode id) that replaces it.")


class FindBody(_Body):
    target: dict[str, Any] | None = Field(None, description="The target Signature.",
                                          json_schema_extra=_SIG_OR_NULL)
    episode: int | str | None = Field(None, description="Or a stored episode as the target.")
    k: int = Field(5, ge=LIMITS.k[0], le=LIMITS.k[1])
    critic: bool | None = Field(None, description="Ask the critic (an LLM) about analogues "
                                                  "that would transfer (default: yes).")
    parametric: bool | None = Field(None, description="Also ask the LLM for analogues from its "
                                                      "own knowledge (default: no).")


class MapBody(_Body):
    base: Ref
    target: Ref


class ForesightBody(_Body):
    target: dict[str, Any] | str = Field(..., description="The target Event (foresight event "
                                                          "format), or the id, name or alias "
                                                          "of a corpus event or an event "
                                                          "episode of the namespace.")
    cutoff: str | None = None
    rounds: int | None = Field(None, ge=LIMITS.rounds[0], le=LIMITS.rounds[1])
    per_round: int | None = Field(None, ge=LIMITS.per_round[0], le=LIMITS.per_round[1])
    carryover: int | None = Field(None, ge=LIMITS.carryover[0], le=LIMITS.carryover[1])
    embedding: bool | None = Field(None, description="Use the text-embedding channel in MAC "
                                                     "(default: yes).")


class CheckBody(_Body):
    turn: dict[str, Any] | str
    mode: Literal["strict", "advisory"] | None = None


class EncodeBody(_Body):
    text: str = Field(..., min_length=1)
    episode_id: str | None = None
    domain: str | None = None
    writer: Literal[WRITERS] = DEFAULT_WRITER  # type: ignore[valid-type]
    store: bool = True


class OutcomeBody(_Body):
    """What an analogy led to: give ``helped`` (true/false) or ``negative: true``."""

    log_id: int | None = Field(None, ge=1, le=MAX_ID, description="The analogy attempt: the "
                               "'log_id' a find answered with. Without it, 'used' is required "
                               "and a new log entry is made.")
    used: str | None = Field(None, min_length=1, max_length=500,
                             description="The analogue (episode id) acted on.")
    helped: StrictBool | None = Field(None, description="Whether acting on the analogy helped.")
    negative: StrictBool = Field(False, description="A negative transfer: acting on the "
                                                    "analogy did worse than acting without it.")
    note: str | None = Field(None, min_length=1, max_length=2000)
    result: float | None = Field(None, allow_inf_nan=False, description="The analogy-driven "
                                 "action's measured result (writes a ledger entry).")
    counterfactual: float | None = Field(None, allow_inf_nan=False, description="The "
                                         "no-analogy result on the same item, when known.")
    higher_is_better: StrictBool = True
    item: str | None = Field(None, min_length=1, max_length=500)
    action: str | None = Field(None, min_length=1, max_length=500)


class SignInBody(_Body):
    key: str = Field(..., min_length=1, max_length=300, description="An API key.")


class EvalBody(_Body):
    gold: dict[str, Any]
    retriever: Literal["fused", "structural", "surface", "associative"] = "structural"
    runs: int = Field(1, ge=1, le=5)


# -- the service state ---------------------------------------------------------------------
class _Service:
    """The application layer plus what only a server has: keys, limits, metrics, jobs."""

    def __init__(self, app: Analogist, max_body: int, rate: float, job_workers: int,
                 session_ttl: float, admission: Admission | None = None,
                 worker: tuple[int, int] | None = None) -> None:
        self.app = app
        #: (index, count) of this worker process under ``serve --workers``, else None
        self.worker = worker
        self.admission = admission or Admission()
        # writes take turns on one thread: they serialise on the store's write lock anyway,
        # and one waiting in line costs nothing, where dozens polling SQLite's lock take the
        # cores (and the write lock's hand-over) from each other and from the finds
        self.writes = Admission(1, self.admission.queue, name="analogist-write")
        # finds' analogy-log rows, written one at a time off the finds' slots: a find that
        # waited for the store's write lock in its slot would keep a core's turn idle
        self.logs = Admission(1, self.admission.queue, name="analogist-log")
        self.store_path = str(app.settings.store)
        self.max_body = max_body
        self.limiter = RateLimiter(rate)
        self.metrics = Metrics()
        # jobs and viewer sessions in the store, where every worker process finds them (a
        # private in-memory store is one connection per thread: those stay in the process)
        shared = app.memory if self.store_path != ":memory:" else None
        self.jobs = Jobs(workers=job_workers, store=shared)
        self.sessions = Sessions(ttl=session_ttl, store=shared)
        self.local = threading.local()

    def keys(self) -> KeyStore:
        ks = getattr(self.local, "keys", None)
        if ks is None:
            ks = self.local.keys = KeyStore(self.app.memory())
        return ks

    def close(self) -> None:
        self.jobs.shutdown()
        self.admission.close()
        self.writes.close()
        self.logs.close()
        self.app.close()

    def heavy(self, fn: Callable[[], Any]) -> Any:
        """Run a CPU-bound request's work on the admission pool, or 503 when its queue is
        full."""
        return self._lane(self.admission, fn)

    def write(self, fn: Callable[[], Any]) -> Any:
        """Run a request's store write on the write lane, or 503 when its queue is full."""
        return self._lane(self.writes, fn)

    def log(self, fn: Callable[[], Any]) -> Any:
        """Run a find's log write on the log lane; on this thread when its queue is full (the
        find is done: it is not refused for its log row)."""
        try:
            return self.logs.run(fn)
        except Busy:
            return fn()

    @staticmethod
    def _lane(lane: Admission, fn: Callable[[], Any]) -> Any:
        try:
            return lane.run(fn)
        except Busy as e:
            raise ApiError(503, "busy", f"the server is busy ({e}); retry in "
                           f"{e.retry_after} s", None, {"Retry-After": str(e.retry_after)}
                           ) from None


def _error_json(e: BaseException) -> dict[str, Any]:
    if isinstance(e, AnalogistError):
        return {"type": type(e).__name__, "message": str(e), "field": e.field}
    return {"type": "internal", "message": f"{type(e).__name__}: {e}"[:500], "field": None}


def _key_of(raw: int | str) -> int | str:
    """A path/body episode key: digits are a row id, anything else an episode id."""
    if isinstance(raw, str) and raw.isdigit() and len(raw) < 19:
        return int(raw)
    return raw


def _episode_json(ep: Any) -> dict[str, Any]:
    return {"id": ep.id, "namespace": ep.namespace, "episode_id": ep.episode_id, "kind": ep.kind,
            "created_at": ep.created_at, "superseded_by": ep.superseded_by,
            "verified": ep.verified, "signature": ep.signature.to_data()}


def _field_error(e: AnalogistError, prefix: str) -> ApiError:
    """A library error on part of a body, its field named from the body's root."""
    return ApiError(400, type(e).__name__, str(e), prefix + (f".{e.field}" if e.field else ""))


# -- the app -------------------------------------------------------------------------------
def create_app(store_path: str | Path, *, max_body_bytes: int = DEFAULT_MAX_BODY,
               rate_per_minute: float = DEFAULT_RATE, job_workers: int = 2,
               mount_viewer: bool = True, settings: Settings | None = None,
               session_ttl: float = DEFAULT_TTL, workers: int | None = None,
               queue: int = 256, worker: tuple[int, int] | None = None) -> FastAPI:
    """The FastAPI app over the store at ``store_path`` (created when missing).

    Args:
        store_path: the SQLite store; API keys live in its ``api_keys`` table
            (``analogist keys add``).
        max_body_bytes: larger request bodies are refused with 413.
        rate_per_minute: requests per minute per key (token bucket, bursts up to the same
            number); ``<= 0`` turns rate limiting off.
        job_workers: threads for background jobs (encoding, eval runs).
        workers, queue: finds, maps, foresight briefs and checks that run at once (default:
            one per core) and that may wait for a turn (more are refused with 503 and
            ``Retry-After``); see :mod:`analogist.service.admission`.
        mount_viewer: mount ``analogist.viewer``'s router when that package is importable.
        settings: the application settings (default: :meth:`Settings.from_env`); their store
            is replaced by ``store_path``.
        session_ttl: the life in seconds of a viewer sign-in (a session cookie).
        worker: ``(index, count)`` when this app is one of ``count`` worker processes
            (:mod:`analogist.service.workers`): every answer names the worker in an
            ``X-Analogist-Worker`` header, and health and metrics report it.
    """
    if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int) \
            or max_body_bytes < 1:
        raise AnalogistError("max_body_bytes must be a positive integer", field="max_body_bytes")
    settings = Settings.from_env(store=str(store_path)) if settings is None else \
        replace(settings, store=str(store_path))
    domain = Analogist(settings)
    domain.memory().ensure_service_tables()      # create / migrate before serving
    svc = _Service(domain, max_body_bytes, float(rate_per_minute), job_workers, session_ttl,
                   Admission(workers, queue), worker)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> Any:
        yield
        svc.close()

    app = FastAPI(
        title="analogist", lifespan=lifespan,
        summary="Find, map and check analogies by structure — HTTP API.",
        description=(__doc__ or "").split("\n\n")[1],
        version=__import__("analogist").__version__,
        docs_url=None, redoc_url=None,          # /docs is served offline by install_docs
    )
    app.state.service = svc
    _install_errors(app)
    _install_middleware(app, svc, max_body_bytes)
    caller, NS = _auth(svc)
    _service_routes(app, svc, caller)
    _episode_routes(app, svc, NS)
    _analogy_routes(app, svc, NS)
    _job_routes(app, svc, NS)
    _outcome_routes(app, svc, NS)
    install_docs(app, {(P + "/episodes", "post")})
    if mount_viewer:
        _mount_viewer(app, svc, caller)
    return app


_STATUS_TYPES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
                 405: "method_not_allowed", 406: "not_acceptable", 409: "conflict",
                 413: "request_too_large", 415: "unsupported_media_type",
                 422: "invalid_request", 429: "rate_limited", 503: "unavailable"}


def _loc_field(loc: Any) -> str:
    """A validation error's location as a dotted field path from the body's root (``query.``
    and ``path.`` kept, so a parameter is told apart from a body key)."""
    parts = [str(p) for p in (loc or ()) if p != "body"]
    return ".".join(parts) or "body"


def _install_errors(app: FastAPI) -> None:
    """One JSON error shape for every error: ``{"error": {"type", "message", "field"}}``."""

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, e: ApiError) -> JSONResponse:
        return _err(e.status, e.type, e.message, e.field, e.headers)

    @app.exception_handler(AnalogistError)
    async def _analogist_error(_: Request, e: AnalogistError) -> JSONResponse:
        status = 404 if isinstance(e, NotFoundError) else \
            409 if isinstance(e, DuplicateEpisodeError) else 400
        return _err(status, type(e).__name__, str(e), e.field)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, e: StarletteHTTPException) -> JSONResponse:
        # the framework's own (unknown route, wrong method) and the viewer's errors
        detail = e.detail if isinstance(e.detail, str) else str(e.detail)
        field = getattr(e, "field", None)
        if e.status_code == 404 and detail == "Not Found":
            detail, field = f"no route {request.url.path[:200]!r}; see /docs", "path"
        elif e.status_code == 405:
            detail = f"{request.method} is not allowed on {request.url.path[:200]!r}"
            field = "method"
        elif e.status_code == 400 and "parsing the body" in detail:
            detail, field = "the request body could not be parsed as JSON", "body"
        return _err(e.status_code, _STATUS_TYPES.get(e.status_code, "error"), detail, field,
                    getattr(e, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, e: RequestValidationError) -> JSONResponse:
        errs = e.errors()
        for x in errs:
            if x.get("type") == "json_invalid":
                ctx = x.get("ctx") or {}
                return _err(400, "malformed_json",
                            f"the request body is not valid JSON: {ctx.get('error', x['msg'])} "
                            f"(at character {x['loc'][-1] if x.get('loc') else '?'})", "body")
        msgs = []
        first_field = None
        for x in errs[:5]:
            loc = _loc_field(x.get("loc"))
            if x.get("type") == "unknown_key":
                loc = (loc + "." if loc != "body" else "") + str(x["ctx"]["key"])
            first_field = first_field or loc
            msgs.append(f"{loc}: {x.get('msg')}"[:500])
        if len(errs) > 5:
            msgs.append(f"and {len(errs) - 5} more")
        return _err(422, "invalid_request", "; ".join(msgs), first_field)

    @app.exception_handler(sqlite3.OperationalError)
    async def _store_busy(_: Request, e: sqlite3.OperationalError) -> JSONResponse:
        if "locked" in str(e) or "busy" in str(e):     # another writer held the lock too long
            return _err(503, "busy", "the store is busy with other writes (the request "
                        "changed nothing); retry in 1 s", None, {"Retry-After": "1"})
        return _err(500, "internal", "internal error (OperationalError); the server log has "
                    "the details", None)

    @app.exception_handler(Exception)
    async def _internal(_: Request, e: Exception) -> JSONResponse:  # a bug, never bad input
        return _err(500, "internal", f"internal error ({type(e).__name__}); the server log "
                    "has the details", None)


def _install_middleware(app: FastAPI, svc: _Service, max_body_bytes: int) -> None:
    """Metrics and limits (pure ASGI middlewares; BodyLimit outermost)."""

    worker = None if svc.worker is None else \
        (WORKER_HEADER.lower().encode(), str(svc.worker[0]).encode())

    class _Timing:
        def __init__(self, app_: Any) -> None:
            self.app = app_

        async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
            if scope["type"] != "http":
                await self.app(scope, receive, send)
                return
            t0 = time.perf_counter()
            status = {"code": 500}

            async def send_(msg: dict) -> None:
                if msg["type"] == "http.response.start":
                    status["code"] = msg["status"]
                    if worker is not None:
                        msg = {**msg, "headers": [*msg.get("headers", ()), worker]}
                await send(msg)

            try:
                await self.app(scope, receive, send_)
            finally:
                route = scope.get("route")
                name = f"{scope['method']} {getattr(route, 'path', 'unmatched')}"
                ns = (scope.get("state") or {}).get("metrics_namespace")
                svc.metrics.record(name, status["code"], (time.perf_counter() - t0) * 1000, ns)

    app.add_middleware(_Timing)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)


_BEARER = HTTPBearer(auto_error=False, scheme_name="bearer", bearerFormat="ak_<id>.<secret>",
                     description="An API key from 'analogist keys add', as "
                                 "'Authorization: Bearer ak_…'.")
_API_KEY = APIKeyHeader(name="X-API-Key", auto_error=False, scheme_name="apiKey",
                        description="The same API key in an 'X-API-Key' header.")


def _auth(svc: _Service) -> tuple[Callable[..., ApiKey], Any]:
    """The caller dependency (key, then rate) and the namespace-access type ``NS``."""

    def caller(request: Request,
               bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)],
               api_key: Annotated[str | None, Depends(_API_KEY)]) -> ApiKey:
        return _verify_header(svc, request)

    def namespace_access(request: Request, namespace: Annotated[str, PathParam(
            description="The namespace (a hard partition of the store).")],
            key: Annotated[ApiKey, Depends(caller)]) -> str:
        if namespace not in key.namespaces:
            raise ApiError(403, "forbidden", f"this key is not bound to namespace "
                           f"{namespace[:100]!r}", "namespace")
        request.state.metrics_namespace = namespace      # counted in that namespace's metrics
        return check_namespace(namespace)

    return caller, Annotated[str, Depends(namespace_access)]


def _header_token(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    return auth[7:].strip() if auth.lower().startswith("bearer ") else \
        request.headers.get("x-api-key")


def _verify_header(svc: _Service, request: Request) -> ApiKey:
    """The key of the request's ``Authorization: Bearer`` or ``X-API-Key`` header, rate
    limited; 401 / 429 otherwise."""
    token = _header_token(request)
    if not token:
        raise ApiError(401, "unauthorized", "an API key is required: send 'Authorization: "
                       "Bearer <key>' or 'X-API-Key: <key>' (make one with 'analogist keys "
                       "add')", "authorization", {"WWW-Authenticate": "Bearer"})
    key = svc.keys().verify(token)
    if key is None:
        raise ApiError(401, "unauthorized", "the API key is not valid (unknown, malformed "
                       "or revoked)", "authorization", {"WWW-Authenticate": "Bearer"})
    _rate(svc, key)
    return key


def _rate(svc: _Service, key: ApiKey) -> None:
    ok, wait = svc.limiter.allow(key.key_id)
    if not ok:
        raise ApiError(429, "rate_limited", f"rate limit of {svc.limiter.rate * 60:g} "
                       f"requests per minute exceeded for key {key.name!r}; retry in "
                       f"{wait:.1f} s", None, {"Retry-After": str(max(1, round(wait)))})


def _sig_of(svc: _Service, ref: Ref, ns: str, field: str) -> Any:
    if ref.signature is not None and ref.episode is None:
        try:
            return svc.app.signature(ref.signature)
        except AnalogistError as e:
            raise _field_error(e, f"{field}.signature") from None
    return _stored(svc, ref, ns, field, "get").signature


def _row_of(svc: _Service, ref: Ref, ns: str, field: str) -> int:
    """The row id of the stored episode ``ref.episode`` names, found as :func:`_sig_of` finds
    it (a 404 naming the field when there is none), without reading the episode."""
    return _stored(svc, ref, ns, field, "row_id")  # type: ignore[no-any-return]


def _stored(svc: _Service, ref: Ref, ns: str, field: str, method: str) -> Any:
    """What the memory's ``method`` (``get`` or ``row_id``) answers for the stored episode
    ``ref.episode`` names: a 422 unless exactly one of signature and episode is given, a 404
    naming the field when there is no such episode."""
    if (ref.signature is None) == (ref.episode is None):
        raise ApiError(422, "invalid_request", "give exactly one of 'signature' and "
                       "'episode'", field)
    got = getattr(svc.app.memory(), method)(_key_of(ref.episode), ns)  # type: ignore[arg-type]
    if got is None:
        raise ApiError(404, "not_found", f"no episode {ref.episode!r} in namespace {ns!r}",
                       f"{field}.episode")
    return got


P = "/v1/ns/{namespace}"


def _worker_json(svc: _Service) -> dict[str, Any]:
    """``{"worker": {index, of, pid}}`` under ``serve --workers``, else nothing."""
    if svc.worker is None:
        return {}
    return {"worker": {"index": svc.worker[0], "of": svc.worker[1], "pid": os.getpid()}}


def _service_routes(app: FastAPI, svc: _Service, caller: Any) -> None:
    @app.get("/v1/health", tags=["service"], summary="Liveness and store check (no key).")
    def health() -> dict[str, Any]:
        m = svc.app.memory()
        return {"status": "ok", "schema_version": m.schema_version(),
                "version": app.version, **_worker_json(svc)}

    @app.get("/v1/metrics", tags=["service"],
             summary="Request counts, errors and latency percentiles per route, over the "
                     "key's namespaces (an admin key: over all requests).")
    def metrics(key: Annotated[ApiKey, Depends(caller)]) -> dict[str, Any]:
        return {**svc.metrics.snapshot(None if key.admin else key.namespaces),
                "heavy_lane": {**svc.admission.stats(), **svc.admission.counts()},
                "write_lane": {**svc.writes.stats(), **svc.writes.counts()},
                "log_lane": {**svc.logs.stats(), **svc.logs.counts()},
                "collector": {"frozen_objects": gc.get_freeze_count(),
                              "generations": gc.get_stats()},
                **_worker_json(svc)}

    @app.get("/v1/whoami", tags=["service"], summary="The calling key's name and namespaces.")
    def whoami(key: Annotated[ApiKey, Depends(caller)]) -> dict[str, Any]:
        return {"name": key.name, "namespaces": sorted(key.namespaces), "admin": key.admin}


def _episode_routes(app: FastAPI, svc: _Service, NS: Any) -> None:  # noqa: N803 - a type
    @app.post(P + "/episodes", status_code=201, tags=["episodes"],
              summary="Store one episode (a Signature object as the body).")
    def create_episode(ns: NS, signature: dict[str, Any]) -> dict[str, Any]:
        row = svc.write(lambda: svc.app.add(signature, namespace=ns))
        return {"id": row.id, "episode_id": row.episode_id, "namespace": ns}

    @app.post(P + "/episodes/bulk", status_code=201, tags=["episodes"],
              summary=f"Store up to {MAX_BULK} episodes in one transaction (all or nothing).")
    def bulk_create(ns: NS, body: BulkBody) -> dict[str, Any]:
        ids = svc.write(lambda: svc.app.add_many(body.episodes, namespace=ns,
                                                 batch_size=len(body.episodes)))
        return {"ids": ids, "count": len(ids), "namespace": ns}

    @app.get(P + "/episodes", tags=["episodes"], summary="List episodes in id order.")
    def list_episodes(ns: NS, limit: Annotated[int, Query(ge=1, le=1000)] = 100,
                      offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
                      include_superseded: bool = False, full: bool = False) -> dict[str, Any]:
        m = svc.app.memory()
        eps = m.list(ns, include_superseded=include_superseded, limit=limit, offset=offset)
        items = [_episode_json(e) if full else
                 {k: v for k, v in _episode_json(e).items() if k != "signature"} for e in eps]
        return {"namespace": ns, "total": m.count(ns, include_superseded=include_superseded),
                "episodes": items}

    @app.get(P + "/episodes/{key}", tags=["episodes"],
             summary="One episode by row id (digits) or episode id.")
    def get_episode(ns: NS, key: str) -> dict[str, Any]:
        ep = svc.app.memory().get(_key_of(key), ns)
        if ep is None:
            raise ApiError(404, "not_found", f"no episode {key!r} in namespace {ns!r}", "key")
        return _episode_json(ep)

    @app.delete(P + "/episodes/{key}", tags=["episodes"], summary="Delete one episode.")
    def delete_episode(ns: NS, key: str) -> dict[str, Any]:
        if not svc.write(lambda: svc.app.memory().delete(_key_of(key), ns)):
            raise ApiError(404, "not_found", f"no episode {key!r} in namespace {ns!r}", "key")
        return {"deleted": key, "namespace": ns}

    @app.post(P + "/episodes/{key}/supersede", tags=["episodes"],
              summary="Mark an episode as superseded by another of the same namespace.")
    def supersede(ns: NS, key: str, body: SupersedeBody) -> dict[str, Any]:
        svc.write(lambda: svc.app.memory().supersede(_key_of(key), _key_of(body.by), ns))
        return {"superseded": key, "by": body.by, "namespace": ns}


def _analogy_routes(app: FastAPI, svc: _Service, NS: Any) -> None:  # noqa: N803 - a type
    @app.post(P + "/find", tags=["analogy"],
              summary="MAC/FAC retrieval plus the judge (Retriever.find) within the namespace.")
    def find(ns: NS, body: FindBody) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            ref = Ref(signature=body.target, episode=body.episode)
            # a stored episode goes by its row: the retriever reads and derives it once
            target = _sig_of(svc, ref, ns, "target") if ref.episode is None \
                else _row_of(svc, ref, ns, "target")
            return svc.app.find(target, namespace=ns, k=body.k, critic=body.critic,
                                parametric=body.parametric, defer_log=True)

        res = svc.heavy(run)
        # the log row is written on the log lane, after the find has given up its slot
        return svc.log(lambda: svc.app.log_find(res, namespace=ns)).to_json()

    @app.post(P + "/map", tags=["analogy"],
              summary="Map base onto target with SME and judge it (likeness/difference/unknown).")
    def map_(ns: NS, body: MapBody) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            b, t = _sig_of(svc, body.base, ns, "base"), _sig_of(svc, body.target, ns, "target")
            return svc.app.map(b, t).to_json()

        return svc.heavy(run)

    @app.post(P + "/foresight", tags=["analogy"],
              summary="Foresight brief for a target Event over the bundled historical corpus "
                      "plus the namespace's event episodes.")
    def foresight(ns: NS, body: ForesightBody) -> dict[str, Any]:
        try:
            ev = svc.app.resolve_event(body.target, namespace=ns)
        except AnalogistError as e:
            raise _field_error(e, "target") if isinstance(body.target, dict) else e from None
        return svc.heavy(lambda: {"namespace": ns, **svc.app.brief(
            ev, cutoff=body.cutoff, namespace=ns, rounds=body.rounds, per_round=body.per_round,
            carryover=body.carryover, embedding=body.embedding)})

    @app.post(P + "/check", tags=["analogy"],
              summary="Check the analogies of a debate turn (Safeguard.check).")
    def check(ns: NS, body: CheckBody) -> dict[str, Any]:
        from analogist.safeguard import parse_turn  # spaCy and the lexicons, loaded on use

        turn = body.turn if isinstance(body.turn, str) else parse_turn(body.turn, source="turn")
        if isinstance(turn, str) and not turn.strip():
            raise ApiError(422, "invalid_request", "the turn is empty", "turn")
        report = svc.heavy(lambda: svc.app.check(turn, mode=body.mode))
        return {"namespace": ns, "all_pass": report.all_pass, **report.details()}


def _job_routes(app: FastAPI, svc: _Service, NS: Any) -> None:  # noqa: N803 - a type
    def _job_json(job: Any) -> dict[str, Any]:
        return {**job.to_json(), "href": f"/v1/ns/{job.namespace}/jobs/{job.id}"}

    @app.post(P + "/encode", status_code=202, tags=["jobs"],
              summary="Encode text into a signature as a background job (deterministic or LLM "
                      "writer); stores it when 'store' is true.")
    def encode(ns: NS, body: EncodeBody) -> dict[str, Any]:
        def run() -> tuple[str, Any]:
            if body.writer == "llm" and svc.app.provider("writer") is None:
                return "skipped", {"reason": NO_LLM_REASON}
            res = svc.app.encode(body.text, writer=body.writer, episode_id=body.episode_id,
                                 domain=body.domain, source=body.episode_id or "<text>")
            out: dict[str, Any] = {"writer": res.writer, "signature": res.signature.to_data(),
                                   "notes": list(res.notes), "stored_id": None}
            if body.store:
                out["stored_id"] = svc.app.add(res.signature, namespace=ns).id
            return "done", out

        return _job_json(svc.jobs.submit(ns, "encode", run, _error_json))

    @app.post(P + "/eval/runs", status_code=202, tags=["jobs"],
              summary="Run a posted gold set against the namespace (run_goldset) as a job; "
                      "the result is stored as an eval run.")
    def eval_run(ns: NS, body: EvalBody) -> dict[str, Any]:
        from analogist.bench.harness.goldset import goldset_from_json  # the harness, on use

        gold = goldset_from_json(body.gold, source="gold")

        def run() -> tuple[str, Any]:
            from analogist.bench.harness.runner import run_goldset  # the harness, on use

            res = run_goldset(gold, svc.store_path, body.retriever, runs=body.runs,
                              namespace=ns, embedder=svc.app.embedder(),
                              encoder=svc.app.writer("deterministic"))
            summary = res["runs"][-1]["summary"]
            run_id = svc.app.memory().add_eval_run(ns, retriever=body.retriever,
                                                   runs=body.runs, summary=summary, result=res)
            return "done", {"run_id": run_id, "summary": summary}

        return _job_json(svc.jobs.submit(ns, "eval", run, _error_json))

    @app.get(P + "/eval/runs", tags=["jobs"], summary="Stored eval runs of the namespace.")
    def eval_runs(ns: NS) -> dict[str, Any]:
        return {"namespace": ns, "runs": svc.app.memory().eval_runs(ns)}

    @app.get(P + "/eval/runs/{run_id}", tags=["jobs"], summary="One stored eval run in full.")
    def eval_run_get(ns: NS, run_id: Annotated[int, PathParam(ge=1, le=MAX_ID)]
                     ) -> dict[str, Any]:
        r = svc.app.memory().eval_run(ns, run_id)
        if r is None:
            raise ApiError(404, "not_found", f"no eval run {run_id} in namespace {ns!r}",
                           "run_id")
        return r

    @app.get(P + "/jobs/{job_id}", tags=["jobs"], summary="A background job's status/result.")
    def get_job(ns: NS, job_id: str) -> dict[str, Any]:
        job = svc.jobs.get(job_id)
        if job is None or job.namespace != ns:
            raise ApiError(404, "not_found", f"no job {job_id[:64]!r} in namespace {ns!r}",
                           "job_id")
        return _job_json(job)


def _outcome_routes(app: FastAPI, svc: _Service, NS: Any) -> None:  # noqa: N803 - a type
    @app.post(P + "/outcomes", status_code=201, tags=["outcomes"],
              summary="Record what an analogy led to (helped, did not help, or a negative "
                      "transfer), for 'triggers fit' and the ledger.")
    def record_outcome(ns: NS, body: OutcomeBody) -> dict[str, Any]:
        return {"namespace": ns, **svc.write(lambda: svc.app.record_outcome(
            body.log_id, helped=body.helped, negative=body.negative, used=body.used,
            note=body.note, result=body.result, counterfactual=body.counterfactual,
            higher_is_better=body.higher_is_better, item=body.item, action=body.action,
            namespace=ns))}

    @app.get(P + "/ledger", tags=["outcomes"],
             summary="The negative-transfer ledger of the namespace in numbers.")
    def ledger(ns: NS) -> dict[str, Any]:
        return {"namespace": ns, **ledger_summary(svc.app.memory(), ns)}


def _mount_viewer(app: FastAPI, svc: _Service, caller: Any) -> None:
    """The mapping viewer, when installed, under /viewer: its page opens in a browser, signs in
    with a key (``/viewer/session``, a session cookie; see :mod:`analogist.service.sessions`)
    and reads through the session or, for API clients, a key header."""
    try:
        from analogist.viewer import viewer_router  # an optional part of the package
    except ImportError:
        return
    signed_in = _viewer_signed_in(svc)
    _viewer_session_routes(app, svc, signed_in)
    app.include_router(viewer_router(svc.store_path,
                                     namespace_guard=_viewer_namespace_guard(svc, signed_in)))
    _viewer_openapi(app)


def _viewer_signed_in(svc: _Service) -> Callable[[Request], tuple[Session, ApiKey] | None]:
    """The viewer's reader of a request's sign-in (its session cookie)."""

    def signed_in(request: Request) -> tuple[Session, ApiKey] | None:
        """The request's live session and its key as it stands now, or None."""
        sid = request.cookies.get(COOKIE)
        sess = svc.sessions.get(sid)
        if sess is None:
            return None
        key = svc.keys().active(sess.key_id)
        if key is None:                       # revoked since sign-in: the session ends
            svc.sessions.end(sid)
            return None
        return sess, key

    return signed_in


def _viewer_namespace_guard(svc: _Service, signed_in: Callable[[Request], Any]
                            ) -> Callable[[Request], set[str]]:
    """The namespaces a viewer request may read: its key header's, else its session's (401 when
    it has neither)."""

    def namespace_guard(request: Request) -> set[str]:
        if _header_token(request):
            allowed = set(_verify_header(svc, request).namespaces)
        else:
            got = signed_in(request)
            if got is None:
                raise ApiError(401, "unauthorized", "sign in on /viewer with an API key, or "
                               "send it as 'Authorization: Bearer <key>'", "authorization",
                               {"WWW-Authenticate": "Bearer"})
            sess, key = got
            _rate(svc, key)
            allowed = set(sess.namespaces & key.namespaces)
        ns = request.query_params.get("namespace")
        if ns in allowed:
            request.state.metrics_namespace = ns
        return allowed

    return namespace_guard


def _viewer_cookie(request: Request, value: str, max_age: int) -> str:
    """The session cookie's header value (``Secure`` over HTTPS)."""
    secure = "; Secure" if request.url.scheme == "https" else ""
    return (f"{COOKIE}={value}; Path=/viewer; HttpOnly; SameSite=Strict; "
            f"Max-Age={max_age}{secure}")


def _viewer_check_origin(request: Request) -> None:
    """Refuse a cross-site sign-in or sign-out (403)."""
    if not same_origin(request.headers, request.url.scheme, request.headers.get("host")):
        raise ApiError(403, "forbidden", "cross-site request refused: sign in and out "
                       "from this server's own /viewer page", "origin")


def _viewer_session_routes(app: FastAPI, svc: _Service,
                           signed_in: Callable[[Request], Any]) -> None:
    """``/viewer/session``: read (GET), sign in with a key (POST), sign out (DELETE)."""

    @app.get("/viewer/session", tags=["viewer"],
             summary="The viewer's signed-in session: name, namespaces, CSRF token (401 when "
                     "signed out).")
    def session_get(request: Request) -> dict[str, Any]:
        got = signed_in(request)
        if got is None:
            raise ApiError(401, "unauthorized", "not signed in", "session")
        sess, key = got
        return sess.to_json(sess.namespaces & key.namespaces)

    @app.post("/viewer/session", tags=["viewer"],
              summary="Sign in to the viewer with an API key (JSON body, same origin); sets "
                      "an HttpOnly, SameSite=Strict session cookie.")
    def session_post(request: Request, body: SignInBody) -> JSONResponse:
        _viewer_check_origin(request)
        client = request.client.host if request.client else "?"
        ok, wait = svc.limiter.allow("sign-in:" + client)
        if not ok:
            raise ApiError(429, "rate_limited", f"too many sign-in attempts; retry in "
                           f"{wait:.1f} s", None, {"Retry-After": str(max(1, round(wait)))})
        key = svc.keys().verify(body.key.strip())
        if key is None:
            raise ApiError(401, "unauthorized", "the API key is not valid (unknown, malformed "
                           "or revoked)", "key")
        if not key.namespaces:
            raise ApiError(403, "forbidden", f"key {key.name!r} is bound to no namespace, so "
                           "there is nothing to view", "key")
        svc.sessions.end(request.cookies.get(COOKIE))      # a fresh id at every sign-in
        sid, sess = svc.sessions.create(key.key_id, key.name, key.namespaces)
        set_cookie = _viewer_cookie(request, sid, int(svc.sessions.ttl))
        return JSONResponse(sess.to_json(sess.namespaces),
                            headers={"Set-Cookie": set_cookie, "Cache-Control": "no-store"})

    @app.delete("/viewer/session", tags=["viewer"],
                summary="Sign out (needs the session's CSRF token in 'X-CSRF-Token').")
    def session_delete(request: Request) -> JSONResponse:
        _viewer_check_origin(request)
        sid = request.cookies.get(COOKIE)
        sess = svc.sessions.get(sid)
        if sess is not None:
            if not svc.sessions.check_csrf(sess, request.headers.get(CSRF_HEADER)):
                raise ApiError(403, "forbidden", "missing or wrong CSRF token: send the "
                               "session's csrf_token in an 'X-CSRF-Token' header", "x-csrf-token")
            svc.sessions.end(sid)
        return JSONResponse({"signed_in": False},
                            headers={"Set-Cookie": _viewer_cookie(request, "", 0),
                                     "Cache-Control": "no-store"})


def _viewer_openapi(app: FastAPI) -> None:
    """Build the OpenAPI document now; when the viewer's routes break it, leave them out of it so
    that the API's own document stays usable."""
    try:
        app.openapi()
    except Exception:  # noqa: BLE001 - keep the API's own OpenAPI document usable
        app.openapi_schema = None
        for r in app.routes:
            if getattr(r, "path", "").startswith("/viewer"):
                r.include_in_schema = False  # type: ignore[attr-defined]


def serve(store_path: str | Path, *, host: str = "127.0.0.1", port: int = 8765,
          max_body_bytes: int = DEFAULT_MAX_BODY, rate_per_minute: float = DEFAULT_RATE,
          log_level: str = "warning", workers: int | str = 1) -> int:
    """``analogist serve``: run the app with uvicorn until interrupted; with ``workers`` > 1
    (or ``"auto"``: one per core), as that many worker processes over one listening socket
    (:mod:`analogist.service.workers`). Returns the exit status."""
    # lazy: the ASGI server and the process supervisor, only for serving
    import uvicorn

    from analogist.service.workers import (
        ServeOptions,
        Supervisor,
        limit_blas_threads,
        parse_workers,
    )

    count = parse_workers(workers)
    if count == 1:
        app = create_app(store_path, max_body_bytes=max_body_bytes,
                         rate_per_minute=rate_per_minute)
        limit_blas_threads(1)       # one BLAS thread per heavy request, as in every worker
        CollectorPolicy().install()  # full collections over what is new, as in every worker
        uvicorn.run(app, host=host, port=port, log_level=log_level)
        return 0
    opts = ServeOptions(str(store_path), host, port, max_body_bytes, float(rate_per_minute),
                        log_level)

    def prepare() -> None:          # create / migrate the store once, before any worker
        with Analogist(Settings.from_env(store=str(store_path))) as a:
            a.memory().ensure_service_tables()

    return Supervisor(opts, count, create_app, prepare=prepare).run()
