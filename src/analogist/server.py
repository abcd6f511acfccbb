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

Concurrency: handlers run in the server's thread pool; each thread opens its own connection to
the store (SQLite connections are per thread) and keeps its own retriever per namespace. Writes
serialise on SQLite's write lock (``BEGIN IMMEDIATE``, 30 s busy timeout).
"""

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from analogist.errors import AnalogistError
from analogist.llm.base import DEFAULT_WRITER
from analogist.memory.sqlite import DuplicateEpisodeError, Memory, NotFoundError
from analogist.service.keys import ApiKey, KeyStore, check_namespace
from analogist.service.runtime import BodyLimit, Jobs, Metrics, RateLimiter

__all__ = ["DEFAULT_MAX_BODY", "DEFAULT_RATE", "ApiError", "create_app", "serve"]

DEFAULT_MAX_BODY = 1_000_000
DEFAULT_RATE = 600.0
MAX_BULK = 1000

_EVAL_DDL = """CREATE TABLE IF NOT EXISTS api_eval_runs (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    created_at TEXT NOT NULL,
    retriever TEXT NOT NULL,
    runs INTEGER NOT NULL,
    summary TEXT NOT NULL,
    result TEXT NOT NULL
)"""


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
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Ref(_Body):
    """A signature given inline (``signature``) or a stored episode of the namespace
    (``episode``: row id or episode id)."""

    signature: dict[str, Any] | None = None
    episode: int | str | None = None


class BulkBody(_Body):
    episodes: list[dict[str, Any]] = Field(..., min_length=1, max_length=MAX_BULK)


class SupersedeBody(_Body):
    by: int | str = Field(..., description="The episode (row id or episode id) that replaces it.")


class FindBody(_Body):
    target: dict[str, Any] | None = Field(None, description="The target Signature.")
    episode: int | str | None = Field(None, description="Or a stored episode as the target.")
    k: int = Field(5, ge=1, le=50)


class MapBody(_Body):
    base: Ref
    target: Ref


class ForesightBody(_Body):
    target: dict[str, Any] = Field(..., description="The target Event (foresight event format).")
    cutoff: str | None = None
    rounds: int = Field(1, ge=0, le=5)
    per_round: int = Field(8, ge=1, le=16)
    carryover: int = Field(8, ge=0, le=16)
    embedding: bool = Field(True, description="Use the text-embedding channel in MAC.")


class CheckBody(_Body):
    turn: dict[str, Any] | str
    mode: Literal["strict", "advisory"] | None = None


class EncodeBody(_Body):
    text: str = Field(..., min_length=1)
    episode_id: str | None = None
    domain: str | None = None
    writer: Literal["llm", "deterministic"] = DEFAULT_WRITER
    store: bool = True


class EvalBody(_Body):
    gold: dict[str, Any]
    retriever: Literal["fused", "structural", "surface", "associative"] = "structural"
    runs: int = Field(1, ge=1, le=5)


# -- the service state ---------------------------------------------------------------------
class _Local(threading.local):
    memory: Memory | None = None
    keys: KeyStore | None = None
    retrievers: dict[str, Any]

    def __init__(self) -> None:
        self.retrievers = {}


class _Service:
    def __init__(self, store_path: str, max_body: int, rate: float, job_workers: int) -> None:
        self.store_path = store_path
        self.max_body = max_body
        self.limiter = RateLimiter(rate)
        self.metrics = Metrics()
        self.jobs = Jobs(workers=job_workers)
        self.local = _Local()
        self._lock = threading.Lock()
        self._check_lock = threading.Lock()
        self._embedder: Any = None
        self._encoder: Any = None
        self._safeguard: Any = None
        self._corpus: Any = None
        self._conns: list[Any] = []

    def memory(self) -> Memory:
        loc = self.local
        if loc.memory is None:
            loc.memory = Memory.open(self.store_path)
            with self._lock:
                self._conns.append(loc.memory)
        return loc.memory

    def keys(self) -> KeyStore:
        loc = self.local
        if loc.keys is None:
            loc.keys = KeyStore(self.store_path)
            with self._lock:
                self._conns.append(loc.keys)
        return loc.keys

    def retriever(self, ns: str) -> Any:
        from analogist.retrieve import Retriever

        r = self.local.retrievers.get(ns)
        if r is None:
            r = self.local.retrievers[ns] = Retriever(self.memory(), ns, embedder="auto")
        return r

    def embedder(self) -> Any:
        with self._lock:
            if self._embedder is None:
                from analogist.index.embed import default_embedder

                self._embedder = default_embedder()
            return self._embedder

    def encoder(self) -> Any:
        emb = self.embedder()
        with self._lock:
            if self._encoder is None:
                from analogist.encode.deterministic import DeterministicEncoder

                self._encoder = DeterministicEncoder(embedder=emb)
            return self._encoder

    def safeguard(self) -> Any:
        with self._lock:
            if self._safeguard is None:
                from analogist.safeguard import Safeguard

                self._safeguard = Safeguard()
            return self._safeguard

    def corpus(self) -> Any:
        with self._lock:
            if self._corpus is None:
                from analogist.foresight.event import load_corpus

                self._corpus = load_corpus()
            return self._corpus

    def close(self) -> None:
        self.jobs.shutdown()
        with self._lock:
            for c in self._conns:
                with contextlib.suppress(Exception):  # other threads' connections
                    c.close()
            self._conns.clear()


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


# -- the app -------------------------------------------------------------------------------
def create_app(store_path: str | Path, *, max_body_bytes: int = DEFAULT_MAX_BODY,
               rate_per_minute: float = DEFAULT_RATE, job_workers: int = 2,
               mount_viewer: bool = True) -> FastAPI:
    """The FastAPI app over the store at ``store_path`` (created when missing).

    Args:
        store_path: the SQLite store; API keys live in its ``api_keys`` table
            (``analogist keys add``).
        max_body_bytes: larger request bodies are refused with 413.
        rate_per_minute: requests per minute per key (token bucket, bursts up to the same
            number); ``<= 0`` turns rate limiting off.
        job_workers: threads for background jobs (encoding, eval runs).
        mount_viewer: mount ``analogist.viewer``'s router when that package is importable.
    """
    store = str(store_path)
    if store != ":memory:":
        Path(store).parent.mkdir(parents=True, exist_ok=True)
    if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int) \
            or max_body_bytes < 1:
        raise AnalogistError("max_body_bytes must be a positive integer", field="max_body_bytes")
    Memory.open(store).close()                       # create / migrate before serving
    KeyStore(store).close()
    with sqlite3.connect(store, timeout=30.0) as c:
        c.execute(_EVAL_DDL)
    c.close()
    svc = _Service(store, max_body_bytes, float(rate_per_minute), job_workers)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> Any:
        yield
        svc.close()

    app = FastAPI(
        title="analogist", lifespan=lifespan,
        summary="Find, map and check analogies by structure — HTTP API.",
        description=(__doc__ or "").split("\n\n")[1],
        version=__import__("analogist").__version__,
    )
    app.state.service = svc

    # -- errors --------------------------------------------------------------------------
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, e: ApiError) -> JSONResponse:
        return _err(e.status, e.type, e.message, e.field, e.headers)

    @app.exception_handler(AnalogistError)
    async def _analogist_error(_: Request, e: AnalogistError) -> JSONResponse:
        status = 404 if isinstance(e, NotFoundError) else \
            409 if isinstance(e, DuplicateEpisodeError) else 400
        return _err(status, type(e).__name__, str(e), e.field)

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
            loc = ".".join(str(p) for p in x.get("loc", ()) if p != "body") or "body"
            first_field = first_field or loc
            msgs.append(f"{loc}: {x.get('msg')}")
        return _err(422, "invalid_request", "; ".join(msgs), first_field)

    # -- metrics and limits (pure ASGI middlewares; BodyLimit outermost) ------------------
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
                await send(msg)

            try:
                await self.app(scope, receive, send_)
            finally:
                route = scope.get("route")
                name = f"{scope['method']} {getattr(route, 'path', 'unmatched')}"
                svc.metrics.record(name, status["code"], (time.perf_counter() - t0) * 1000)

    app.add_middleware(_Timing)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)

    # -- auth ----------------------------------------------------------------------------
    def caller(request: Request) -> ApiKey:
        auth = request.headers.get("authorization", "")
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else \
            request.headers.get("x-api-key")
        if not token:
            raise ApiError(401, "unauthorized", "an API key is required: send 'Authorization: "
                           "Bearer <key>' or 'X-API-Key: <key>' (make one with 'analogist keys "
                           "add')", "authorization", {"WWW-Authenticate": "Bearer"})
        key = svc.keys().verify(token)
        if key is None:
            raise ApiError(401, "unauthorized", "the API key is not valid (unknown, malformed "
                           "or revoked)", "authorization", {"WWW-Authenticate": "Bearer"})
        ok, wait = svc.limiter.allow(key.key_id)
        if not ok:
            raise ApiError(429, "rate_limited", f"rate limit of {svc.limiter.rate * 60:g} "
                           f"requests per minute exceeded for key {key.name!r}; retry in "
                           f"{wait:.1f} s", None, {"Retry-After": str(max(1, round(wait)))})
        return key

    def namespace_access(namespace: Annotated[str, PathParam(
            description="The namespace (a hard partition of the store).")],
            key: Annotated[ApiKey, Depends(caller)]) -> str:
        if namespace not in key.namespaces:
            raise ApiError(403, "forbidden", f"this key is not bound to namespace "
                           f"{namespace[:100]!r}", "namespace")
        return check_namespace(namespace)

    NS = Annotated[str, Depends(namespace_access)]

    def _sig_of(ref: Ref, ns: str, field: str) -> Any:
        from analogist.signature import validate_signature

        if (ref.signature is None) == (ref.episode is None):
            raise ApiError(422, "invalid_request", "give exactly one of 'signature' and "
                           "'episode'", field)
        if ref.signature is not None:
            try:
                return validate_signature(ref.signature)
            except AnalogistError as e:
                raise ApiError(400, type(e).__name__, str(e),
                               f"{field}.signature" + (f".{e.field}" if e.field else "")) \
                    from None
        ep = svc.memory().get(_key_of(ref.episode), ns)   # type: ignore[arg-type]
        if ep is None:
            raise ApiError(404, "not_found", f"no episode {ref.episode!r} in namespace {ns!r}",
                           f"{field}.episode")
        return ep.signature

    # -- health and metrics ------------------------------------------------------------
    @app.get("/v1/health", tags=["service"], summary="Liveness and store check (no key).")
    def health() -> dict[str, Any]:
        m = svc.memory()
        return {"status": "ok", "schema_version": m.schema_version(),
                "version": app.version}

    @app.get("/v1/metrics", tags=["service"],
             summary="Request counts, errors and latency percentiles per route (any valid key).")
    def metrics(key: Annotated[ApiKey, Depends(caller)]) -> dict[str, Any]:
        return svc.metrics.snapshot()

    @app.get("/v1/whoami", tags=["service"], summary="The calling key's name and namespaces.")
    def whoami(key: Annotated[ApiKey, Depends(caller)]) -> dict[str, Any]:
        return {"name": key.name, "namespaces": sorted(key.namespaces)}

    # -- episodes ------------------------------------------------------------------------
    P = "/v1/ns/{namespace}"

    @app.post(P + "/episodes", status_code=201, tags=["episodes"],
              summary="Store one episode (a Signature object as the body).")
    def create_episode(ns: NS, signature: dict[str, Any]) -> dict[str, Any]:
        sid = svc.memory().add(signature, namespace=ns)
        ep = svc.memory().get(sid, ns)
        return {"id": sid, "episode_id": ep.episode_id if ep else None, "namespace": ns}

    @app.post(P + "/episodes/bulk", status_code=201, tags=["episodes"],
              summary=f"Store up to {MAX_BULK} episodes in one transaction (all or nothing).")
    def bulk_create(ns: NS, body: BulkBody) -> dict[str, Any]:
        ids = svc.memory().add_many(body.episodes, namespace=ns,
                                    batch_size=len(body.episodes))
        return {"ids": ids, "count": len(ids), "namespace": ns}

    @app.get(P + "/episodes", tags=["episodes"], summary="List episodes in id order.")
    def list_episodes(ns: NS, limit: Annotated[int, Query(ge=1, le=1000)] = 100,
                      offset: Annotated[int, Query(ge=0)] = 0,
                      include_superseded: bool = False, full: bool = False) -> dict[str, Any]:
        m = svc.memory()
        eps = m.list(ns, include_superseded=include_superseded, limit=limit, offset=offset)
        items = [_episode_json(e) if full else
                 {k: v for k, v in _episode_json(e).items() if k != "signature"} for e in eps]
        return {"namespace": ns, "total": m.count(ns, include_superseded=include_superseded),
                "episodes": items}

    @app.get(P + "/episodes/{key}", tags=["episodes"],
             summary="One episode by row id (digits) or episode id.")
    def get_episode(ns: NS, key: str) -> dict[str, Any]:
        ep = svc.memory().get(_key_of(key), ns)
        if ep is None:
            raise ApiError(404, "not_found", f"no episode {key!r} in namespace {ns!r}", "key")
        return _episode_json(ep)

    @app.delete(P + "/episodes/{key}", tags=["episodes"], summary="Delete one episode.")
    def delete_episode(ns: NS, key: str) -> dict[str, Any]:
        if not svc.memory().delete(_key_of(key), ns):
            raise ApiError(404, "not_found", f"no episode {key!r} in namespace {ns!r}", "key")
        return {"deleted": key, "namespace": ns}

    @app.post(P + "/episodes/{key}/supersede", tags=["episodes"],
              summary="Mark an episode as superseded by another of the same namespace.")
    def supersede(ns: NS, key: str, body: SupersedeBody) -> dict[str, Any]:
        svc.memory().supersede(_key_of(key), _key_of(body.by), ns)
        return {"superseded": key, "by": body.by, "namespace": ns}

    # -- find, map, foresight, check ---------------------------------------------------
    @app.post(P + "/find", tags=["analogy"],
              summary="MAC/FAC retrieval plus the judge (Retriever.find) within the namespace.")
    def find(ns: NS, body: FindBody) -> dict[str, Any]:
        target = _sig_of(Ref(signature=body.target, episode=body.episode), ns, "target")
        res = svc.retriever(ns).find(target, k=body.k)
        return res.to_json()

    @app.post(P + "/map", tags=["analogy"],
              summary="Map base onto target with SME and judge it (likeness/difference/unknown).")
    def map_(ns: NS, body: MapBody) -> dict[str, Any]:
        from analogist.judge import JudgeParams, judge_mapping
        from analogist.signature import compile_signature
        from analogist.sme import match

        b, t = _sig_of(body.base, ns, "base"), _sig_of(body.target, ns, "target")
        params = JudgeParams()
        bd, td = compile_signature(b), compile_signature(t)
        result = match(bd, td, params.sme)
        report = judge_mapping(b, t, bd, td, result, params=params)
        best = result.best
        return {"report": report.to_json(), "rendered": report.render(),
                "mapping": None if best is None else best.to_json(),
                "mappings": len(result.mappings)}

    @app.post(P + "/foresight", tags=["analogy"],
              summary="Foresight brief for a target Event over the bundled historical corpus "
                      "plus the namespace's event episodes.")
    def foresight(ns: NS, body: ForesightBody) -> dict[str, Any]:
        from analogist.foresight.brief import brief_data
        from analogist.foresight.event import event_from_signature, validate_event
        from analogist.foresight.loop import ForesightParams, run_foresight

        try:
            ev = validate_event(body.target, source="target")
        except AnalogistError as e:
            raise ApiError(400, type(e).__name__, str(e),
                           "target" + (f".{e.field}" if e.field else "")) from None
        tv = ev.at_cutoff(body.cutoff)
        corpus = svc.corpus()
        pool = [e for e in corpus.events if e.event_id != ev.event_id]
        seen = {e.event_id for e in pool}
        for row in svc.memory().list(ns):
            mev = event_from_signature(row.signature)
            if mev is not None and mev.event_id not in seen:
                pool.append(mev)
                seen.add(mev.event_id)
        params = ForesightParams.calibrated(rounds=body.rounds, per_round=body.per_round,
                                            carryover=body.carryover)
        res = run_foresight(tv, pool, params=params, corpus=corpus,
                            embedder=svc.embedder() if body.embedding else None)
        from analogist.llm.base import NO_LLM_REASON
        from analogist.llm.client import default_provider

        why = NO_LLM_REASON if default_provider("parametric") is None else \
            "skipped: the HTTP API does not ask the LLM (use 'analogist foresight brief')"
        res = replace(res, skipped=(*res.skipped, "parametric candidates: " + why))
        return {"namespace": ns, "pool_size": len(pool), **brief_data(res),
                "skipped": list(res.skipped)}

    @app.post(P + "/check", tags=["analogy"],
              summary="Check the analogies of a debate turn (Safeguard.check).")
    def check(ns: NS, body: CheckBody) -> dict[str, Any]:
        from analogist.safeguard import parse_turn

        turn = body.turn if isinstance(body.turn, str) else parse_turn(body.turn, source="turn")
        if isinstance(turn, str) and not turn.strip():
            raise ApiError(422, "invalid_request", "the turn is empty", "turn")
        with svc._check_lock:
            report = svc.safeguard().check(turn, mode=body.mode)
        return {"namespace": ns, "all_pass": report.all_pass, **report.details()}

    # -- jobs: encode and eval -----------------------------------------------------------
    def _job_json(job: Any) -> dict[str, Any]:
        return {**job.to_json(), "href": f"/v1/ns/{job.namespace}/jobs/{job.id}"}

    @app.post(P + "/encode", status_code=202, tags=["jobs"],
              summary="Encode text into a signature as a background job (LLM or deterministic "
                      "writer); stores it when 'store' is true.")
    def encode(ns: NS, body: EncodeBody) -> dict[str, Any]:
        def run() -> tuple[str, Any]:
            from analogist.llm.base import NO_LLM_REASON

            if body.writer == "llm":
                from analogist.llm.client import default_provider

                prov = default_provider("writer")
                if prov is None:
                    return "skipped", {"reason": NO_LLM_REASON}
                from analogist.encode.llm_writer import LLMWriter

                writer: Any = LLMWriter(prov)
            else:
                writer = svc.encoder()
            res = writer.encode(body.text, episode_id=body.episode_id, domain=body.domain,
                                source=body.episode_id or "<text>")
            out: dict[str, Any] = {"writer": res.writer, "signature": res.signature.to_data(),
                                   "notes": list(res.notes), "stored_id": None}
            if body.store:
                out["stored_id"] = svc.memory().add(res.signature, namespace=ns)
            return "done", out

        return _job_json(svc.jobs.submit(ns, "encode", run, _error_json))

    @app.post(P + "/eval/runs", status_code=202, tags=["jobs"],
              summary="Run a posted gold set against the namespace (run_goldset) as a job; "
                      "the result is stored as an eval run.")
    def eval_run(ns: NS, body: EvalBody) -> dict[str, Any]:
        from analogist.bench.harness.goldset import goldset_from_json

        gold = goldset_from_json(body.gold, source="gold")

        def run() -> tuple[str, Any]:
            from analogist.bench.harness.runner import run_goldset

            res = run_goldset(gold, svc.store_path, body.retriever, runs=body.runs,
                              namespace=ns, embedder=svc.embedder(), encoder=svc.encoder())
            summary = res["runs"][-1]["summary"]
            m = svc.memory()
            with m._tx() as c:
                cur = c.execute(
                    "INSERT INTO api_eval_runs(namespace, created_at, retriever, runs, summary, "
                    "result) VALUES (?, ?, ?, ?, ?, ?)",
                    (ns, datetime.now(UTC).isoformat(), body.retriever, body.runs,
                     json.dumps(summary), json.dumps(res)))
            return "done", {"run_id": cur.lastrowid, "summary": summary}

        return _job_json(svc.jobs.submit(ns, "eval", run, _error_json))

    @app.get(P + "/eval/runs", tags=["jobs"], summary="Stored eval runs of the namespace.")
    def eval_runs(ns: NS) -> dict[str, Any]:
        rows = svc.memory().conn.execute(
            "SELECT id, created_at, retriever, runs, summary FROM api_eval_runs "
            "WHERE namespace = ? ORDER BY id", (ns,)).fetchall()
        return {"namespace": ns, "runs": [
            {"id": r[0], "created_at": r[1], "retriever": r[2], "runs": r[3],
             "summary": json.loads(r[4])} for r in rows]}

    @app.get(P + "/eval/runs/{run_id}", tags=["jobs"], summary="One stored eval run in full.")
    def eval_run_get(ns: NS, run_id: int) -> dict[str, Any]:
        r = svc.memory().conn.execute(
            "SELECT result FROM api_eval_runs WHERE namespace = ? AND id = ?",
            (ns, run_id)).fetchone()
        if r is None:
            raise ApiError(404, "not_found", f"no eval run {run_id} in namespace {ns!r}",
                           "run_id")
        return json.loads(r[0])

    @app.get(P + "/jobs/{job_id}", tags=["jobs"], summary="A background job's status/result.")
    def get_job(ns: NS, job_id: str) -> dict[str, Any]:
        job = svc.jobs.get(job_id)
        if job is None or job.namespace != ns:
            raise ApiError(404, "not_found", f"no job {job_id[:64]!r} in namespace {ns!r}",
                           "job_id")
        return _job_json(job)

    # -- the mapping viewer (engineer C), mounted lazily ----------------------------------
    if mount_viewer:
        try:
            from analogist.viewer import viewer_router
        except ImportError:
            viewer_router = None  # type: ignore[assignment]
        if viewer_router is not None:
            def namespace_guard(key: Annotated[ApiKey, Depends(caller)]) -> set[str]:
                return set(key.namespaces)

            router = viewer_router(store, namespace_guard=namespace_guard)
            app.include_router(router)
            try:
                app.openapi()
            except Exception:  # noqa: BLE001 - keep the API's own OpenAPI document usable
                app.openapi_schema = None
                for r in app.routes:
                    if getattr(r, "path", "").startswith("/viewer"):
                        r.include_in_schema = False  # type: ignore[attr-defined]

    return app


def serve(store_path: str | Path, *, host: str = "127.0.0.1", port: int = 8765,
          max_body_bytes: int = DEFAULT_MAX_BODY, rate_per_minute: float = DEFAULT_RATE,
          log_level: str = "warning") -> None:
    """``analogist serve``: run the app with uvicorn until interrupted."""
    import uvicorn

    app = create_app(store_path, max_body_bytes=max_body_bytes, rate_per_minute=rate_per_minute)
    uvicorn.run(app, host=host, port=port, log_level=log_level)
