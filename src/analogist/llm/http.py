"""The one HTTP layer under both OpenAI-compatible clients (chat completions and embeddings).

:class:`JsonHttp` POSTs JSON over one ``httpx.Client`` and owns everything about the transport
that the two clients used to do twice, each in its own way:

* **timeouts** — ``timeout_s`` per request, shortened to what is left of a caller's ``deadline``
  (an absolute :func:`time.monotonic` value: the per-call time budget);
* **retries** — 429, 500, 502, 503, 504 and transport errors, at most ``max_retries`` times, with
  exponential backoff from ``backoff_base_s`` capped at ``backoff_max_s`` and jitter drawn from
  ``random.Random(seed)`` (a reproducible schedule); a 429's ``Retry-After`` seconds are honoured
  (capped the same way);
* **two exceptions to retrying**: a retryable response the caller recognises as final (``final``:
  e.g. a 500 whose body says the structured-output format is unsupported — resending it cannot
  help) is returned at once; and a timed-out request is resent only when ``resend_timeouts`` is
  true (a deterministic generation that ran past the timeout would only run past it again);
* **error mapping** — every failure becomes the caller's ``error`` class (``timeout_error`` for a
  timeout) with the URL, the attempt count and the server's own message
  (:func:`server_message`: OpenAI-, Ollama- and FastAPI-style error bodies).

Any other response (2xx, or a 4xx that is not 429) is returned to the caller, which decides
what it means.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from analogist.errors import AnalogistError

__all__ = ["RETRY_STATUSES", "Attempts", "JsonHttp", "excerpt", "server_message"]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def excerpt(text: str, limit: int = 300) -> str:
    """``text`` on one line, cut to ``limit`` characters (with an ellipsis)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def server_message(resp: httpx.Response) -> str:
    """The error message in an OpenAI-style (or Ollama-/FastAPI-style) body, else an excerpt."""
    try:
        body = resp.json()
    except ValueError:
        return excerpt(resp.text) or "(empty body)"
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
        for key in ("message", "detail"):
            if isinstance(body.get(key), str):
                return str(body[key])
    return excerpt(resp.text)


class Attempts:
    """A counter of the requests one logical call made (retries included)."""

    __slots__ = ("attempts",)

    def __init__(self) -> None:
        self.attempts = 0


class JsonHttp:
    """JSON POSTs with timeouts, retries, backoff and error mapping (see the module docstring)."""

    def __init__(self, *, timeout_s: float, max_retries: int, backoff_base_s: float,
                 backoff_max_s: float, seed: int | None = None, api_key: str | None = None,
                 transport: httpx.BaseTransport | None = None,
                 error: type[AnalogistError] = AnalogistError,
                 timeout_error: type[AnalogistError] | None = None,
                 timeout_hint: str = "") -> None:
        if max_retries < 0 or timeout_s <= 0 or backoff_base_s < 0 or backoff_max_s <= 0:
            raise AnalogistError("HTTP settings: expected timeout_s > 0, max_retries >= 0, "
                                 "backoff_base_s >= 0 and backoff_max_s > 0")
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_base_s = float(backoff_base_s)
        self.backoff_max_s = float(backoff_max_s)
        self.error = error
        self.timeout_error = timeout_error or error
        self.timeout_hint = timeout_hint
        self._rng = random.Random(seed if seed is not None else 0)
        headers = {"Accept": "application/json", "User-Agent": "analogist"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(timeout=httpx.Timeout(self.timeout_s), headers=headers,
                                    transport=transport)
        self._lock = threading.Lock()

    def close(self) -> None:
        self._client.close()

    def backoff(self, retry: int, resp: httpx.Response | None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based) after ``resp``."""
        if resp is not None and resp.status_code == 429:
            after = resp.headers.get("Retry-After")
            if after is not None:
                try:
                    return min(max(0.0, float(after)), self.backoff_max_s)
                except ValueError:
                    pass  # an HTTP date: fall back to exponential backoff
        delay = self.backoff_base_s * (2 ** retry)
        with self._lock:
            jitter = 0.5 + self._rng.random() / 2
        return min(delay * jitter, self.backoff_max_s)

    def post(self, url: str, payload: Mapping[str, Any], *, counter: Attempts | None = None,
             deadline: float | None = None, resend_timeouts: bool = True,
             final: Callable[[httpx.Response], bool] | None = None,
             expected: str = "a JSON reply") -> httpx.Response:
        """POST ``payload`` to ``url``; the response of the first non-retried attempt.

        Raises ``error`` after the retries (or ``timeout_error`` for a timeout), naming the URL,
        the attempts and the last failure; ``expected`` completes the message ("expected ...").
        """
        counter = counter if counter is not None else Attempts()
        for retry in range(self.max_retries + 1):
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise self.timeout_error(
                    f"POST {url}: the call's time budget ran out after {counter.attempts} "
                    f"attempt(s); expected {expected} within the budget")
            timeout = self.timeout_s if left is None else min(self.timeout_s, left)
            counter.attempts += 1
            resp: httpx.Response | None = None
            last = retry >= self.max_retries
            try:
                resp = self._client.post(url, json=dict(payload),
                                         timeout=httpx.Timeout(timeout))
            except httpx.TimeoutException as e:
                if last or not resend_timeouts:
                    why = ("" if resend_timeouts else "; not resent: the request is "
                           "deterministic, so it would only run as long again")
                    raise self.timeout_error(
                        f"POST {url}: no answer within {timeout:g}s ({type(e).__name__}) after "
                        f"{counter.attempts} attempt(s){why}; expected {expected} within the "
                        f"timeout{self.timeout_hint}") from None
            except httpx.TransportError as e:
                if last:
                    raise self.error(f"POST {url}: gave up after {counter.attempts} "
                                     f"attempt(s); transport error {type(e).__name__}: {e}; "
                                     "expected a reachable server") from None
            else:
                if resp.status_code not in RETRY_STATUSES or (final is not None and final(resp)):
                    return resp
                if last:
                    raise self.error(f"POST {url}: gave up after {counter.attempts} "
                                     f"attempt(s); last answer HTTP {resp.status_code}: "
                                     f"{server_message(resp)} (expected {expected})")
            wait = self.backoff(retry, resp)
            if deadline is not None:
                wait = min(wait, max(0.0, deadline - time.monotonic()))
            time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def post_json(self, url: str, payload: Mapping[str, Any], **kw: Any) -> Any:
        """:meth:`post`, then the decoded JSON of a 2xx reply; any other status is an error."""
        resp = self.post(url, payload, **kw)
        if resp.status_code >= 300:
            raise self.error(f"POST {url} → HTTP {resp.status_code}: {server_message(resp)}")
        try:
            return resp.json()
        except ValueError:
            raise self.error(f"POST {url}: response is not JSON (HTTP {resp.status_code}, body "
                             f"starts {excerpt(resp.text, 120)!r})") from None
