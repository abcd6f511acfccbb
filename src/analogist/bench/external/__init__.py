"""Loaders for public analogy benchmarks and a runner that scores them with analogist's pipeline
and with a surface baseline (issue 8, item 5). See :mod:`analogist.bench.external.runner`."""

from analogist.bench.external.base import (
    Benchmark,
    BinaryItem,
    ChoiceItem,
    RetrievalItem,
)
from analogist.bench.external.runner import (
    BENCHMARKS,
    ExternalParams,
    ExternalResult,
    calibrate_surface_threshold,
    external_command,
    load_benchmark,
    render_summary,
    run_benchmark,
    run_external,
)

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "BinaryItem",
    "ChoiceItem",
    "ExternalParams",
    "ExternalResult",
    "RetrievalItem",
    "calibrate_surface_threshold",
    "external_command",
    "load_benchmark",
    "render_summary",
    "run_benchmark",
    "run_external",
]
