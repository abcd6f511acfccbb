"""What every provider does around the model: cache, validation, repair rounds, budgets, accounting.

:class:`StructuredProvider` implements :meth:`~analogist.llm.base.LLMProvider.complete_json` once;
a back-end (:class:`~analogist.llm.client.OpenAICompatibleClient` over HTTP,
:class:`~analogist.llm.local.LocalLlamaProvider` in-process) supplies only :meth:`_round`, one
request to the model. Each call:

1. refuses at once (:class:`~analogist.llm.base.LLMBudgetExceeded`) when the provider's run
   budget (``run_budget_tokens`` / ``run_budget_s``) is already spent;
2. looks the request up in the response cache (when one is configured);
3. sends it with ``max_tokens`` = the configured value, else :func:`schema_max_tokens` of the
   schema (so a constrained generation can never run on unbounded);
4. parses the reply (```` ```json ```` fences stripped; the outermost JSON object taken when prose
   surrounds it) and validates it with ``jsonschema`` (Draft 2020-12). An invalid reply gets up
   to ``repair_retries`` repair rounds — the bad reply appended as the assistant's turn, a user
   turn stating the exact parse/validation error — unless the call's budget
   (``call_budget_tokens`` / ``call_budget_s``) is spent first;
5. accounts tokens, wall time, attempts and repairs in the result and in :attr:`usage` — a
   failed call too: it is counted in ``calls`` and ``failures``, and the raised
   :class:`~analogist.llm.base.LLMError` carries its accounting in ``usage``.
"""

from __future__ import annotations

import abc
import dataclasses
import json
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from analogist.errors import AnalogistError
from analogist.llm.base import (
    LLMBudgetExceeded,
    LLMError,
    LLMResponseError,
    LLMResult,
    Message,
    Usage,
)
from analogist.llm.cache import ResponseCache, cache_key
from analogist.llm.config import LLMConfig
from analogist.llm.http import excerpt
from analogist.signature import TAG_PATTERN

__all__ = ["CallState", "Reply", "StructuredProvider", "bounded_schema", "parse_json_object",
           "schema_errors", "schema_instruction", "schema_max_tokens"]

_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)

#: bounds :func:`bounded_schema` puts on strings (characters) and arrays (items), by key
LONG_TEXT_KEYS = frozenset({"L0", "L1", "L2", "L3"})
NAME_KEYS = frozenset({"tag", "predicate", "name", "target_role", "analogue_role",
                       "candidate_role", "query_role", "part", "choice", "kind", "domain"})
SHORT_LIST_KEYS = frozenset({"args"})
MAX_LONG_TEXT = 600
MAX_TEXT = 160
MAX_NAME = 40
MAX_ITEMS = 6
MAX_SHORT_ITEMS = 3
MAX_TOKENS_CAP = 4096
MIN_TOKENS = 128


def parse_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a model reply: fences stripped, surrounding prose tolerated.

    Raises ``ValueError`` with the decoder's message (line/column) when there is none.
    """
    candidate = text.strip()
    fence = _FENCE_RE.search(candidate)
    if fence:
        candidate = fence.group(1).strip()
    if not candidate:
        raise ValueError("the reply is empty; expected a JSON object")
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError as first:
        decoder = json.JSONDecoder()
        for i, ch in enumerate(candidate):
            if ch != "{":
                continue
            try:
                value, _end = decoder.raw_decode(candidate, i)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
        raise ValueError(f"the reply is not valid JSON: {first.msg} at line {first.lineno} "
                         f"column {first.colno} (char {first.pos})") from None
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object at the top level, got {type(value).__name__}")
    return value


def schema_errors(validator: Draft202012Validator, data: Any, limit: int = 5) -> list[str]:
    """Human-readable validation errors, ``at $.path: message``, at most ``limit``."""
    out = []
    for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path))):
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.path)
        out.append(f"at {path}: {err.message}")
        if len(out) >= limit:
            break
    return out


def schema_instruction(schema: Mapping[str, Any], schema_name: str) -> str:
    """The system-message text that asks for JSON valid against ``schema`` (schema in prompt)."""
    return (f"Reply with a single JSON object only (no prose, no code fences) named "
            f"'{schema_name}' that validates against this JSON Schema:\n"
            + json.dumps(schema, indent=None, sort_keys=True))


def _types(node: Mapping[str, Any]) -> list[str]:
    t = node.get("type")
    return [t] if isinstance(t, str) else [x for x in t or [] if isinstance(x, str)]


_ITEM_OF = {"args": "tag", "entities": "name"}
"""The key an array's items are bounded as (an ``args`` item is a role tag)."""


