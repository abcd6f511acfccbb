"""Public analogy benchmarks as their authors publish them (issues 8 and 15): loaders, a runner
that scores analogist's embedded default beside two surface baselines (the bundled embedder and
BM25), and the one-report ``all`` mode. See :mod:`analogist.bench.external.runner` and
:mod:`analogist.bench.external.report`."""

from analogist.bench.external.base import (
    Benchmark,
    BinaryItem,
    ChoiceItem,
    RetrievalItem,
)
from analogist.bench.external.runner import (
    BASELINES,
    SYSTEMS,
    ExternalParams,
    ExternalResult,
    Systems,
    calibrate_surface_threshold,
    calibrate_threshold,
    check_summary,
    external_command,
    render_summary,
    run_benchmark,
)
from analogist.bench.external.sets import BENCHMARKS, SETS, is_development, load_set

__all__ = [
    "BASELINES",
    "BENCHMARKS",
    "SETS",
    "SYSTEMS",
    "Benchmark",
    "BinaryItem",
    "ChoiceItem",
    "ExternalParams",
    "ExternalResult",
    "RetrievalItem",
    "Systems",
    "calibrate_surface_threshold",
    "calibrate_threshold",
    "check_summary",
    "external_command",
    "is_development",
    "load_set",
    "render_summary",
    "run_benchmark",
]
