"""What a request to the application layer may be: the bounds every face enforces
(:class:`Limits`, :data:`LIMITS`) and the input formats every face accepts (:data:`SCHEMAS`,
:func:`json_schema`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analogist.errors import AnalogistError
from analogist.signature import signature_json_schema


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds every face enforces on a request (one set for the CLI, HTTP and MCP)."""

    k: tuple[int, int] = (1, 50)
    rounds: tuple[int, int] = (0, 10)
    per_round: tuple[int, int] = (1, 20)
    carryover: tuple[int, int] = (0, 20)
    text_chars: int = 200_000

    def check(self, name: str, value: int | None) -> int | None:
        """``value`` when it is within the bound named ``name`` (None passes), else an error
        naming the field."""
        if value is None:
            return None
        lo, hi = getattr(self, name)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise AnalogistError(f"{name} must be an integer between {lo} and {hi}, got "
                                 f"{value!r}", field=name)
        return value

    def text(self, text: Any, field: str) -> str:
        """Non-empty text within :attr:`text_chars`."""
        if not isinstance(text, str) or not text.strip():
            raise AnalogistError("expected non-empty text", field=field)
        if len(text) > self.text_chars:
            raise AnalogistError(f"text of {len(text)} characters is over the limit of "
                                 f"{self.text_chars}", field=field)
        return text


LIMITS = Limits()


SCHEMAS: tuple[str, ...] = ("signature", "event", "turn")
"""The input formats :func:`json_schema` describes (``analogist schema NAME``)."""


def json_schema(name: str = "signature") -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one input format every face accepts: ``signature``
    (an episode's structural signature), ``event`` (a foresight event) or ``turn`` (a debate
    turn for the analogy check). ``analogist schema``, the MCP tools and the HTTP API's
    OpenAPI document all describe their arguments with these."""
    if name == "signature":
        return signature_json_schema()
    if name == "event":
        from analogist.foresight.event import Event  # foresight, loaded on use

        schema = Event.model_json_schema(mode="validation")
    elif name == "turn":
        from analogist.safeguard.turn import Turn  # the safeguard, loaded on use

        schema = Turn.model_json_schema(mode="validation")
        schema["additionalProperties"] = False      # an unknown top-level key is refused
    else:
        raise AnalogistError(f"unknown schema {name!r}; expected one of {', '.join(SCHEMAS)}",
                             field="schema")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
