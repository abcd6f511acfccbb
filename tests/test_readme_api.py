"""The README's "Python API" section runs: its ```python blocks, in order, in one namespace, in a
fresh directory, with no LLM configured."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def _blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_python_api_section_runs(tmp_path, monkeypatch, no_llm, capsys):
    blocks = _blocks()
    assert len(blocks) >= 4
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANALOGIST_STORE", raising=False)
    scope: dict = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"README.md Python API block {i + 1}", "exec"), scope)  # noqa: S102
    out = capsys.readouterr().out
    assert (tmp_path / "my-store.db").is_file()
    assert "stale-dashboard" in out                      # the text find reports the stored case
    assert "stale-copy-fin-cash-extract" in out          # the signature find ranks it
    assert "SUMMARY" in out and "DISCHARGE_LIST" in out  # the mapping's correspondences
    assert scope["brief"]["analogies"] and scope["report"].analogies
