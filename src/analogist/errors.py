"""One exception hierarchy for analogist.

Every error a user can provoke with bad input is an :class:`AnalogistError`. Messages name the
file, the line or field, and what was expected, so the CLI can print them as they are (exit 2)
without a traceback.
"""

from __future__ import annotations


class AnalogistError(Exception):
    """Root of all analogist errors.

    ``source`` is the file (or other origin) the bad input came from, ``line`` a 1-based line
    number when known, ``field`` a dotted field path when known.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.field = field
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = []
        if self.source:
            where.append(str(self.source))
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field:
            where.append(f"field {self.field}")
        prefix = ":".join(where[:1]) + (", " + ", ".join(where[1:]) if len(where) > 1 else "")
        return f"{prefix}: {self.message}" if prefix else self.message


class ParseError(AnalogistError):
    """Malformed text: S-expressions, JSON, YAML."""


class VocabularyError(AnalogistError):
    """An undeclared predicate, a wrong arity, a bad declaration."""


class DescriptionError(AnalogistError):
    """A structurally invalid description: dangling or cyclic names, duplicate names."""


class SignatureError(AnalogistError):
    """A Signature that does not validate."""


class InputTooLargeError(AnalogistError):
    """Input over the configured size limit."""
