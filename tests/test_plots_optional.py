"""matplotlib is an optional extra (issue 21, build item 9): without it the plotting call sites
say so in one line, naming the extra, and nothing else breaks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from analogist.plots import PLOTS_EXTRA, load_pyplot


def test_load_pyplot_with_and_without_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("matplotlib")
    plt, why = load_pyplot()
    assert plt is not None and why is None
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # what an uninstalled module does
    plt, why = load_pyplot()
    assert plt is None and why is not None
    assert "\n" not in why and PLOTS_EXTRA in why


def test_the_cli_and_library_import_without_matplotlib() -> None:
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "import analogist.cli, analogist.foresight.brief, analogist.bench.parb.report\n"
            "assert 'matplotlib.pyplot' not in sys.modules\n"
            "from analogist.bench.parb.report import _plots\n"
            "files, note = _plots({'splits': {}}, None)\n"
            "print(note)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().startswith("plots skipped:") and PLOTS_EXTRA in res.stdout
