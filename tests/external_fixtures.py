"""Where the tiny fixtures of the external-benchmark tests live (one folder per format)."""

from __future__ import annotations

from pathlib import Path

FIX = Path(__file__).resolve().parent / "data" / "external"
FOLDER = {"arn": "arn", "analobench-t1": "analobench", "analobench-t2": "analobench",
          "storyanalogy": "storyanalogy", "parallelparc-mc": "parallelparc",
          "parallelparc-binary": "parallelparc", "rattermann": "rattermann",
          "historical": "historical"}
