"""``analogist schema``: the JSON Schema of an input format (what the MCP tools and the HTTP API
accept as a Signature, an Event or a debate turn)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from analogist.cli.base import _fail, app
from analogist.errors import AnalogistError


@app.command("schema")
def schema_command(
    name: str = typer.Argument("signature", metavar="[NAME]",
                               help="signature (default), event or turn."),
    out: Path | None = typer.Option(None, "--out", metavar="FILE",
                                    help="Write the schema to FILE instead of printing it."),
) -> None:
    """Print the JSON Schema of an input format: a Signature (an episode's roles, relations,
    causal chain and abstraction levels), a foresight Event, or a debate turn."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.app import json_schema

    try:
        text = json.dumps(json_schema(name), ensure_ascii=False, indent=2) + "\n"
        if out is not None:
            try:
                out.write_text(text, encoding="utf-8")
            except OSError as e:
                raise AnalogistError(f"cannot write: {e.strerror}", source=str(out)) from None
    except AnalogistError as e:
        _fail(str(e))
    if out is None:
        typer.echo(text, nl=False)
    else:
        typer.echo(f"wrote the {name} schema to {out}")
