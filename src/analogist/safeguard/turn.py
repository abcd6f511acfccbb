"""Turn parsing: the debate-turn input model (JSON/YAML or plain text) and its validation."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analogist.errors import AnalogistError
from analogist.io import parse_structured, validation_error

Mode = Literal["strict", "advisory"]
Section = Literal["arguments", "historical_wisdom"]


# -- the input model -------------------------------------------------------------------------

class Analogy(BaseModel):
    """One analogy inside an argument. ``target`` (ours, optional) names the current case when it
    is a known event or descriptive text; otherwise the target is read from ``claim``."""

    model_config = ConfigDict(extra="ignore")

    source: str | None = Field(default=None, max_length=20_000)
    claim: str | None = Field(default=None, max_length=20_000)
    similarities: list[str] = Field(default_factory=list, max_length=200)
    differences: list[str] = Field(default_factory=list, max_length=200)
    target: str | None = Field(default=None, max_length=20_000)


class Argument(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str | None = Field(default=None, max_length=1_000_000)
    analogies: list[Analogy] = Field(default_factory=list, max_length=500)


class HistoricalWisdom(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str | None = Field(default=None, max_length=1_000_000)
    source: str | None = Field(default=None, max_length=20_000)
    key_differences: list[str] = Field(default_factory=list, max_length=200)
    applicability_caveat: str | None = Field(default=None, max_length=20_000)
    target: str | None = Field(default=None, max_length=20_000)


class Turn(BaseModel):
    """A debate turn (see the module docstring)."""

    model_config = ConfigDict(extra="ignore")

    arguments: list[Argument] = Field(default_factory=list, max_length=1000)
    historical_wisdom: list[HistoricalWisdom] = Field(default_factory=list, max_length=1000)


def parse_turn(data: Any, *, source: str | None = None) -> Turn:
    """Validate parsed JSON as a :class:`Turn`; errors name the field and what was expected."""
    if not isinstance(data, dict):
        raise AnalogistError(f"expected a JSON object with 'arguments' and/or "
                             f"'historical_wisdom', got {type(data).__name__}", source=source)
    try:
        return Turn.model_validate(data)
    except ValidationError as e:
        raise validation_error(e, source=source) from None


def load_turn(text: str, *, source: str | None = None) -> Turn | str:
    """``text`` as a :class:`Turn` when it is JSON (or YAML from a ``.yaml``/``.yml`` source),
    else the plain text itself. Text that starts like JSON but does not parse is an error."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped:
        raise AnalogistError("the input is empty; expected a debate turn (JSON or text)",
                             source=source)
    is_yaml = bool(source) and str(source).lower().endswith((".yaml", ".yml"))
    is_json = bool(source) and str(source).lower().endswith(".json")
    if is_yaml or is_json or stripped[0] in "{[":
        data = parse_structured(stripped, source=source, fmt="yaml" if is_yaml else "json")
        return parse_turn(data, source=source)
    return text
