"""Checks of the figures past benchmark rounds recorded (benchmarks/RESULTS.md tells them): each
recomputes a round's medians and costs from its runs, kept under tests/data/roundtrip_modes, and the
benchmarks' summaries on recorded-shape results. Not part of the suite of behaviour (``pytest``
collects tests/ only); run them with ``python -m pytest benchmarks/checks``."""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2] / "tests"
if str(TESTS) not in sys.path:
    sys.path.append(str(TESTS))  # the records the suite builds in code (synthetic.py)
