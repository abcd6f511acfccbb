"""A real, local OpenAI-compatible chat-completions server for tests.

It runs the stdlib :class:`http.server.ThreadingHTTPServer` on ``127.0.0.1`` (an ephemeral port)
in a daemon thread and speaks the chat-completions protocol over real HTTP:

- ``POST /v1/chat/completions`` — the request body is *validated* against the protocol (see
  :func:`validate_chat_request`); an invalid request gets a 400 with an OpenAI-style error body
  ``{"error": {"message": ..., "type": "invalid_request_error"}}``. A valid one is answered from a
  script: a ``responder(request_json, call_index) -> Reply`` callable, or a list of :class:`Reply`
  consumed in order.
- ``GET /v1/models`` — lists the one model the server pretends to serve.

The replies are scripted model outputs written by the test authors, never a real model's output
and never a stand-in for one at run time. Usage::

    with ChatServer([Reply.json({"answer": 42})]) as srv:
        client = OpenAICompatibleClient(LLMConfig(base_url=srv.base_url, model="m"))
        ...
        assert srv.requests[0]["response_format"]["type"] == "json_schema"

``supports_json_schema=False`` makes the server refuse ``response_format`` of type
``json_schema`` with a 400 (as older llama.cpp servers do); ``supports_json_object=False`` refuses
``json_object`` too; ``format_refusal_status=500`` sends those refusals as HTTP 500 (as
llama-cpp-python's server answers a ``json_schema`` it cannot handle). :class:`Recorded` serves replies from a JSON file under ``tests/data/llm/``.
"""

from __future__ import annotations

import json as _json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from analogist.llm.client import forget_mode

ROLES = frozenset({"system", "user", "assistant", "tool"})
ALLOWED_KEYS = frozenset({"model", "messages", "temperature", "max_tokens", "response_format",
                          "seed", "top_p", "stream", "n", "stop", "user"})
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
               403: "permission_error", 404: "not_found_error", 422: "invalid_request_error",
               429: "rate_limit_error"}


@dataclass
class Reply:
    """One scripted server reply.

    ``content`` the assistant message content (``None`` for a null content); ``status`` the HTTP
    status; ``headers`` extra response headers (e.g. ``{"Retry-After": "1"}``); ``delay_s`` how
    long to wait before answering; ``usage`` ``(prompt_tokens, completion_tokens)`` or ``None`` for
    rough word counts, or ``False`` to omit the ``usage`` object; ``refusal`` a refusal text (the
    content is then null); ``error_message`` the error body's message for a non-200 status.
    """

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    usage: tuple[int, int] | None | bool = None
    refusal: str | None = None
    error_message: str | None = None
    finish_reason: str = "stop"

    @classmethod
    def json(cls, obj: Any, **kwargs: Any) -> Reply:
        """A 200 reply whose content is ``obj`` serialised as JSON."""
        return cls(content=_json.dumps(obj), **kwargs)

    @classmethod
    def error(cls, status: int, message: str | None = None, **kwargs: Any) -> Reply:
        """A non-200 reply with an OpenAI-style error body."""
        return cls(status=status, error_message=message, **kwargs)


Responder = Callable[[dict[str, Any], int], Reply]


def _words(text: str | None) -> int:
    return len(text.split()) if text else 0


