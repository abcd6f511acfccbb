"""The import structure of ``src/analogist`` as ARCHITECTURE.md draws it: no circles, and no room
importing a room above it. Every import statement counts, at module top or inside a function
(a lazy import is still a dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

# The rooms, lowest first (ARCHITECTURE.md, "Rooms"). A module may import its own room and any
# room below it, never one above.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundations", ("analogist", "analogist.errors", "analogist.io", "analogist.sexpr",
                     "analogist.stats", "analogist.params")),
    ("data model", ("analogist.vocabulary", "analogist.description", "analogist.signature")),
    ("engine, indices, LLM", ("analogist.sme", "analogist.index", "analogist.llm")),
    ("memory", ("analogist.memory",)),
    ("domain", ("analogist.judge", "analogist.retrieve", "analogist.encode", "analogist.critic",
                "analogist.parametric", "analogist.foresight", "analogist.safeguard",
                "analogist.consolidate", "analogist.plans", "analogist.triggers",
                "analogist.casebook", "analogist.examples")),
    ("evaluation", ("analogist.bench",)),
    ("application", ("analogist.app",)),
    ("faces", ("analogist.cli", "analogist.server", "analogist.mcp", "analogist.service",
               "analogist.viewer", "analogist.__main__", "analogist.notes")),
]

# The package itself is a facade: it re-exports names of several rooms, resolved on first use.
FACADE = "analogist"

# Pairs of rooms kept apart although neither is above the other (DESIGN.md: "sme/ knows
# nothing of memory; memory/ knows nothing of SME").
APART = [("analogist.sme", "analogist.memory"), ("analogist.memory", "analogist.sme")]

# Circles not yet opened, each named so that a new one fails the test.
KNOWN_CIRCLES: list[frozenset[str]] = []


def _modules() -> dict[str, Path]:
    out = {}
    for f in (SRC / "analogist").rglob("*.py"):
        parts = f.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()

    def resolve(name: str) -> str | None:
        while name:
            if name in mods:
                return name
            name = name.rpartition(".")[0]
        return None

    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        pkg = m if f.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = ".".join(pkg.split(".")[: len(pkg.split(".")) - node.level + 1])
                    full = base + (f".{node.module}" if node.module else "")
                else:
                    full = node.module or ""
                targets = [f"{full}.{a.name}" if f"{full}.{a.name}" in mods else full
                           for a in node.names]
            for t in targets:
                r = resolve(t) if t.startswith("analogist") else None
                if r is not None and r != m:
                    edges[m].add(r)
    return edges


def _circles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def _layer(module: str) -> int:
    best = None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and (
                    best is None or len(p) > len(best[1])):
                best = (i, p)
    assert best is not None, f"{module} is in no room of ARCHITECTURE.md"
    return best[0]


def test_every_module_is_in_a_room():
    for m in _modules():
        _layer(m)


def test_no_import_circles():
    circles = _circles(_graph())
    new = [sorted(c) for c in circles if c not in KNOWN_CIRCLES]
    assert not new, f"import circles: {new}"


def test_no_room_imports_a_room_above_it():
    bad = []
    for m, targets in _graph().items():
        if m == FACADE:
            continue
        for t in targets:
            if _layer(t) > _layer(m):
                bad.append(f"{m} ({LAYERS[_layer(m)][0]}) imports {t} ({LAYERS[_layer(t)][0]})")
            for a, b in APART:
                if (m == a or m.startswith(a + ".")) and (t == b or t.startswith(b + ".")):
                    bad.append(f"{m} imports {t}")
    assert not bad, "\n".join(sorted(bad))


def test_the_graph_sees_imports():
    """The checker itself: a known edge is found, so a passing test means something."""
    edges = _graph()
    assert "analogist.memory.sqlite" in edges["analogist.app"]
    assert "analogist.app" in edges["analogist.server"]


# -- lazy imports and the environment ------------------------------------------------------------

def _lazy_imports() -> list[tuple[Path, int, int]]:
    """``(file, first line, last line)`` of every import statement inside a function."""
    out = []
    for f in sorted((SRC / "analogist").rglob("*.py")):
        seen: set[int] = set()
        for fn in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno not in seen:
                    seen.add(node.lineno)
                    out.append((f, node.lineno, node.end_lineno or node.lineno))
    return out


def _unexplained(imports: list[tuple[Path, int, int]], root: Path = SRC) -> list[str]:
    """The lazy imports without a reason: a comment on the statement, on the line above its run
    of import lines (blank lines between them do not end a run; a ``try:`` opening the run counts
    as part of it), or on another statement of that run."""
    by_file: dict[Path, list[tuple[int, int]]] = {}
    for f, a, b in imports:
        by_file.setdefault(f, []).append((a, b))
    bad = []
    for f, spans in by_file.items():
        lines = f.read_text(encoding="utf-8").splitlines()
        covered = {i for a, b in spans for i in range(a, b + 1)}

        def joined(i: int) -> bool:  # an import line, or a blank line inside a run of them
            return i in covered or (1 <= i <= len(lines) and not lines[i - 1].strip())

        for a, b in spans:
            start, end = a, b
            while start - 1 in covered or (joined(start - 1) and start - 2 in covered):
                start -= 1
            while end + 1 in covered or (joined(end + 1) and end + 2 in covered):
                end += 1
            above = lines[start - 2].strip() if start >= 2 else ""
            if above.startswith("try:") and "#" not in above and start >= 3:
                above = lines[start - 3].strip()
            if not (any("#" in lines[i - 1] for i in range(start, end + 1))
                    or above.startswith("#") or (above.startswith("try:") and "#" in above)):
                bad.append(f"{f.relative_to(root)}:{a}: {lines[a - 1].strip()}")
    return bad


def test_every_lazy_import_says_why():
    """An import inside a function is for a heavy or optional dependency, or for the CLI's
    start-up (ARCHITECTURE.md, "Where to put new code"); a one-line comment says which."""
    bad = _unexplained(_lazy_imports())
    assert not bad, "in-function imports without a reason comment:\n" + "\n".join(bad)


def test_the_lazy_import_check_can_fail(tmp_path: Path):
    f = tmp_path / "m.py"
    f.write_text("def a():\n    import json\n    return json\n\n"
                 "def b():\n    # heavy\n    import csv\n\n    import re\n    return csv, re\n\n"
                 "def c():\n    try:  # optional\n        import zlib\n    except ImportError:\n"
                 "        pass\n", encoding="utf-8")
    spans = [(f, 2, 2), (f, 7, 7), (f, 9, 9), (f, 14, 14)]
    assert _unexplained(spans, root=tmp_path) == ["m.py:2: import json"]



# -- the environment -----------------------------------------------------------------------------

# Modules that read the process environment: the application layer's Settings, and the LLM and
# embedder configuration it hands its environment to. The harness's refs builds a child
# process's environment from it (to strip the caller's settings), which is no setting.
ENV_READERS = {"analogist.app", "analogist.llm.config", "analogist.bench.harness.refs"}


def test_the_environment_is_read_in_one_place():
    readers = set()
    for m, f in _modules().items():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv")
                    and isinstance(node.value, ast.Name) and node.value.id == "os") or (
                    isinstance(node, ast.ImportFrom) and node.module == "os"
                    and any(a.name in ("environ", "getenv") for a in node.names)):
                readers.add(m)
    assert readers <= ENV_READERS, f"the environment is read in {sorted(readers - ENV_READERS)}"
    assert "analogist.app" in readers  # the check sees a read