def _text_bound(key: str) -> int:
    if key in LONG_TEXT_KEYS:
        return MAX_LONG_TEXT
    return MAX_NAME if key in NAME_KEYS else MAX_TEXT


def _estimate(node: Any, key: str = "") -> float:
    """Upper estimate of the tokens a JSON value valid against ``node`` takes (see
    :func:`schema_max_tokens`)."""
    if not isinstance(node, Mapping):
        return 8.0
    if "enum" in node:
        return 2.0 + max((len(json.dumps(v)) for v in node["enum"]), default=1) / 2.0
    types = [t for t in _types(node) if t != "null"] or ["null"]
    t = types[0]
    if t == "string":
        return 2.0 + float(node.get("maxLength") or _text_bound(key)) / 3.0
    if t == "array":
        n = node.get("maxItems") or (MAX_SHORT_ITEMS if key in SHORT_LIST_KEYS else MAX_ITEMS)
        return 2.0 + float(n) * (1.0 + _estimate(node.get("items"), _ITEM_OF.get(key, "")))
    if t == "object":
        props = node.get("properties") or {}
        return 2.0 + sum(2.0 + len(k) / 3.0 + _estimate(v, k) for k, v in props.items())
    return 6.0


def schema_max_tokens(schema: Mapping[str, Any]) -> int:
    """A default ``max_tokens`` sized to ``schema``.

    An upper estimate of the reply's tokens when strings keep to :data:`MAX_TEXT` characters
    (:data:`MAX_LONG_TEXT` for the level texts, :data:`MAX_NAME` for tags,
    predicates and other names), arrays to :data:`MAX_ITEMS` items (:data:`MAX_SHORT_ITEMS` for
    an atom's ``args``) and one token covers about three characters — or to the schema's own
    ``maxLength`` / ``maxItems`` where it has them — clamped to [:data:`MIN_TOKENS`,
    :data:`MAX_TOKENS_CAP`].
    It bounds what a grammar-constrained generation can cost instead of letting it run to the
    timeout; a reply cut off by it reports ``finish_reason=length`` and gets a repair round.
    """
    return int(min(MAX_TOKENS_CAP, max(MIN_TOKENS, round(_estimate(schema)))))


