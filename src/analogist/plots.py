"""matplotlib, optional: the ``plots`` extra (``pip install 'analogist[plots]'``).

Reports that people would rather look at get a chart when matplotlib is installed; without it the
report is written as usual and says in one line why the chart is missing.
"""

from __future__ import annotations

from typing import Any

PLOTS_EXTRA = "pip install 'analogist[plots]'"


def load_pyplot() -> tuple[Any | None, str | None]:
    """``(matplotlib.pyplot with the Agg backend, None)``, or ``(None, one-line reason)`` when
    matplotlib cannot be imported."""
    try:
        # lazy: matplotlib is an optional extra (~100 MB), imported only to draw
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # after choosing the backend
    except Exception as e:  # noqa: BLE001 - any import failure means no chart
        return None, f"matplotlib is not installed ({type(e).__name__}); {PLOTS_EXTRA}"
    return plt, None
