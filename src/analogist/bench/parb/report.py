"""PARB report: report.md (tables, verdicts) and PNG plots when matplotlib imports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analogist.plots import load_pyplot

__all__ = ["write_report"]



def _save(plt: Any, fig: Any, out: Path, name: str) -> str:
    """Lay out, write and close one figure; returns its file name."""
    fig.tight_layout()
    fig.savefig(out / name, dpi=100)
    plt.close(fig)
    return name


def _fmt(x: Any, nd: int = 3) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def _ci(ci: Any) -> str:
    if not ci or ci[0] is None:
        return "—"
    return f"[{ci[0]:+.3f}, {ci[1]:+.3f}]"


def _sci(v: Any, nd: int = 3) -> str:
    return "—" if v is None else (f"{v:.{nd}g}" if isinstance(v, float) else str(v))


def cost_lines(arms: dict[str, Any]) -> list[str]:
    """Verification survival and cost per arm (seed 000 §15)."""
    L = ["", "### Verification survival and cost", "",
         "| arm | verification survival (n) | D's useful kept | D's false killed | "
         "s/item | s/U | tokens/item | tokens/U |", "|---|---|---|---|---|---|---|---|"]
    for a, m in arms.items():
        v, c = m.get("verification_survival"), m.get("cost") or {}
        if isinstance(v, dict):
            vs = (f"{_fmt(v['survival'])} ({v['n']}) | {_fmt(v['useful_kept'])} "
                  f"({v['n_useful']}) | {_fmt(v['false_killed'])} ({v['n_false']})")
        else:
            vs = "— | — | —"
        L.append(f"| {a} | {vs} | {_sci(c.get('wall_s_per_item'))} | "
                 f"{_sci(c.get('wall_s_per_U'))} | {_sci(c.get('tokens_per_item'))} | "
                 f"{_sci(c.get('tokens_per_U'))} |")
    return L


def llm_lines(usage: dict[str, Any]) -> list[str]:
    """LLM accounting per arm: calls, failures, tokens, seconds (failures are failures)."""
    usage = {a: u for a, u in usage.items() if u}
    if not usage:
        return []
    L = ["", "## LLM calls", "", "| arm | calls | failed | tokens | seconds | repairs |",
         "|---|---|---|---|---|---|"]
    for a, u in usage.items():
        L.append(f"| {a} | {u.get('calls', 0)} | {u.get('failures', 0)} | "
                 f"{u.get('total_tokens', 0)} | {_sci(u.get('seconds'))} | "
                 f"{u.get('repairs', 0)} |")
    return L


def controls_lines(ctl: dict[str, Any] | None) -> list[str]:
    """Attribution controls table (seed 000 §2): source dependence Δ and lesion sensitivity."""
    if not ctl:
        return []
    L = ["", "### Attribution controls (F1/F4/F5; seed 000 §2)", "",
         "| arm | n | acc correct / none / wrong | Δ vs none [CI] | Δ vs wrong [CI] | "
         "lesion sensitivity (changed/n) | by family | rationalisations |",
         "|---|---|---|---|---|---|---|---|"]
    for a, c in ctl.items():
        if not c.get("n"):
            L.append(f"| {a} | 0 | — | — | — | — | — | — |")
            continue
        acc, les = c["accuracy"], c["lesion"]
        dn, dw = c["delta_vs_none"], c["delta_vs_wrong"]
        fam = ", ".join(f"{f} {v['changed']}/{v['n']}" for f, v in les["by_family"].items())
        rat = les["rationalisations"]
        L.append(f"| {a} | {c['n']} | {acc['correct']:.2f} / {acc['none']:.2f} / "
                 f"{acc['wrong']:.2f} | {dn['estimate']:+.3f} {_ci(dn['ci'])} | "
                 f"{dw['estimate']:+.3f} {_ci(dw['ci'])} | {_fmt(les['sensitivity'], 2)} "
                 f"({les['changed']}/{les['n']}) | {fam or '—'} | {len(rat)} |")
    L += ["", "A lesion deletes one source relation/edge the arm's mapping claims is "
          "load-bearing; an unchanged conclusion flags the mapping as a rationalisation "
          "(item ids in results.json)."]
    return L


def _plots(results: dict[str, Any], out: Path) -> tuple[list[str], str | None]:
    plt, why = load_pyplot()
    if plt is None:
        return [], f"plots skipped: {why}"
    files: list[str] = []
    for sp, data in results["splits"].items():
        arms = data.get("arms") or {}
        if not arms:
            continue
        names = list(arms)
        # NAV by arm with CIs
        fig, ax = plt.subplots(figsize=(7, 3.5))
        navs = [arms[a]["nav"] for a in names]
        lo = [arms[a]["nav"] - arms[a]["nav_ci"][0] for a in names]
        hi = [arms[a]["nav_ci"][1] - arms[a]["nav"] for a in names]
        ax.bar(names, navs, yerr=[lo, hi], capsize=4, color="#4477aa")
        ax.axhline(0, color="black", lw=0.8)
        ax.set_ylabel("NAV (α=1, β=2)")
        ax.set_title(f"PARB {sp}: NAV by arm, 95% bootstrap CI")
        files.append(_save(plt, fig, out, f"nav_by_arm_{sp}.png"))
        # recall@k curves (far items)
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for a in names:
            rk = arms[a].get("recall_at_k_far") or {}
            ks = [int(k) for k in rk if rk[k] is not None]
            if ks:
                ax.plot(ks, [rk[str(k)] for k in ks], marker="o", label=a)
        ax.set_xlabel("k")
        ax.set_ylabel("recall@k (far items)")
        ax.set_ylim(0, 1.05)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, ncol=2)
        else:
            ax.text(0.5, 0.5, "no far items in this split", ha="center", transform=ax.transAxes)
        ax.set_title(f"PARB {sp}: recall@k on far items")
        files.append(_save(plt, fig, out, f"recall_at_k_{sp}.png"))
        # d′ by decoy type
        fig, ax = plt.subplots(figsize=(7, 3.5))
        types = list(next(iter(arms.values()))["d_prime_by_decoy"])
        w = 0.8 / max(1, len(types))
        for j, t in enumerate(types):
            vals = [arms[a]["d_prime_by_decoy"].get(t) or 0.0 for a in names]
            ax.bar([i + j * w for i in range(len(names))], vals, width=w, label=t)
        ax.set_xticks([i + w * (len(types) - 1) / 2 for i in range(len(names))], names)
        ax.axhline(0, color="black", lw=0.8)
        ax.set_ylabel("d′ (F2, loglinear)")
        ax.legend(fontsize=7)
        ax.set_title(f"PARB {sp}: d′ by decoy type")
        files.append(_save(plt, fig, out, f"dprime_by_decoy_{sp}.png"))
    return files, None


def write_report(results: dict[str, Any], out_dir: str | Path) -> Path:
    out = Path(out_dir)
    files, plot_note = _plots(results, out)
    man = results["manifest"]
    L: list[str] = [
        "# PARB report", "",
        f"Representation: **{results['representation']}**. Items: {man.get('n_items')} "
        f"(seed {man.get('seed')}, split {man.get('split')}, generator "
        f"{man.get('generator_version')}, sha256 `{str(man.get('sha256'))[:16]}…`). "
        f"Every arm ran every item (paired: {results.get('paired')}).", "",
        "## Skipped", "",
    ]
    for k, v in results.get("skipped", {}).items():
        L.append(f"- **{k}**: {v}")
    L += llm_lines(results.get("llm_usage") or {})
    L += ["", "## Definitions", ""]
    for k, v in results.get("definitions", {}).items():
        L.append(f"- **{k}**: {v}")
    for sp, data in results["splits"].items():
        arms = data.get("arms") or {}
        L += ["", f"## Split: {sp} ({data.get('n_items', 0)} items)", ""]
        if not arms:
            L.append("No items.")
            continue
        L += ["### Arms", "",
              "| arm | NAV | NAV 95% CI | U | F | N | recall@5 far | d′ F2 | role-map F1 | "
              "transfer acc F4 | partial BA F5 | no-match spec | neg. transfer | Brier | UAP | "
              "yield | failed |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for a, m in arms.items():
            L.append(
                f"| {a} | {_fmt(m['nav'])} | {_ci(m['nav_ci'])} | {m['U']} | {m['F']} | "
                f"{m['N']} | {_fmt(m['recall_at_5_far'])} | {_fmt(m['d_prime'], 2)} | "
                f"{_fmt(m['role_mapping_f1'])} | {_fmt(m['transfer_accuracy'])} | "
                f"{_fmt(m['partial_transfer_balanced_accuracy'])} | "
                f"{_fmt(m['no_match_specificity'])} | {_fmt(m['negative_transfer_rate'])} | "
                f"{_fmt(m['brier'])} | {_fmt(m['useful_analogy_precision'])} | "
                f"{_fmt(m['yield'])} | {m.get('failed', 0)} |")
        L += cost_lines(arms)
        L += controls_lines(data.get("controls"))
        L += ["", "### NAV differences (paired bootstrap, 95% CI)", "",
              "| comparison | ΔNAV | CI |", "|---|---|---|"]
        for k, v in data["comparisons"]["nav_vs"].items():
            L.append(f"| {k} | {v['estimate']:+.3f} | {_ci(v['ci'])} |")
        L += ["", "### Exact McNemar on per-item correctness", "",
              "| pair | n | first only | second only | p |", "|---|---|---|---|---|"]
        for k, v in data["comparisons"]["mcnemar"].items():
            L.append(f"| {k} | {v['n']} | {v['a_only']} | {v['b_only']} | {v['p']:.4g} |")
        L += ["", "### Per family (NAV / accuracy)", ""]
        fams = sorted({f for t in data["families"].values() for f in t})
        L.append("| arm | " + " | ".join(fams) + " |")
        L.append("|---|" + "---|" * len(fams))
        for a, t in data["families"].items():
            L.append(f"| {a} | " + " | ".join(
                f"{t[f]['nav']:+.2f} / {t[f]['accuracy']:.2f} (n={t[f]['n']})" if f in t
                else "—" for f in fams) + " |")
        L += ["", "### NAV sensitivity grid (α,β)", ""]
        keys = list(next(iter(arms.values()))["nav_grid"])
        L.append("| arm | " + " | ".join(keys) + " |")
        L.append("|---|" + "---|" * len(keys))
        for a, m in arms.items():
            L.append(f"| {a} | " + " | ".join(f"{m['nav_grid'][k]:+.2f}" for k in keys) + " |")
        L += ["", "### Hypotheses", ""]
        for h, v in data["hypotheses"].items():
            L.append(f"- **{h}: {v['verdict']}** — keep if: {v.get('keep_if')}")
            for c in v["conditions"]:
                L.append(f"  - {c['verdict']}: {c['detail']}")
            if v.get("reason"):
                L.append(f"  - reason: {v['reason']}")
        sp_files = [f for f in files if f.endswith(f"_{sp}.png")]
        if sp_files:
            L += ["", "### Plots", ""] + [f"![{f}]({f})" for f in sp_files]
    L += ["", "## Plots", "", plot_note or f"{len(files)} PNG plots written.", ""]
    p = out / "report.md"
    p.write_text("\n".join(L), encoding="utf-8")
    return p
