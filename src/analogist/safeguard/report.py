"""The report: per-analogy verdicts, the content share, rendering and the JSON shape."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from analogist.safeguard.assess import ItemAssessment
from analogist.safeguard.rules import SHARE_THRESHOLD
from analogist.safeguard.turn import Mode, Section

# -- the report ------------------------------------------------------------------------------

@dataclass
class AnalogyCheck:
    """The verdict on one analogy (see :meth:`SafeguardReport.to_json` for the public shape)."""

    section: Section
    index: int
    mode: Mode
    passed: bool
    classification: str | None
    grade: str | None
    reasons: list[str] = field(default_factory=list)
    recommendations: list[str] = field(default_factory=list)
    location: str = ""
    source: str | None = None
    similarities: list[ItemAssessment] = field(default_factory=list)
    differences: list[ItemAssessment] = field(default_factory=list)
    missed_differences: list[str] = field(default_factory=list)
    mapping: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"section": self.section, "index": self.index, "mode": self.mode,
                "pass": self.passed, "classification": self.classification,
                "grade": self.grade, "reasons": list(self.reasons),
                "recommendations": list(self.recommendations)}


@dataclass
class SafeguardReport:
    """Per-analogy verdicts, the content share (an estimate, see ``share_method``), its flag,
    the LLM steps skipped (with the reason) and notes."""

    analogies: list[AnalogyCheck]
    content_share: float
    content_share_flag: bool
    share_method: str = "deterministic estimate"
    share_estimate_deterministic: float = 0.0
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def all_pass(self) -> bool:
        return all(a.passed for a in self.analogies)

    def to_json(self) -> dict[str, Any]:
        """Exactly the issue's shape: ``analogies``, ``content_share``, ``content_share_flag``."""
        return {"analogies": [a.to_json() for a in self.analogies],
                "content_share": self.content_share,
                "content_share_flag": self.content_share_flag}

    def details(self) -> dict[str, Any]:
        """:meth:`to_json` plus where each analogy is, what its items were read as, the share
        method, the skipped LLM steps and notes."""
        out = self.to_json()
        for a, d in zip(self.analogies, out["analogies"], strict=True):
            d["location"] = a.location
            d["source"] = a.source
            d["similarities"] = [{"text": s.text, "counts": s.ok, "concepts": s.names(),
                                  "reason": s.reason} for s in a.similarities]
            d["differences"] = [{"text": s.text, "counts": s.ok, "reason": s.reason}
                                for s in a.differences]
            d["missed_differences"] = list(a.missed_differences)
            d["mapping"] = a.mapping
        out["share_method"] = self.share_method
        out["share_estimate_deterministic"] = self.share_estimate_deterministic
        out["share_threshold"] = SHARE_THRESHOLD
        out["skipped"] = list(self.skipped)
        out["notes"] = list(self.notes)
        return out

    def render(self) -> str:
        """A plain-text table: one row per analogy, then its reasons and recommendations."""
        head = ("#", "section", "idx", "mode", "result", "class / grade", "source")
        rows = []
        for n, a in enumerate(self.analogies, 1):
            rows.append((str(n), a.section, str(a.index), a.mode,
                         "PASS" if a.passed else "FAIL", a.classification or a.grade or "-",
                         (a.source or "-")[:40]))
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
                  for i, h in enumerate(head)]
        line = "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))
        out = [line, "  ".join("-" * w for w in widths)]
        out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
        if not rows:
            out.append("(no analogies found)")
        for n, a in enumerate(self.analogies, 1):
            out.append("")
            out.append(f"[{n}] {a.location}: {'PASS' if a.passed else 'FAIL'}")
            out += [f"    - {r}" for r in a.reasons]
            out += [f"    > {r}" for r in a.recommendations]
        flag = "FLAGGED (over ~15%; the judge decides)" if self.content_share_flag else "ok"
        out.append("")
        out.append(f"content share: {self.content_share:.1%} ({self.share_method}) — {flag}")
        out += [f"note: {x}" for x in self.notes]
        out += [f"{x}" for x in self.skipped]
        return "\n".join(out) + "\n"


def report_json(report: SafeguardReport) -> str:
    """The report in the issue's JSON shape, as deterministic text."""
    return json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n"
