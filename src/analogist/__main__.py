"""``python -m analogist``: the command line."""

from analogist.cli import app

app(prog_name="analogist")
