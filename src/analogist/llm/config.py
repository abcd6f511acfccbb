"""Where the LLM endpoint comes from: explicit arguments, the environment, a TOML config file.

Precedence, highest first: explicit keyword overrides > environment variables > config file >
defaults. For a role other than the writer (``critic``, ``parametric``, …) the role's own settings
sit above the shared ones at each level: ``ANALOGIST_CRITIC_MODEL`` beats ``ANALOGIST_LLM_MODEL``,
and ``[llm.critic]`` beats ``[llm]``.

Environment variables::

    ANALOGIST_LLM_PROVIDER      openai (an OpenAI-compatible HTTP endpoint; the default) | local
                                (a GGUF file run in-process through llama.cpp; pip install
                                'analogist[local]')
    ANALOGIST_LLM_BASE_URL      e.g. http://localhost:8000/v1 (not used by the local provider)
    ANALOGIST_LLM_MODEL         the model name; for the local provider the path of a .gguf file
    ANALOGIST_LLM_API_KEY       (OPENAI_API_KEY is used when no other key is configured)
    ANALOGIST_LLM_TIMEOUT       seconds, > 0
    ANALOGIST_LLM_MAX_RETRIES   integer >= 0 (429 / 5xx / transport errors)
    ANALOGIST_LLM_STRUCTURED    auto | json_schema | json_object | none
    ANALOGIST_LLM_TEMPERATURE   0..2
    ANALOGIST_LLM_MAX_TOKENS    integer > 0 (default: sized to each call's schema)
    ANALOGIST_LLM_CALL_BUDGET_TOKENS / _CALL_BUDGET_S   one call's tokens / seconds, over its
                                retries and repair rounds
    ANALOGIST_LLM_RUN_BUDGET_TOKENS / _RUN_BUDGET_S     the provider's lifetime (one command,
                                one benchmark run); a call past either budget is refused
    ANALOGIST_LLM_CONTEXT       the local provider's context window in tokens (default 8192)
    ANALOGIST_LLM_THREADS       the local provider's CPU threads (default: all cores)
    ANALOGIST_LLM_CACHE         a path, "on" (the default path) or "off"
    ANALOGIST_CONFIG            the config file (default $XDG_CONFIG_HOME/analogist/config.toml,
                                else ~/.config/analogist/config.toml)
    ANALOGIST_<ROLE>_MODEL / _BASE_URL / _API_KEY / _TEMPERATURE   per role, e.g. ANALOGIST_CRITIC_MODEL

The text embedder's (:func:`embedding_settings`)::

    ANALOGIST_EMBEDDER          use (the default) | minilm | st:<model> | openai[:<model>]
    ANALOGIST_EMBED_BASE_URL    the OpenAI-compatible /v1/embeddings endpoint of ``openai``
    ANALOGIST_EMBED_MODEL       its model
    ANALOGIST_API_KEY           its key

Config file::

    [llm]
    base_url = "http://localhost:11434/v1"
    model = "qwen2.5:7b-instruct"
    cache = true              # or a path, or false
    [llm.critic]
    model = "llama3.1:8b-instruct"
    temperature = 0.7

The critic's temperature defaults to 0.7 — not to the writer's — so that the critic samples
independently of the writer; only a critic-specific setting (override, ``ANALOGIST_CRITIC_TEMPERATURE``
or ``[llm.critic] temperature``) changes it.

The LLM is optional: :func:`load_llm_config` returns ``None`` when no model is configured, or no
base URL for the (default) ``openai`` provider. Malformed values raise :class:`~analogist.errors.AnalogistError` naming the variable
or the file and line, and what was expected.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from analogist.errors import AnalogistError

STRUCTURED_MODES = ("auto", "json_schema", "json_object", "none")
PROVIDERS = ("openai", "local")
ROLE_DEFAULT_TEMPERATURE = {"critic": 0.7}
_ROLE_RE = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class LLMConfig:
    """One endpoint + model and how to talk to it.

    ``max_retries`` bounds retries of 429 / 500 / 502 / 503 / 504 / transport errors (so a call
    makes at most ``max_retries + 1`` requests per round); ``repair_retries`` bounds the rounds in
    which the model is shown its invalid reply and asked for corrected JSON; ``structured`` the
    structured-output mode (see :mod:`analogist.llm.client`); ``cache_path`` an SQLite response
    cache (``None``: no cache); backoff is exponential from ``backoff_base_s`` capped at
    ``backoff_max_s``, with jitter drawn from ``random.Random(seed or 0)``; ``seed``, when set,
    is also sent to the server. ``max_tokens`` ``None`` means "sized to each call's schema"
    (:func:`analogist.llm.structured.schema_max_tokens`). ``call_budget_tokens`` /
    ``call_budget_s`` bound one call over all its requests; ``run_budget_tokens`` /
    ``run_budget_s`` bound the provider's lifetime (a call is refused once either is spent).
    ``provider`` ``local`` runs ``model`` (a ``.gguf`` path) in-process (:mod:`analogist.llm.local`)
    with ``context_tokens`` of context on ``threads`` CPU threads; ``base_url`` is then unused.
    """

    base_url: str
    model: str
    provider: str = "openai"
    api_key: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 4
    repair_retries: int = 2
    structured: str = "auto"
    temperature: float = 0.0
    max_tokens: int | None = None
    cache_path: str | None = None
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0
    seed: int | None = None
    call_budget_tokens: int | None = None
    call_budget_s: float | None = None
    run_budget_tokens: int | None = None
    run_budget_s: float | None = None
    context_tokens: int = 8192
    threads: int | None = None

    def __post_init__(self) -> None:
        def bad(name: str, expected: str) -> AnalogistError:
            return AnalogistError(f"LLM config {name}: expected {expected}, "
                                  f"got {getattr(self, name)!r}", field=name)

        if self.provider not in PROVIDERS:
            raise bad("provider", "one of " + ", ".join(PROVIDERS))
        for name in ("base_url", "model"):
            v = getattr(self, name)
            if not isinstance(v, str) or not v.strip():
                raise bad(name, "a non-empty string")
        if self.provider == "openai" and not self.base_url.startswith(("http://", "https://")):
            raise bad("base_url", "an http:// or https:// URL such as http://localhost:8000/v1")
        for name in ("call_budget_tokens", "run_budget_tokens", "threads"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                raise bad(name, "a positive integer or None")
        if not isinstance(self.context_tokens, int) or isinstance(self.context_tokens, bool) \
                or self.context_tokens < 256:
            raise bad("context_tokens", "an integer >= 256")
        for name in ("call_budget_s", "run_budget_s"):
            v = getattr(self, name)
            if v is not None and (not _is_number(v) or v <= 0):
                raise bad(name, "a positive number of seconds or None")
        for name in ("timeout_s", "backoff_max_s"):
            if not _is_number(getattr(self, name)) or getattr(self, name) <= 0:
                raise bad(name, "a positive number of seconds")
        if not _is_number(self.backoff_base_s) or self.backoff_base_s < 0:
            raise bad("backoff_base_s", "a number of seconds >= 0")
        for name in ("max_retries", "repair_retries"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise bad(name, "an integer >= 0")
        if self.structured not in STRUCTURED_MODES:
            raise bad("structured", "one of " + ", ".join(STRUCTURED_MODES))
        if not _is_number(self.temperature) or not 0 <= self.temperature <= 2:
            raise bad("temperature", "a number between 0 and 2")
        if self.max_tokens is not None and (not isinstance(self.max_tokens, int)
                                            or isinstance(self.max_tokens, bool)
                                            or self.max_tokens < 1):
            raise bad("max_tokens", "a positive integer or None")
        if self.seed is not None and (not isinstance(self.seed, int)
                                      or isinstance(self.seed, bool)):
            raise bad("seed", "an integer or None")

    @property
    def chat_url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


FIELD_NAMES = tuple(f.name for f in fields(LLMConfig))
_FILE_KEYS = {n: n for n in FIELD_NAMES} | {"timeout": "timeout_s", "cache": "cache_path"}


def default_config_path(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "analogist" / "config.toml"


def default_cache_path(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "analogist" / "llm_cache.sqlite")


def embedding_settings(env: Mapping[str, str] | None = None) -> dict[str, str | None]:
    """The text embedder's environment (see the module docstring): ``spec`` (which embedder),
    and the OpenAI-compatible endpoint's ``base_url``, ``model`` and ``api_key``; None for each
    variable that is unset or empty. ``env`` defaults to ``os.environ``."""
    env = os.environ if env is None else env
    names = {"spec": "ANALOGIST_EMBEDDER", "base_url": "ANALOGIST_EMBED_BASE_URL",
             "model": "ANALOGIST_EMBED_MODEL", "api_key": "ANALOGIST_API_KEY"}
    return {k: env.get(v) or None for k, v in names.items()}


# -- parsing helpers -------------------------------------------------------------------------------


def _parse_float(raw: str, var: str, expected: str, lo: float | None = None,
                 hi: float | None = None, strict_lo: bool = False) -> float:
    try:
        v = float(raw)
    except ValueError:
        raise AnalogistError(f"{var}={raw!r}: expected {expected}", source=var) from None
    if v != v or (lo is not None and (v <= lo if strict_lo else v < lo)) \
            or (hi is not None and v > hi):
        raise AnalogistError(f"{var}={raw!r}: expected {expected}", source=var)
    return v


def _parse_int(raw: str, var: str, expected: str, lo: int) -> int:
    try:
        v = int(raw.strip())
    except ValueError:
        raise AnalogistError(f"{var}={raw!r}: expected {expected}", source=var) from None
    if v < lo:
        raise AnalogistError(f"{var}={raw!r}: expected {expected}", source=var)
    return v


def _parse_cache(raw: Any, where: str, env: Mapping[str, str]) -> str | None:
    if raw is True:
        return default_cache_path(env)
    if raw is False:
        return None
    if isinstance(raw, str):
        low = raw.strip().lower()
        if low in ("", "off", "none", "no", "false", "0"):
            return None
        if low in ("on", "yes", "true", "1", "default"):
            return default_cache_path(env)
        return str(Path(raw).expanduser())
    raise AnalogistError(f"{where}: expected a path, true/\"on\" or false/\"off\", got {raw!r}",
                         source=where)


def _from_env(env: Mapping[str, str], prefix: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """Settings from ``{prefix}_{KEY}`` variables; only non-empty ones count."""
    out: dict[str, Any] = {}

    def get(name: str) -> tuple[str, str] | None:
        var = f"{prefix}_{name}"
        raw = env.get(var)
        return (var, raw) if raw is not None and raw.strip() != "" else None

    for key in keys:
        got = get(key)
        if got is None:
            continue
        var, raw = got
        if key == "BASE_URL":
            out["base_url"] = raw.strip()
        elif key == "MODEL":
            out["model"] = raw.strip()
        elif key == "PROVIDER":
            prov = raw.strip().lower()
            if prov not in PROVIDERS:
                raise AnalogistError(f"{var}={raw!r}: expected one of " + ", ".join(PROVIDERS),
                                     source=var)
            out["provider"] = prov
        elif key in ("CALL_BUDGET_TOKENS", "RUN_BUDGET_TOKENS", "THREADS"):
            out[key.lower()] = _parse_int(raw, var, "a positive integer", 1)
        elif key == "CONTEXT":
            out["context_tokens"] = _parse_int(raw, var, "an integer >= 256", 256)
        elif key in ("CALL_BUDGET_S", "RUN_BUDGET_S"):
            out[key.lower()] = _parse_float(raw, var, "a positive number of seconds", 0,
                                            strict_lo=True)
        elif key == "API_KEY":
            out["api_key"] = raw.strip()
        elif key == "TIMEOUT":
            out["timeout_s"] = _parse_float(raw, var, "a positive number of seconds", 0,
                                            strict_lo=True)
        elif key == "MAX_RETRIES":
            out["max_retries"] = _parse_int(raw, var, "an integer >= 0", 0)
        elif key == "MAX_TOKENS":
            out["max_tokens"] = _parse_int(raw, var, "a positive integer", 1)
        elif key == "STRUCTURED":
            mode = raw.strip().lower()
            if mode not in STRUCTURED_MODES:
                raise AnalogistError(f"{var}={raw!r}: expected one of "
                                     + ", ".join(STRUCTURED_MODES), source=var)
            out["structured"] = mode
        elif key == "TEMPERATURE":
            out["temperature"] = _parse_float(raw, var, "a number between 0 and 2", 0, 2)
        elif key == "CACHE":
            out["cache_path"] = _parse_cache(raw, var, env)
    return out


def _toml_line(err: tomllib.TOMLDecodeError) -> int | None:
    m = re.search(r"line (\d+)", str(err))
    return int(m.group(1)) if m else None


def _key_line(text: str, key: str) -> int | None:
    for i, line in enumerate(text.splitlines(), 1):
        if re.match(rf"\s*{re.escape(key)}\s*=", line):
            return i
    return None


def _read_file_table(path: Path, role: str, env: Mapping[str, str]) -> tuple[dict, dict]:
    """The ``[llm]`` settings and the ``[llm.<role>]`` settings of a config file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise AnalogistError(f"cannot read config file: {e.strerror or e}; expected a readable "
                             "TOML file", source=str(path)) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise AnalogistError(f"malformed TOML ({e}); expected a TOML file with an [llm] table",
                             source=str(path), line=_toml_line(e)) from None
    llm = doc.get("llm", {})
    if not isinstance(llm, dict):
        raise AnalogistError("expected [llm] to be a table", source=str(path), field="llm")

    def convert(table: dict, where: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in table.items():
            if isinstance(value, dict):
                if where != "llm" or not _ROLE_RE.match(key):
                    raise AnalogistError(f"unexpected table [{where}.{key}]; expected role "
                                         "tables like [llm.critic] only directly under [llm]",
                                         source=str(path), line=_key_line(text, f"[{where}"))
                continue
            if key not in _FILE_KEYS:
                raise AnalogistError(
                    f"unknown key {key!r}; expected one of {', '.join(sorted(_FILE_KEYS))}",
                    source=str(path), line=_key_line(text, key), field=f"{where}.{key}")
            name = _FILE_KEYS[key]
            if name == "cache_path":
                value = _parse_cache(value, f"{path}: {where}.{key}", env)
            out[name] = value
        return out

    base = convert(llm, "llm")
    role_table = llm.get(role, {})
    if not isinstance(role_table, dict):
        raise AnalogistError(f"expected [llm.{role}] to be a table", source=str(path),
                             field=f"llm.{role}")
    return base, convert(role_table, f"llm.{role}")


def _config_file(config_file: str | os.PathLike[str] | None,
                 env: Mapping[str, str]) -> Path | None:
    if config_file is not None:
        p = Path(config_file).expanduser()
        if not p.is_file():
            raise AnalogistError("config file not found; expected an existing TOML file",
                                 source=str(p))
        return p
    named = env.get("ANALOGIST_CONFIG")
    if named:
        p = Path(named).expanduser()
        if not p.is_file():
            raise AnalogistError(f"ANALOGIST_CONFIG={named!r}: expected the path of an existing "
                                 "TOML config file", source="ANALOGIST_CONFIG")
        return p
    p = default_config_path(env)
    return p if p.is_file() else None


_BASE_ENV_KEYS = ("PROVIDER", "BASE_URL", "MODEL", "API_KEY", "TIMEOUT", "MAX_RETRIES",
                  "MAX_TOKENS", "STRUCTURED", "TEMPERATURE", "CACHE", "CALL_BUDGET_TOKENS",
                  "CALL_BUDGET_S", "RUN_BUDGET_TOKENS", "RUN_BUDGET_S", "CONTEXT", "THREADS")
_ROLE_ENV_KEYS = ("BASE_URL", "MODEL", "API_KEY", "TEMPERATURE")


def load_llm_config(role: str = "writer", *, config_file: str | os.PathLike[str] | None = None,
                    env: Mapping[str, str] | None = None, **overrides: Any) -> LLMConfig | None:
    """The :class:`LLMConfig` for ``role``, or ``None`` when no model is configured (or no base
    URL, for the ``openai`` provider).

    ``env`` defaults to ``os.environ``; ``config_file`` to ``$ANALOGIST_CONFIG`` or the XDG
    default (a missing default file is simply skipped). ``overrides`` are :class:`LLMConfig`
    field names; an override of ``None`` means "not given" (so CLI options can be passed through).
    """
    env = os.environ if env is None else env
    if not _ROLE_RE.match(role):
        raise AnalogistError(f"LLM role {role!r}: expected a lower-case name such as "
                             "'writer', 'critic' or 'parametric'")
    unknown = sorted(set(overrides) - set(FIELD_NAMES))
    if unknown:
        raise AnalogistError(f"unknown LLM setting(s) {', '.join(unknown)}; expected "
                             + ", ".join(FIELD_NAMES))
    given = {k: v for k, v in overrides.items() if v is not None}

    path = _config_file(config_file, env)
    file_base, file_role = _read_file_table(path, role, env) if path else ({}, {})
    env_base = _from_env(env, "ANALOGIST_LLM", _BASE_ENV_KEYS)
    env_role = ({} if role == "writer" else
                _from_env(env, f"ANALOGIST_{role.upper()}", _ROLE_ENV_KEYS))

    settings: dict[str, Any] = {}
    if env.get("OPENAI_API_KEY", "").strip():
        settings["api_key"] = env["OPENAI_API_KEY"].strip()
    for layer in (file_base, file_role, env_base, env_role, given):
        settings.update(layer)
    if role in ROLE_DEFAULT_TEMPERATURE:
        role_specific = [layer.get("temperature") for layer in (file_role, env_role, given)]
        chosen = [t for t in role_specific if t is not None]
        settings["temperature"] = chosen[-1] if chosen else ROLE_DEFAULT_TEMPERATURE[role]

    if not settings.get("model"):
        return None
    if settings.get("provider") == "local":
        settings.setdefault("base_url", "local:")   # unused: the model runs in-process
    elif not settings.get("base_url"):
        return None
    try:
        return LLMConfig(**settings)
    except TypeError as e:  # a wrongly typed value from the file
        raise AnalogistError(f"bad LLM setting: {e}", source=str(path) if path else None) from None
    except AnalogistError as e:
        if path and e.field and e.field in {**file_base, **file_role} and not (
                e.field in env_base or e.field in env_role or e.field in given):
            raise AnalogistError(e.message, source=str(path), field=f"llm.{e.field}") from None
        raise
