"""Consolidation, triggers, plans and the negative-transfer ledger (seed 000 §§9–12)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from analogist.cli.base import (
    NAMESPACE_HELP,
    STORE_HELP,
    _fail,
    _open_store,
    _with_store,
    app,
    make_app,
    progress_bar,
)
from analogist.errors import AnalogistError

# -- issue 10: consolidation, triggers, plans (appended block) -----------------------------

@app.command("consolidate")
def consolidate_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    dry_run: bool = typer.Option(False, "--dry-run", help="Compute without writing."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Induce schemas from episodes that map well, merge vocabulary synonyms, report vocabulary
    health and re-abstract episodes lacking levels, in one transaction."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.consolidate import consolidate

    with progress_bar() as bar:
        task = bar.add_task(f"consolidating {namespace!r}: pairs compared", total=None)
        rep = _with_store(store, lambda m: consolidate(
            m, namespace, dry_run=dry_run,
            progress=lambda i, n: bar.update(task, completed=i, total=n)))
    if as_json:
        typer.echo(json.dumps(rep.to_json(), ensure_ascii=False, indent=2))
    else:
        typer.echo(rep.render())


triggers_app = typer.Typer(help="When to look for an analogy: the trigger policy, checked against an action log and fitted from recorded outcomes.",
                           no_args_is_help=True)
app.add_typer(triggers_app, name="triggers")


@triggers_app.command("check")
def triggers_check_command(
    action_log: Path = typer.Argument(..., help="Action log (JSON or YAML)."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    record: bool = typer.Option(False, "--record",
                                help="Record the firing in the store's analogy log (and read "
                                     "today's tier-2 spending from it)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Which tier (0/1/2) the action log calls for, and the triggers that fired."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.triggers import decide, decide_and_record, load_action_log

    try:
        log = load_action_log(action_log)
        log_id = None
        if record:
            with _open_store(store) as m:
                d, log_id = decide_and_record(m, log, namespace=namespace)
        else:
            d = decide(log)
    except AnalogistError as e:
        _fail(str(e))
    out = {**d.to_json(), "log_id": log_id}
    if as_json:
        typer.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    typer.echo(f"tier: {'none' if d.tier is None else d.tier}"
               + (" (tier 2 blocked by the daily token budget)" if d.budget_blocked else "")
               + (f"; recorded as log entry {log_id}" if log_id is not None else ""))
    for t, why in sorted(d.fired.items()):
        typer.echo(f"  {t}: {why}")
    for t, why in sorted(d.weak.items()):
        typer.echo(f"  (weak, no tier) {t}: {why}")


@triggers_app.command("fit")
def triggers_fit_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Per-trigger useful-analogy and negative-transfer rates from logged outcomes."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.triggers import fit_triggers

    res = _with_store(store, lambda m: fit_triggers(m, namespace))
    if as_json:
        typer.echo(json.dumps(res, ensure_ascii=False, indent=2))
        return
    typer.echo(f"{res['firings']} firing(s) in namespace {namespace!r}")
    for t, s in res["triggers"].items():
        ur = "n/a" if s["useful_rate"] is None else f"{s['useful_rate']:.2f}"
        nr = "n/a" if s["negative_rate"] is None else f"{s['negative_rate']:.2f}"
        typer.echo(f"  {t}{' (weak)' if s['weak'] else ''}: {s['firings']} firing(s), "
                   f"{s['with_outcome']} with outcome; useful {ur}, negative transfer {nr}")
    u = res["untriggered"]
    if u["with_outcome"]:
        typer.echo(f"  (no trigger): {u['with_outcome']} with outcome; useful "
                   f"{u['useful_rate']:.2f}, negative transfer {u['negative_rate']:.2f}")


plans_app = typer.Typer(help="Role-parameterised plans and macros reused through a mapping.",
                        no_args_is_help=True)
app.add_typer(plans_app, name="plans")


@plans_app.command("add")
def plans_add_command(
    plan_file: Path = typer.Argument(..., help="Plan (JSON or YAML)."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
) -> None:
    """Store a role-parameterised plan."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.plans import load_plan, store_plan

    try:
        plan = load_plan(plan_file)
        with _open_store(store) as m:
            pid = store_plan(m, plan, namespace=namespace)
    except AnalogistError as e:
        _fail(str(e))
    typer.echo(f"stored plan {plan.name!r} as id {pid}")


