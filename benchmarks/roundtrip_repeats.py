"""What repeated runs of ``bench_roundtrip.py --modes`` say together (``MODE,MODE:2,MODE:3``): each
mode's median cost over its runs, and the fusions whose replayed medians every run of a mode put on
one side of every run of the reference (a shift that run-to-run spread does not cover; one run
each is not enough to say so)."""

from __future__ import annotations

import math
import statistics
from typing import Any


def _base(name: str) -> str:
    return name.split(":", 1)[0]


def runs_by_mode(figures: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """The runs of each mode, in the order they ran (``reference``, ``reference:2``...)."""
    runs: dict[str, list[str]] = {}
    for name in figures:
        runs.setdefault(_base(name), []).append(name)
    return runs


def repeat_summary(figures: dict[str, dict[str, Any]], reference: str = "reference") -> dict[str, Any]:
    """Per mode run more than once, its runs' medians (s) and their median; per mode against the
    reference (both run at least twice), the records whose every replayed median lies above, or
    below, every one of the reference's, with the ratio of the medians of the runs' medians; and how
    often that happens by chance alone for one record (``chance``: runs that differ in nothing fall
    all apart, one way or the other, in 2 of the C(n + m, n) orders of n and m runs)."""
    runs = runs_by_mode(figures)
    costs = {
        mode: {"runs": len(names), "medians_s": [figures[n]["median_s"] for n in names if figures[n]["median_s"]]}
        for mode, names in runs.items()
    }
    for entry in costs.values():
        entry["median_of_medians_s"] = statistics.median(entry["medians_s"]) if entry["medians_s"] else None
    apart: dict[str, dict[str, dict[str, Any]]] = {}
    theirs = runs.get(reference, [])
    for mode, names in runs.items():
        if mode == reference or len(names) < 2 or len(theirs) < 2:
            continue
        apart[mode] = {"chance": 2 / math.comb(len(names) + len(theirs), len(names)), "records": {}}
        for record in sorted(figures[names[0]].get("replay_median_ns", {}), key=int):
            mine = [figures[n].get("replay_median_ns", {}).get(record) for n in names]
            ref = [figures[n].get("replay_median_ns", {}).get(record) for n in theirs]
            if None in mine or None in ref:
                continue
            if min(mine) > max(ref) or max(mine) < min(ref):
                apart[mode]["records"][record] = {
                    "ratio": statistics.median(mine) / statistics.median(ref),
                    "above": min(mine) > max(ref),
                }
    return {"costs": costs, "apart": apart}


def repeat_lines(summary: dict[str, Any], reference: str = "reference") -> list[str]:
    """``forked_turn x3: 3.16 s (2.75 to 3.53)`` per mode run more than once, then per mode the
    records apart from the reference's runs: ``record 3 +2.15 % (every run above the reference's)``."""
    lines = []
    for mode, entry in summary["costs"].items():
        values = entry["medians_s"]
        if entry["runs"] > 1 and values:
            lines.append(
                f"{mode} x{entry['runs']}: median of the runs' medians {entry['median_of_medians_s']:.2f} s "
                f"({min(values):.2f} to {max(values):.2f})"
            )
    for mode, found in summary["apart"].items():
        odds = f"by chance alone, 1 record in {1 / found['chance']:.0f}"
        if not found["records"]:
            lines.append(f"{mode}: no record's runs all apart from the {reference}'s ({odds})")
            continue
        words = ", ".join(
            f"record {key} {100 * (r['ratio'] - 1):+.2f} % (every run {'above' if r['above'] else 'below'})"
            for key, r in found["records"].items()
        )
        lines.append(f"{mode}, runs all apart from the {reference}'s ({odds}): {words}")
    return lines
