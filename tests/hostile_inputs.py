"""Hostile inputs shared by the bad-input sweeps (CLI and MCP here; HTTP may reuse them): deep
JSON and YAML, empty, binary and oversized files, wrong types, unknown top-level keys and ids
out of every integer range."""

from __future__ import annotations

import sqlite3
from pathlib import Path

DEEP = "[" * 200_000 + "]" * 200_000
DEEP_OBJECT = '{"a": ' * 50_000 + "1" + "}" * 50_000
HUGE_ID = "9" * 40
BAD_KEY_NAMES = ("bad name!", "", "x" * 300, "a/b", "\x00")

TEXTS: dict[str, str | bytes] = {
    "deep.json": DEEP,
    "deep.yaml": DEEP,
    "deep-object.json": DEEP_OBJECT,
    "empty.json": "",
    "blank.yaml": "   \n",
    "binary.json": bytes(range(256)) * 8,
    "latin1.json": '{"a": "caf\xe9"}'.encode("latin-1"),
    "malformed.json": '{"arguments": [',
    "list.json": "[1, 2, 3]",
    "string.json": '"just a string"',
    "number.yaml": "42\n",
    "unknown-key.json": '{"argumentz": [], "episode_id": 7}',
    "alias-bomb.yaml": "a: &a [x, x, x, x, x, x, x, x, x]\n"
                       + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
                                 for p, c in zip("abcdefg", "bcdefgh", strict=True)),
}
"""File name -> content; the suffix is what a command sees."""


def write_all(directory: Path, *, oversized: bool = True) -> dict[str, Path]:
    """Every hostile file in ``directory`` (and one of 5 MB over the 4 MiB input limit)."""
    out = {}
    for name, content in TEXTS.items():
        p = directory / name
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
        out[name] = p
    if oversized:
        p = directory / "oversized.json"
        p.write_text('{"episode_id": "' + "x" * (5 * 1024 * 1024) + '"}', encoding="utf-8")
        out["oversized.json"] = p
    return out


def row_counts(store: Path) -> dict[str, int]:
    """Rows per table of a SQLite store (SQLite's own tables left out): the sweeps compare it
    before and after each refused input, so a half-written store shows as a changed count."""
    with sqlite3.connect(store) as c:
        tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                          "AND name NOT LIKE 'sqlite_%'")]
        return {t: c.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