def bounded_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with the bounds of :func:`schema_max_tokens` written in: every string without a
    ``maxLength`` gets one and every array without a ``maxItems`` gets one; role tags (``tag``
    and an atom's ``args``) get the signature's tag ``pattern``. Any JSON valid against the
    result is valid against ``schema`` (the reply is still validated against ``schema`` itself). Given to a grammar-constrained decoder, it keeps a
    small model from writing one string forever."""

    def walk(node: Any, key: str = "") -> Any:
        if isinstance(node, list):
            return [walk(x, key) for x in node]
        if not isinstance(node, Mapping):
            return node
        out = {k: (walk(v, _ITEM_OF.get(key, "")) if k == "items"
                   else walk(v, key) if k in ("anyOf", "oneOf", "allOf") else v)
               for k, v in node.items() if k != "properties"}
        if "properties" in node:
            out["properties"] = {k: walk(v, k) for k, v in node["properties"].items()}
        types = _types(node)
        if "string" in types and "enum" not in node and "maxLength" not in node:
            out["maxLength"] = _text_bound(key)
        if key == "tag" and "string" in types and "pattern" not in node:
            out["pattern"] = TAG_PATTERN   # a role tag (an atom's args are tags too)
        if "array" in types and "maxItems" not in node:
            out["maxItems"] = MAX_SHORT_ITEMS if key in SHORT_LIST_KEYS else MAX_ITEMS
        return out

    return walk(schema)


@dataclasses.dataclass
class Reply:
    """One model answer: content, the answering model, tokens, finish reason."""

    content: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None


class CallState:
    """Accounting for one complete_json call, kept even when it fails."""

    def __init__(self, deadline: float | None) -> None:
        self.attempts = 0
        self.repairs = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.deadline = deadline

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, reply: Reply) -> None:
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens


def is_deterministic(temperature: float, seed: int | None) -> bool:
    """Whether the same request gives the same generation: greedy decoding or a fixed seed."""
    return temperature == 0 or seed is not None


class StructuredProvider(abc.ABC):
    """The shared body of every provider (see the module docstring); subclasses set
    :attr:`where` (what error messages name) and implement :meth:`_round`."""

    where: str = "LLM"
    #: the structured-output mode recorded in results (``None`` when the back-end has none)
    _mode: str | None = None

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.model = config.model
        self.usage = Usage()
        self._cache = ResponseCache(config.cache_path) if config.cache_path else None
        self._validators: dict[str, Draft202012Validator] = {}

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the provider method ---------------------------------------------------------------------

    def complete_json(self, messages: Sequence[Message], schema: Mapping[str, Any], *,
                      schema_name: str = "output", temperature: float | None = None,
                      max_tokens: int | None = None) -> LLMResult:
        cfg = self.config
        temp = cfg.temperature if temperature is None else temperature
        max_tok = max_tokens if max_tokens is not None else cfg.max_tokens
        if max_tok is None:
            max_tok = schema_max_tokens(schema)
        msgs = _check_messages(messages)
        validator = self._validator(schema, schema_name)
        self._check_run_budget()
        key = cache_key(base_url=cfg.base_url, model=cfg.model, messages=msgs, schema=schema,
                        schema_name=schema_name, temperature=temp, max_tokens=max_tok,
                        structured=cfg.structured)
        hit = self._cached(key, validator)
        if hit is not None:
            return hit
        start = time.monotonic()
        state = CallState(None if cfg.call_budget_s is None else start + cfg.call_budget_s)
        try:
            result = self._complete(msgs, schema, schema_name, temp, max_tok, validator, state,
                                    key)
        except LLMError as e:
            e.usage = self._account_failure(state, time.monotonic() - start)
            raise
        result = dataclasses.replace(result, seconds=time.monotonic() - start)
        self.usage.add(result)
        if self._cache is not None:
            self._cache.put(key, {"data": result.data, "text": result.text,
                                  "model": result.model, "prompt_tokens": result.prompt_tokens,
                                  "completion_tokens": result.completion_tokens},
                            model=result.model)
        return result

    # -- what a back-end implements ----------------------------------------------------------------

    @abc.abstractmethod
    def _round(self, conversation: list[dict[str, str]], schema: Mapping[str, Any],
               schema_name: str, temp: float, max_tok: int, state: CallState) -> Reply:
        """One request to the model; count its attempts in ``state.attempts``."""

    # -- internals -------------------------------------------------------------------------------

    def _cached(self, key: str, validator: Draft202012Validator) -> LLMResult | None:
        if self._cache is None:
            return None
        hit = self._cache.get(key)
        if hit is None or not isinstance(hit.get("data"), dict) \
                or list(validator.iter_errors(hit["data"])):
            return None
        result = LLMResult(
            data=hit["data"], text=str(hit.get("text", "")),
            model=str(hit.get("model", self.config.model)), cached=True, seconds=0.0,
            attempts=0, request_hash=key,
            extra={"original_prompt_tokens": hit.get("prompt_tokens", 0),
                   "original_completion_tokens": hit.get("completion_tokens", 0)})
        self.usage.add(result)
        return result

    def _check_run_budget(self) -> None:
        cfg, u = self.config, self.usage
        if cfg.run_budget_tokens is not None and u.total_tokens >= cfg.run_budget_tokens:
            raise LLMBudgetExceeded(f"{self.where}: the run's token budget is spent "
                                    f"({u.total_tokens} >= {cfg.run_budget_tokens} tokens); "
                                    "raise ANALOGIST_LLM_RUN_BUDGET_TOKENS")
        if cfg.run_budget_s is not None and u.seconds >= cfg.run_budget_s:
            raise LLMBudgetExceeded(f"{self.where}: the run's time budget is spent "
                                    f"({u.seconds:.1f} >= {cfg.run_budget_s:g} s); raise "
                                    "ANALOGIST_LLM_RUN_BUDGET_S")

    def _check_call_budget(self, state: CallState, schema_name: str) -> None:
        cfg = self.config
        if cfg.call_budget_tokens is not None and state.tokens >= cfg.call_budget_tokens:
            raise LLMBudgetExceeded(f"{self.where}: {schema_name!r} spent its token budget "
                                    f"({state.tokens} >= {cfg.call_budget_tokens}) after "
                                    f"{state.repairs} repair round(s)")
        if state.deadline is not None and time.monotonic() >= state.deadline:
            raise LLMBudgetExceeded(f"{self.where}: {schema_name!r} spent its time budget "
                                    f"({cfg.call_budget_s:g} s) after {state.repairs} repair "
                                    "round(s)")

    def _validator(self, schema: Mapping[str, Any], schema_name: str) -> Draft202012Validator:
        sig = json.dumps(schema, sort_keys=True)
        v = self._validators.get(sig)
        if v is None:
            try:
                Draft202012Validator.check_schema(schema)
            except SchemaError as e:
                raise AnalogistError(f"JSON Schema {schema_name!r} is invalid: {e.message}; "
                                     "expected a draft 2020-12 schema") from None
            v = self._validators[sig] = Draft202012Validator(schema)
        return v

    def _account_failure(self, state: CallState, seconds: float) -> dict[str, Any]:
        record = {"calls": 1, "failures": 1, "prompt_tokens": state.prompt_tokens,
                  "completion_tokens": state.completion_tokens,
                  "total_tokens": state.tokens, "seconds": round(seconds, 4),
                  "retries": max(0, state.attempts - 1 - state.repairs),
                  "repairs": state.repairs}
        self.usage.add_failed(record)
        return record

    def _complete(self, msgs: list[dict[str, str]], schema: Mapping[str, Any], schema_name: str,
                  temp: float, max_tok: int, validator: Draft202012Validator,
                  state: CallState, key: str) -> LLMResult:
        conversation = list(msgs)
        while True:
            reply = self._round(conversation, schema, schema_name, temp, max_tok, state)
            state.add(reply)
            try:
                data = parse_json_object(reply.content)
                problems = schema_errors(validator, data)
                if problems:
                    raise ValueError("the JSON does not satisfy the schema: "
                                     + "; ".join(problems))
            except ValueError as e:
                last_error = str(e)
                if reply.finish_reason == "length":
                    last_error += (f" (finish_reason=length: the reply was cut off at "
                                   f"max_tokens={max_tok})")
                if state.repairs >= self.config.repair_retries:
                    raise LLMResponseError(
                        f"{self.where}: model {self.model!r} gave no schema-valid JSON "
                        f"for {schema_name!r} after {state.repairs} repair round(s); last error: "
                        f"{last_error}; last reply: {excerpt(reply.content, 200)!r}") from None
                self._check_call_budget(state, schema_name)
                state.repairs += 1
                conversation += [
                    {"role": "assistant", "content": reply.content},
                    {"role": "user", "content": (
                        f"Your previous reply could not be used: {last_error}. Reply again with "
                        f"only the corrected JSON object for '{schema_name}' that satisfies the "
                        "schema — no prose, no code fences.")},
                ]
                continue
            return LLMResult(data=data, text=reply.content, model=reply.model,
                             prompt_tokens=state.prompt_tokens,
                             completion_tokens=state.completion_tokens,
                             attempts=state.attempts, repairs=state.repairs, request_hash=key,
                             extra={"structured": self._mode, "max_tokens": max_tok})


def _check_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    if not messages:
        raise AnalogistError("complete_json: expected at least one chat message")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or not isinstance(m.get("role"), str) \
                or not isinstance(m.get("content"), str):
            raise AnalogistError(f"complete_json: messages[{i}] must be a mapping with "
                                 "string 'role' and 'content'")
        out.append({"role": m["role"], "content": m["content"]})
    return out


def parse_chat_completion(body: Any, where: str, model: str) -> Reply:
    """The :class:`Reply` in a ``chat.completion`` object (HTTP body or in-process dict)."""
    if not isinstance(body, dict):
        raise LLMError(f"{where}: expected a chat.completion object, got "
                       f"{excerpt(json.dumps(body, default=str))!r}")
    usage = body.get("usage")
    pt = ct = 0
    if isinstance(usage, dict):
        pt = int(usage.get("prompt_tokens") or 0)
        ct = int(usage.get("completion_tokens") or 0)
    try:
        choice = body["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise LLMError(f"{where}: no choices[0].message in "
                       f"{excerpt(json.dumps(body, default=str))!r}; expected a chat.completion "
                       "object") from None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        if isinstance(message, dict) and message.get("refusal"):
            raise LLMResponseError(f"model {model!r} refused: {message['refusal']}")
        what = ("tool_calls" if isinstance(message, dict) and message.get("tool_calls")
                else "a null content")
        raise LLMResponseError(f"model {model!r} answered with {what}; expected message "
                               "content holding a JSON object")
    answered = body.get("model") if isinstance(body.get("model"), str) else model
    return Reply(content, answered or model, pt, ct, choice.get("finish_reason"))
