"""``analogist check``: the analogy safeguard on a debate turn (seed 003)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from analogist.cli.base import (
    _fail,
    app,
    make_app,
)
from analogist.errors import AnalogistError

# -- the analogy safeguard (issue 7) ---------------------------------------------------------------

@app.command("check")
def check_command(
    input_path: str = typer.Argument(..., metavar="INPUT",
                                     help="A debate turn: a JSON file ({arguments, "
                                          "historical_wisdom}), a plain-text file, or - for "
                                          "stdin."),
    mode: str | None = typer.Option(None, "--mode", help="strict or advisory: force one mode "
                                                         "for every analogy (default: strict "
                                                         "for arguments, advisory for "
                                                         "historical_wisdom)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON only."),
    as_text: bool = typer.Option(False, "--text", help="Read INPUT as plain text even when it "
                                                       "looks like JSON."),
    llm: bool = typer.Option(True, "--llm/--no-llm", help="Use the configured LLM (role "
                                                          "'safeguard'), if any, to find "
                                                          "analogies in plain text and to "
                                                          "estimate the content share."),
) -> None:
    """Check the historical and classical analogies of a debate turn: at least two
    structural, causally relevant similarities, at least one substantive difference, analogy
    content under ~15% (flagged, not failed). Exit status: 0 when every analogy passes (or there
    is none), 1 when at least one fails, 2 on bad input. A content-share flag alone does not
    change the exit status."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.io import MAX_FILE_BYTES, read_text
    from analogist.safeguard import load_turn

    if mode is not None and mode not in ("strict", "advisory"):
        _fail(f"--mode must be strict or advisory, got {mode!r}")
    try:
        if input_path == "-":
            raw = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
            if len(raw) > MAX_FILE_BYTES:
                raise AnalogistError(f"input is over the limit of {MAX_FILE_BYTES} bytes",
                                     source="<stdin>")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise AnalogistError("not valid UTF-8 text", source="<stdin>",
                                     line=raw[: e.start].count(b"\n") + 1) from None
            if "\x00" in text:
                raise AnalogistError("contains NUL bytes; expected text", source="<stdin>",
                                     line=text[: text.index("\x00")].count("\n") + 1)
            source = "<stdin>"
        else:
            text = read_text(Path(input_path))
            source = input_path
        if not text.strip():
            raise AnalogistError("the input is empty; expected a debate turn (JSON or text)",
                                 source=source)
        turn = text if as_text else load_turn(text, source=source)
        with make_app(llm=llm) as api:
            report = api.check(turn, mode=mode)  # type: ignore[arg-type]
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n")
        for s in report.skipped:
            typer.echo(s, err=True)
    else:
        sys.stdout.write(report.render())
    raise typer.Exit(0 if report.all_pass else 1)
