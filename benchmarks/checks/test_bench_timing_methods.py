"""The timing-methods benchmark's summary on recorded-shape results, without a GPU: medians, spreads,
live-vs-replay, and the planted-slowdown verdicts through fusiondiff's statistics."""

from __future__ import annotations

from benchmarks.bench_timing_methods import GROUPS, markdown, summarize

import synthetic


def measurement(median_ns: float, seed: int, n: int = 30) -> dict[str, object]:
    samples = list(synthetic.samples(median_ns, n=n, spread=0.003, seed=seed))
    return {"figure_ns": sorted(samples)[n // 2], "samples_ns": samples, "wall_s": 0.1}


def side(median_ns: float, offset: int) -> dict[str, object]:
    return {
        "fusions": {
            "fusion0": {m: [measurement(median_ns, offset + r) for r in range(5)] for g in GROUPS.values() for m in g}
        },
    }


def test_summary_and_planted_verdicts():
    planted = {
        m: {
            "A": [measurement(20_000, 100 + r) for r in range(5)],
            "B": [measurement(20_620, 200 + r) for r in range(5)],
            "A2": [measurement(20_000, 300 + r) for r in range(5)],
        }
        for g in GROUPS.values()
        for m in g
    }
    planted["kerneltime"] = {"error": "KernelTime not importable"}
    replay = {**side(20_200, 10), "planted": planted}
    runs = {"live-torch": side(20_000, 0), "live-nvfuser": side(20_000, 0), "replay-torch": replay}
    runs["replay-nvfuser"] = {**side(20_200, 10), "planted": planted}
    summary = summarize(runs)
    row = summary["methods"]["fusiondiff-cold"]["fusion0"]
    assert abs(row["replay_vs_live_pct"] - 1.0) < 0.5 and row["live_cv_pct"] < 1
    p = summary["planted"]["fusiondiff-cold"]
    assert (p["slowdown_samples"], p["identical_samples"]) == ("SLOWER", "SAME")
    assert p["slowdown_natural"] == "SLOWER" and p["identical_natural"] == "SAME"
    assert summary["planted"]["kerneltime"] == {"error": "KernelTime not importable"}
    text = markdown(summary, {"fusions": 1, "layers": 3, "repeats": 5, "wall_s": 1.0})
    assert "## fusiondiff-cold" in text and "| fusion0 | 20.00 |" in text and "KernelTime not importable" in text
