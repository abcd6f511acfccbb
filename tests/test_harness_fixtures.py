"""Shared fixtures for the harness tests: a small real store built from casebook episodes."""

from __future__ import annotations

from pathlib import Path

from analogist.casebook import load_casebook
from analogist.memory.sqlite import Memory

NS = "hx"
PICK = (
    "deadlock-fin-payment-gridlock", "deadlock-mfg-agv-aisle", "deadlock-sw-lock-ordering",
    "deadlock-pol-permit-catch22", "goodhart-edu-pass-rate", "goodhart-pol-rat-bounty",
    "goodhart-med-four-hour-target", "goodhart-sw-test-coverage", "survivorship-avn-bomber-armour",
    "survivorship-med-programme-completers", "stale-copy-fin-cash-extract",
    "stale-copy-med-discharge-list", "herd-sw-cache-stampede", "feedback-fin-bank-run",
    "decoy-stale-copy-sw-deploy-summary",
)
SMALL = ("deadlock-fin-payment-gridlock", "deadlock-mfg-agv-aisle", "deadlock-sw-lock-ordering",
         "goodhart-edu-pass-rate", "goodhart-pol-rat-bounty", "stale-copy-med-discharge-list")
# hand-written for these tests; shares no content word with its target
PARAPHRASE = {"target": "deadlock-sw-lock-ordering",
              "text": "Two workers each grabbed one mutex then waited forever on the other"}


def build_store(path: Path, *, corrected: bool = True, pick: tuple[str, ...] = PICK) -> Path:
    by_id = {e.id: e for e in load_casebook()}
    with Memory.open(path) as m:
        m.add_many([by_id[i].signature for i in pick], namespace=NS)
        if corrected:
            data = by_id["stale-copy-med-discharge-list"].signature.to_data()
            data["episode_id"] = "stale-copy-med-discharge-list-corrected"
            data["levels"]["L0"] = "Re-recorded after review. " + data["levels"]["L0"]
            m.add(data, namespace=NS)
            m.supersede("stale-copy-med-discharge-list",
                        "stale-copy-med-discharge-list-corrected", namespace=NS)
    return path
