"""``analogist demo``: the bundled casebook in a temporary store, cross-domain finds."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from analogist.cli.base import (
    _fail,
    app,
    make_app,
    progress_bar,
)
from analogist.errors import AnalogistError

DEMO_MECHANISMS = ("stale_derived_copy", "retry_storm", "proxy_optimisation",
                   "cascade_shared_dependency", "observer_failure_as_state_failure",
                   "alarm_fatigue")


@app.command("demo")
def demo_command(
    targets: int = typer.Option(4, "--targets", min=1, max=12,
                                help="How many targets to run."),
    k: int = typer.Option(3, "--k", min=1, max=50, help="Analogues reported per target."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Load the bundled casebook into a temporary store and find cross-domain analogues.

    For each target (a casebook episode taken out of the store) the retriever must find the
    same mechanism in another domain; the report shows the mapping and what transfers.
    """
    import tempfile

    from rich.console import Console  # rich only for terminal output: --json skips it
    from rich.text import Text

    from analogist.casebook import load_casebook

    console = Console()
    try:
        entries = load_casebook()
        by_mech: dict[str, list[Any]] = {}
        for e in entries:
            if e.decoy_of is None:
                by_mech.setdefault(e.mechanism, []).append(e)
        order = [m for m in DEMO_MECHANISMS if m in by_mech] + sorted(
            m for m in by_mech if m not in DEMO_MECHANISMS)
        picked = [by_mech[m][0] for m in order][:targets]
        out: list[dict[str, Any]] = []
        with tempfile.TemporaryDirectory() as tmp, \
                make_app(Path(tmp) / "demo.db", namespace="demo", k=k, critic=False,
                         parametric=False) as api:
            m = api.memory()
            with progress_bar() as bar:
                task = bar.add_task("loading the casebook", total=len(entries))
                api.add_many([e.signature for e in entries], batch_size=25,
                             progress=lambda n: bar.update(task, completed=n))
            domain_of = {e.id: e.domain for e in entries}
            mech_of = {e.id: e.mechanism for e in entries}
            for target in picked:
                m.delete(target.id, "demo")  # the target is the new situation, not a memory
                res = api.find(target.signature)
                best = res.results[0] if res.results else None
                out.append({
                    "target": target.id, "target_domain": target.domain,
                    "mechanism": target.mechanism,
                    "best": None if best is None else best.episode_id,
                    "best_domain": None if best is None else domain_of.get(best.episode_id),
                    "same_mechanism": bool(best and mech_of.get(best.episode_id)
                                           == target.mechanism),
                    "result": res.to_json()})
                if not as_json:
                    console.rule(f"target {target.id} ({target.domain})")
                    console.print(Text(target.signature.levels.L1 or
                                       target.signature.levels.L0 or ""))
                    if best is not None:
                        console.print(Text(
                            f"best analogue: {best.episode_id} from "
                            f"{domain_of.get(best.episode_id)} "
                            f"(mechanism {mech_of.get(best.episode_id)}; target's: "
                            f"{target.mechanism})"))
                    console.print(Text(res.render()))
                api.add(target.signature)
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        ok = sum(1 for o in out if o["same_mechanism"] and o["best_domain"] != o["target_domain"])
        console.print(f"\n{ok} of {len(out)} targets: best analogue has the same mechanism in "
                      "another domain.")
