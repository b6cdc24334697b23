"""Host-bound only where the timing statistics confirm it (fusiondiff.diff.rules_host), on pairs
recorded on the H200: the zoo as recorded on 2026-12-03, its replays made while the live process
still held its CUDA context (tests/data/zoo_same_process) and with each side in a process of its
own (tests/data/zoo). A side's host time is four warm-ups there, spread 10 to 77 us around kernels
of 5 to 27 us, so a gap of medians alone named a host-bound side in 12 of the 21 pairs (the
statistics on four samples: in 8). Four samples a side are too few for the host question, which
leaves every one of these pairs not judged; copies with the host times repeated (``host_copies``)
check what the rule decides with enough samples."""

from __future__ import annotations

from pathlib import Path

from host_copies import with_host_samples

from fusiondiff.diff import rules_host
from fusiondiff.diff.core import diff
from fusiondiff.front.api import diff_files
from fusiondiff.io.store import load_capture

DATA = Path(__file__).resolve().parents[1] / "data"


def _host_findings(folder: Path):
    result = diff_files(folder / "live.json", folder / "replay.json")
    return [f for f in result.findings if f.rule == "host_bound"], result


def _samples_us(folder: Path, side: str) -> list[float]:
    record = load_capture(folder / f"{side}.json").fusions[0]
    return sorted(s / 1000 for s in record.conditions.host.per_call_samples_ns)


def _median_rule_fires(folder: Path) -> bool:
    """What the rule said before its statistics: a gap of medians beyond the margin."""
    a, b = (load_capture(folder / f"{side}.json").fusions[0] for side in ("live", "replay"))
    waits = [max(r.conditions.host.per_call_ns - r.timing.median_ns, 0.0) for r in (a, b)]
    hosts = [a.conditions.host.per_call_ns, b.conditions.host.per_call_ns]
    return any(
        waits[i] > 0 and waits[i] - waits[1 - i] >= max(rules_host.HOST_MARGIN_NS, rules_host.HOST_SHARE * hosts[1 - i])
        for i in (0, 1)
    )


def test_both_sides_host_bound_and_their_host_times_not_told_apart_is_no_finding():
    folder = DATA / "zoo" / "constant_precision"
    live, replay = _samples_us(folder, "live"), _samples_us(folder, "replay")
    assert live[-1] > replay[0]  # the four host times of each side overlap (18.6 > 18.3 us)
    assert _median_rule_fires(folder)  # medians 13.0 and 19.8 us around 7 us kernels
    assert _host_findings(folder)[0] == []


def test_host_times_that_overlap_the_kernels_are_no_finding():
    folder = DATA / "zoo_same_process" / "runtime_reuse"
    replay = _samples_us(folder, "replay")
    kernel_us = load_capture(folder / "replay.json").fusions[0].timing.median_ns / 1000
    assert replay[0] < kernel_us < replay[-1]  # 12.8 and 34.2 us around a 19.7 us kernel
    assert _median_rule_fires(folder)
    assert _host_findings(folder)[0] == []


def test_a_side_without_kernel_times_is_not_called_host_bound():
    for folder in (DATA / "zoo_same_process" / "cupti_conflict", DATA / "zoo" / "cupti_conflict"):
        assert load_capture(folder / "live.json").fusions[0].timing.median_ns == 0  # CUPTI taken first
        assert _median_rule_fires(folder)
        assert _host_findings(folder)[0] == []


def test_four_warm_ups_against_four_confirm_no_host_bound_side():
    """option_live_only: every one of the live side's four host times is above its kernels, and the
    rule once confirmed it host-bound from four samples against four: now not judged."""
    folder = DATA / "zoo" / "option_live_only"
    live = _samples_us(folder, "live")
    kernel_us = load_capture(folder / "live.json").fusions[0].timing.median_ns / 1000
    assert live[0] > kernel_us
    found, result = _host_findings(folder)
    assert found == [] and not result.judged("host")


def test_a_confirmed_host_bound_side_is_found_and_claims_no_kernel_gap():
    """The H100's LayerNorm at offset 1 under thunderfx, against fusiondiff's repro, on copies with
    the host times repeated (host_copies): Thunder's region call (139.9 us) is beyond its kernels
    (10.3 us) and beyond the floor of the repro's fd.execute."""
    folder = DATA / "h100" / "offset_thunderfx"
    live = with_host_samples(load_capture(folder / "live.json"))
    result = diff(live, with_host_samples(load_capture(folder / "replay_fusiondiff.json")))
    found = [f for f in result.findings if f.rule == "host_bound"]
    assert len(found) == 1
    data = {e.field: e for e in found[0].data}
    assert data["host_per_call_ns"].a > data["kernel_per_call_ns"].a
    assert data["gpu_wait_per_call_ns"].a > data["gpu_wait_per_call_ns"].b
    assert data["extra_gpu_wait_step_ns"].a > 0 and data["extra_gpu_wait_step_ns"].b is None  # A's, as data
    # reported on the host question, counted in no gap: the GPU's wait is its evidence
    assert found[0].explained_ns == 0 and found[0].question == "host"
    assert result.pairs[0].timing.verdict == "SAME"