def validate_chat_request(body: Any, *, supports_json_schema: bool = True,
                          supports_json_object: bool = True) -> str | None:
    """The first protocol violation in a chat-completions request body, or ``None`` if valid."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    unknown = sorted(set(body) - ALLOWED_KEYS)
    if unknown:
        return f"Unrecognized request argument supplied: {', '.join(unknown)}"
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        return "'model' must be a non-empty string"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            return f"messages[{i}] must be an object"
        if m.get("role") not in ROLES:
            return (f"messages[{i}].role must be one of {sorted(ROLES)}, "
                    f"got {m.get('role')!r}")
        if not isinstance(m.get("content"), str):
            return f"messages[{i}].content must be a string"
    if "temperature" in body:
        t = body["temperature"]
        if isinstance(t, bool) or not isinstance(t, int | float) or not 0 <= t <= 2:
            return "'temperature' must be a number between 0 and 2"
    if "top_p" in body:
        p = body["top_p"]
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
            return "'top_p' must be a number between 0 and 1"
    if "max_tokens" in body:
        mt = body["max_tokens"]
        if isinstance(mt, bool) or not isinstance(mt, int) or mt < 1:
            return "'max_tokens' must be a positive integer"
    if "seed" in body and (isinstance(body["seed"], bool) or not isinstance(body["seed"], int)):
        return "'seed' must be an integer"
    if body.get("stream", False) is not False:
        return "'stream' is not supported by this server; only false"
    if body.get("n", 1) != 1 or isinstance(body.get("n", 1), bool):
        return "'n' must be 1"
    if "stop" in body:
        s = body["stop"]
        if not (isinstance(s, str) or (isinstance(s, list)
                                       and all(isinstance(x, str) for x in s))):
            return "'stop' must be a string or an array of strings"
    if "user" in body and not isinstance(body["user"], str):
        return "'user' must be a string"
    if "response_format" in body:
        rf = body["response_format"]
        if not isinstance(rf, dict):
            return "'response_format' must be an object"
        kind = rf.get("type")
        if kind == "text":
            pass
        elif kind == "json_object":
            if not supports_json_object:
                return "response_format type 'json_object' is not supported by this server"
        elif kind == "json_schema":
            if not supports_json_schema:
                return ("response_format type 'json_schema' is not supported; "
                        "use {\"type\": \"json_object\"}")
            js = rf.get("json_schema")
            if not isinstance(js, dict):
                return "'response_format.json_schema' must be an object"
            if not isinstance(js.get("name"), str) or not js["name"]:
                return "'response_format.json_schema.name' must be a non-empty string"
            if not isinstance(js.get("schema"), dict):
                return "'response_format.json_schema.schema' must be an object"
            if "strict" in js and not isinstance(js["strict"], bool):
                return "'response_format.json_schema.strict' must be a boolean"
        else:
            return ("'response_format.type' must be one of 'text', 'json_object', "
                    f"'json_schema', got {kind!r}")
    return None


class Recorded:
    """A responder serving recorded replies from a JSON file.

    The file maps a routing key to a reply content (a string, or any JSON value which is served
    serialised). A request is routed to the first key that equals the request's
    ``response_format.json_schema.name``, else to the first key that occurs as a substring in a
    user message (the last user message first, so repair rounds still route). Keys starting with
    ``_`` are comments. A request no key matches gets a 400 naming the keys tried.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        data = _json.loads(self.path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError(f"{self.path}: expected a JSON object mapping routing key -> reply")
        self.replies: dict[str, str] = {
            k: v if isinstance(v, str) else _json.dumps(v)
            for k, v in data.items() if not k.startswith("_")}

    def route(self, request: Mapping[str, Any]) -> str | None:
        rf = request.get("response_format") or {}
        name = (rf.get("json_schema") or {}).get("name") if isinstance(rf, dict) else None
        if name in self.replies:
            return name
        users = [m.get("content") or "" for m in request.get("messages", [])
                 if m.get("role") == "user"]
        for text in reversed(users):
            for key in self.replies:
                if key in text:
                    return key
        return None

    def __call__(self, request: dict[str, Any], index: int) -> Reply:
        key = self.route(request)
        if key is None:
            return Reply.error(400, f"no recorded reply in {self.path.name} matches this "
                                    f"request (keys: {sorted(self.replies)})")
        return Reply(content=self.replies[key])


class ChatServer:
    """A real HTTP chat-completions server on 127.0.0.1 for the duration of a ``with`` block.

    ``responder`` a callable ``(request_json, call_index) -> Reply`` or a sequence of replies
    served in order (a request past the end gets a 500 and is recorded in :attr:`errors`).
    ``.base_url`` is ``http://127.0.0.1:PORT/v1``; ``.requests`` every JSON body received on the
    completions route (valid or not); ``.rejected`` the validation messages of the 400s sent.
    """

    def __init__(self, responder: Responder | Sequence[Reply] | None = None, *,
                 model: str = "test-model", supports_json_schema: bool = True,
                 supports_json_object: bool = True, format_refusal_status: int = 400) -> None:
        if responder is None:
            responder = []
        if callable(responder):
            self._responder: Responder = responder
        else:
            script = list(responder)

            def scripted(_req: dict[str, Any], i: int) -> Reply:
                if i >= len(script):
                    raise IndexError(f"request #{i + 1} but the script has only "
                                     f"{len(script)} replies")
                return script[i]

            self._responder = scripted
        self.model = model
        self.supports_json_schema = supports_json_schema
        self.supports_json_object = supports_json_object
        self.format_refusal_status = format_refusal_status
        self.requests: list[Any] = []
        self.rejected: list[str] = []
        self.errors: list[str] = []
        self._served = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        forget_mode(self.base_url + "/chat/completions")   # a new server: nothing learnt yet
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    # -- lifecycle -------------------------------------------------------------------------------

    def close(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ChatServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def calls(self) -> int:
        """How many valid completion requests were answered from the script."""
        return self._served

    # -- request handling ------------------------------------------------------------------------

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            index = self._served
            self._served += 1
        try:
            return self._responder(body, index)
        except Exception as e:  # surfaced to the test through .errors and a 500
            self.errors.append(f"{type(e).__name__}: {e}")
            return Reply.error(500, f"test responder failed: {e}")

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.refusal is not None:
            message = {"role": "assistant", "content": None, "refusal": reply.refusal}
        out: dict[str, Any] = {
            "id": f"chatcmpl-test-{self._served}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        }
        if reply.usage is not False:
            if isinstance(reply.usage, tuple):
                prompt, completion = reply.usage
            else:
                prompt = sum(_words(m.get("content")) for m in body.get("messages", []))
                completion = _words(reply.content)
            out["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                            "total_tokens": prompt + completion}
        return out

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def _send(self, status: int, payload: Any, headers: Mapping[str, str] = {}) -> None:
                data = _json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (e.g. its timeout fired first)

            def _error(self, status: int, message: str,
                       headers: Mapping[str, str] = {}) -> None:
                self._send(status, {"error": {
                    "message": message, "type": ERROR_TYPES.get(status, "server_error"),
                    "param": None, "code": status}}, headers)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [
                        {"id": server.model, "object": "model", "created": 0,
                         "owned_by": "analogist-tests"}]})
                else:
                    self._error(404, f"unknown route GET {self.path}")

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._error(404, f"unknown route POST {self.path}")
                    return
                try:
                    body = _json.loads(raw)
                except ValueError as e:
                    server.requests.append(raw.decode("utf-8", "replace"))
                    server.rejected.append(f"invalid JSON: {e}")
                    self._error(400, f"We could not parse the JSON body of your request: {e}")
                    return
                server.requests.append(body)
                problem = validate_chat_request(
                    body, supports_json_schema=server.supports_json_schema,
                    supports_json_object=server.supports_json_object)
                if problem is not None:
                    server.rejected.append(problem)
                    self._error(server.format_refusal_status if "response_format type" in problem
                                else 400, problem)
                    return
                reply = server._next_reply(body)
                if reply.delay_s > 0 and server._stop.wait(reply.delay_s):
                    return
                if reply.status != 200:
                    self._error(reply.status, reply.error_message
                                or f"scripted HTTP {reply.status}", reply.headers)
                    return
                self._send(200, server._completion(body, reply), reply.headers)

        return Handler