@plans_app.command("list")
def plans_list_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """List stored plans and macros with their reuse record."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.plans import review_plans

    res = _with_store(store, lambda m: review_plans(m, namespace=namespace, apply=False))
    if as_json:
        typer.echo(json.dumps(res["plans"], ensure_ascii=False, indent=2))
        return
    for p in res["plans"]:
        rate = "n/a" if p["reuse_success_rate"] is None else f"{p['reuse_success_rate']:.2f}"
        typer.echo(f"{p['id']}  {p['name']}  [{p['status']}]  independent successes "
                   f"{p['independent_successes']}, reuse success {rate} "
                   f"({p['reuse_outcomes']} outcome(s))")


@plans_app.command("match")
def plans_match_command(
    target_file: Path = typer.Argument(..., help="Target signature (JSON or YAML)."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    task: str | None = typer.Option(None, "--task",
                                    help="Log the offer of the best plan for this task id."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Instantiate the best-matching plan for a target, gaps marked (or say: plan from
    scratch)."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.plans import instantiate, offer, retrieve_plans
    from analogist.signature import load_signature

    try:
        target = load_signature(target_file)
        with _open_store(store) as m:
            found = retrieve_plans(m, target, namespace=namespace, k=1)
            inst = instantiate(found[0].plan, target) if found else None
            use_id = (offer(m, found[0].plan_id, inst, task=task, namespace=namespace)
                      if found and inst is not None and task else None)
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        typer.echo(json.dumps({"plan": found[0].to_json() if found else None,
                               "instantiation": inst.to_json() if inst else None,
                               "use_id": use_id}, ensure_ascii=False, indent=2))
        return
    typer.echo(inst.render() if inst else "no stored plan maps onto this target: plan from "
               "scratch")


@plans_app.command("review")
def plans_review_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Promote plans with two independent successful reuses to macros; retire macros that do
    worse than planning from scratch."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.plans import review_plans

    res = _with_store(store, lambda m: review_plans(m, namespace=namespace))
    if as_json:
        typer.echo(json.dumps(res, ensure_ascii=False, indent=2))
        return
    typer.echo(f"promoted: {', '.join(res['promoted']) or 'none'}; "
               f"retired: {', '.join(res['retired']) or 'none'}")


@app.command("ledger")
def ledger_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """The negative-transfer ledger: analogy-driven actions against the no-analogy
    counterfactual."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.triggers import ledger_summary

    res = _with_store(store, lambda m: ledger_summary(m, namespace))
    if as_json:
        typer.echo(json.dumps(res, ensure_ascii=False, indent=2))
        return
    rate = "n/a" if res["negative_transfer_rate"] is None else \
        f"{res['negative_transfer_rate']:.2f}"
    typer.echo(f"{res['entries']} entr(ies); with a counterfactual {res['with_counterfactual']}: "
               f"better {res['better']}, same {res['same']}, worse {res['worse']}; "
               f"negative-transfer rate {rate}")


@app.command("outcome")
def outcome_command(
    log_id: str | None = typer.Argument(None, metavar="[LOG_ID]",
                                        help="The analogy attempt (an id from 'analogist log', "
                                             "'find --json' or 'triggers check --record')."),
    used: str | None = typer.Option(None, "--used", help="The analogue acted on (episode id); "
                                                         "required without LOG_ID."),
    helped: bool | None = typer.Option(None, "--helped/--not-helped",
                                       help="Whether acting on the analogy helped."),
    negative: bool = typer.Option(False, "--negative",
                                  help="A negative transfer: acting on it did worse than "
                                       "acting without it."),
    result: float | None = typer.Option(None, "--result",
                                        help="The analogy-driven action's result (writes a "
                                             "ledger entry)."),
    counterfactual: float | None = typer.Option(None, "--counterfactual",
                                                help="With --result: the result without the "
                                                     "analogy on the same item."),
    lower_is_better: bool = typer.Option(False, "--lower-is-better",
                                         help="With --result: a lower result is better."),
    item: str | None = typer.Option(None, "--item", help="With --result: the item acted on."),
    note: str | None = typer.Option(None, "--note", help="A free-text note."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace", help=NAMESPACE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Record what an analogy led to (helped, did not help, negative transfer): the data
    'triggers fit' and 'ledger' read."""
    try:
        lid = None
        if log_id is not None:
            if not log_id.isdigit() or len(log_id) > 18:
                raise AnalogistError(f"expected a log id (a whole number of at most 18 "
                                     f"digits), got {log_id!r}"[:200], field="LOG_ID")
            lid = int(log_id)
        with make_app(store, namespace=namespace) as api:
            got = api.record_outcome(lid, helped=helped, negative=negative, used=used,
                                     note=note, result=result, counterfactual=counterfactual,
                                     higher_is_better=not lower_is_better, item=item)
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        typer.echo(json.dumps(got, ensure_ascii=False, indent=2))
        return
    ledger = "" if got["verdict"] is None else f"; ledger verdict {got['verdict']}"
    typer.echo(f"recorded outcome {got['outcome']} for log entry {got['log_id']}{ledger}")
