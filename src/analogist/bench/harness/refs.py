"""Baseline-vs-candidate comparison of two builds of analogist, end to end (seed 002,
"run_comparison.sh": build each ref, run each in isolation on a fixed corpus, compare).

For each side:

1. **Source tree.** A git ref is checked out with ``git worktree add --detach`` into a temporary
   directory (removed again with ``git worktree remove --force``); a path to an existing directory
   holding a ``pyproject.toml`` is used as a plain source tree as it is.
2. **Isolated environment.** ``python -m venv --system-site-packages`` (the third-party
   dependencies come from the running interpreter's site-packages, nothing is downloaded), then
   ``pip install --no-deps --no-index --no-build-isolation -e TREE``; when that cannot run offline
   (the build backend is not installed) the tree's ``src`` directory is put on the venv's path
   with a ``.pth`` file — what an editable install amounts to. The venv's own site-packages come
   first on ``sys.path``, so its ``analogist`` shadows any other install.
3. **Run.** The venv's interpreter runs this harness package (loaded from its own directory under
   a private module name, so the same measuring code drives both builds) against a fresh copy of
   the store per run, with ``PYTHONPATH`` cleared, ``PYTHONNOUSERSITE=1``, a throwaway
   ``XDG_DATA_HOME`` and ``ANALOGIST_STORE``, and every ``ANALOGIST_LLM*``/``OPENAI*`` variable
   removed (no model server). The result records which ``analogist`` it imported; a result that
   did not import the side's own tree is refused.
4. **Compare.** :func:`~analogist.bench.harness.compare.compare_results`.

This is slow (two venvs, model loading twice); it is meant for a person or CI, not the unit tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from analogist.errors import AnalogistError

from .compare import compare_results

# The measuring code is this package's runner, imported under a private name without running
# the package's __init__ (which needs the comparison statistics, absent from older builds).
_DRIVER = r"""
import sys, types
pkg_dir, gold, store, retriever, runs, out, ns = sys.argv[1:8]
pkg = types.ModuleType("_analogist_harness")
pkg.__path__ = [pkg_dir]
sys.modules["_analogist_harness"] = pkg
from _analogist_harness.runner import run_file
run_file(gold, store, retriever, int(runs), out, namespace=ns or None)
"""


def _run(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
         what: str) -> subprocess.CompletedProcess[str]:
    try:
        res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                             check=False)
    except OSError as e:
        raise AnalogistError(f"{what}: could not start {cmd[0]}: {e}") from None
    if res.returncode != 0:
        tail = (res.stderr or res.stdout).strip()[-1500:]
        raise AnalogistError(f"{what} failed (exit {res.returncode}): {tail}")
    return res


def _tree(ref: str, repo: Path, work: Path, side: str, added: list[Path]) -> Path:
    p = Path(ref)
    if p.is_dir():
        if not (p / "pyproject.toml").is_file():
            raise AnalogistError("a directory given as a ref must be a source tree with a "
                                 "pyproject.toml", source=str(p), field=side)
        return p.resolve()
    dest = work / f"tree-{side}"
    _run(["git", "-C", str(repo), "worktree", "add", "--detach", str(dest), ref],
         what=f"git worktree add {ref!r} (--{side})")
    added.append(dest)
    return dest


def _venv(tree: Path, work: Path, side: str) -> tuple[Path, str]:
    venv = work / f"venv-{side}"
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
         what=f"python -m venv ({side})")
    py = venv / "bin" / "python"
    pip = subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                          "--no-build-isolation", "-e", str(tree)], capture_output=True,
                         text=True, check=False)
    if pip.returncode == 0:
        return py, "pip install --no-deps -e"
    site = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                what=f"venv site-packages ({side})").stdout.strip()
    (Path(site) / "_analogist_under_test.pth").write_text(str(tree / "src") + "\n",
                                                          encoding="utf-8")
    return py, ".pth to the tree's src (pip could not build offline)"


def _env(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANALOGIST_", "OPENAI", "PYTHONPATH", "VIRTUAL_ENV"))}
    env["PYTHONNOUSERSITE"] = "1"
    env["XDG_DATA_HOME"] = str(work / "xdg")
    env["ANALOGIST_STORE"] = str(work / "xdg" / "unused.db")
    return env


def compare_refs(baseline: str, candidate: str, gold: str | Path, store: str | Path, *,
                 retriever: str = "fused", runs: int = 3, namespace: str | None = None,
                 repo: str | Path = ".", out_dir: str | Path | None = None) -> dict[str, Any]:
    """Build ``baseline`` and ``candidate`` (git refs of ``repo``, or source-tree directories)
    in isolated venvs, run the gold set ``runs`` times on each against copies of ``store`` and
    compare (see the module docstring). With ``out_dir`` the two result files are kept there."""
    gold_p, store_p = Path(gold).resolve(), Path(store).resolve()
    for label, p in (("gold", gold_p), ("store", store_p)):
        if not p.is_file():
            raise AnalogistError("file not found", source=str(p), field=label)
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise AnalogistError("runs must be a positive integer", field="runs")
    repo_p = Path(repo).resolve()
    pkg_dir = Path(__file__).resolve().parent
    added: list[Path] = []
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="analogist-refs-") as tmp:
        work = Path(tmp)
        try:
            for side, ref in (("baseline", baseline), ("candidate", candidate)):
                tree = _tree(ref, repo_p, work, side, added)
                py, how = _venv(tree, work, side)
                out = (Path(out_dir) if out_dir else work) / f"run_{side}.json"
                out.parent.mkdir(parents=True, exist_ok=True)
                _run([str(py), "-c", _DRIVER, str(pkg_dir), str(gold_p), str(store_p),
                      retriever, str(runs), str(out), namespace or ""], cwd=work,
                     env=_env(work), what=f"running the gold set on {ref!r} ({side})")
                res = json.loads(out.read_text(encoding="utf-8"))
                used = Path(res["system_under_test"]["analogist_path"])
                if tree not in used.parents:
                    raise AnalogistError(f"the {side} run imported analogist from {used}, not "
                                         f"from its own tree {tree}: isolation failed")
                res["system_under_test"].update({"ref": ref, "tree": str(tree),
                                                 "install": how})
                out.write_text(json.dumps(res, indent=2, sort_keys=True) + "\n",
                               encoding="utf-8")
                results[side] = res
        finally:
            for dest in added:
                subprocess.run(["git", "-C", str(repo_p), "worktree", "remove", "--force",
                                str(dest)], capture_output=True, check=False)
    cmp = compare_results(results["baseline"], results["candidate"],
                          labels=(baseline, candidate))
    cmp["refs"] = {"baseline": baseline, "candidate": candidate}
    return cmp
