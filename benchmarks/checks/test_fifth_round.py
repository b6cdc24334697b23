"""The round trip's fifth round on the H200 (issue #28, ``tests/data/roundtrip_modes/fifth_round``):
where a replay's compile goes (a probe with nvFuser's kernel database), the floors of stablelm and
phi-2, the imports of a Python that writes no bytecode, and the default mode beside the reference
with a bytecode cache, on three sessions."""

from __future__ import annotations

import json
import re
import statistics

import pytest

from benchmarks.bench_roundtrip import compare_modes, floor_costs, process_costs, spread

from recorded_roundtrips import DATA, check_costs, handover_gaps, recorded_modes, recorded_phases

ROUND = DATA / "fifth_round"
PROBE = ROUND / "compile_probe"
SESSIONS = {"llama3": 26, "stablelm": 10, "phi2": 8}
"""Each session's live fusion records."""
SCRIPTS = (
    "llama3_0",
    "llama3_16",
    "stablelm_0",
    "stablelm_1",
    "stablelm_5",
    "stablelm_7",
    "phi2_0",
    "phi2_4",
    "phi2_6",
)
"""The probe's repro scripts: SESSION_N is the session's record #N, small and long compiles."""


def _modes(session: str) -> dict:
    return recorded_modes(ROUND / "sessions" / session)


def _floor(session: str) -> dict:
    return recorded_modes(ROUND / "floors" / session)["floor"]


def _probe() -> dict[str, dict[str, dict]]:
    """``compile.jsonl``: each script's run by condition (one round)."""
    rows: dict[str, dict[str, dict]] = {}
    for line in (PROBE / "compile.jsonl").read_text().splitlines():
        row = json.loads(line)
        if "script" in row:
            rows.setdefault(row["script"].removesuffix(".py"), {})[row["mode"]] = row
    return rows


def _seconds(text: str, label: str) -> list[float]:
    return [float(s) for s in re.findall(rf"{label} import run \d: ([0-9.]+) s", text)]


def test_the_probe_ran_every_script_in_every_condition():
    rows = _probe()
    assert sorted(rows) == sorted(SCRIPTS)
    for script, by_mode in rows.items():
        assert set(by_mode) == {"fresh", "fork_plain", "fork_nvrtc", "kdb_write", "kdb_read"}, script


def test_a_kernel_found_in_nvfusers_database_saves_no_compile_time():
    """With ``NVFUSER_ENABLE=kernel_db``, the second process found every kernel of the first in the
    database (no entry added, and 35 to 58 % of the page faults: NVRTC never ran), yet its
    script took as long: 25.5 s in all against 24.8 s. NVRTC is not what a replay's compile costs;
    nvFuser's own work before it (segmenting, scheduling, lowering) is, so a compile done ahead in
    another process and handed over as a binary would save nothing."""
    rows = _probe()
    for script in SCRIPTS:
        write, read = rows[script]["kdb_write"], rows[script]["kdb_read"]
        assert write["db_before"] is None and write["db_after"] >= 3, script
        assert read["db_before"] == read["db_after"] == write["db_after"], script
        assert read["minflt"] < 0.6 * write["minflt"], script
    written = sum(rows[s]["kdb_write"]["script_s"] for s in SCRIPTS)
    found = sum(rows[s]["kdb_read"]["script_s"] for s in SCRIPTS)
    assert (written, found) == pytest.approx((24.756, 25.499), abs=1e-3)


def test_a_forked_child_compiles_no_slower_than_a_fresh_process():
    """The same scripts in a fresh process and in a child forked from a server that imported torch
    and nvFuser: 27.5 s against 26.6 s in all; per script from -46 % to +21 %, both ways. The
    4-24 % more that the fourth round's children took over the references' fresh processes was the
    compile's own spread."""
    rows = _probe()
    fresh = sum(rows[s]["fresh"]["script_s"] for s in SCRIPTS)
    forked = sum(rows[s]["fork_plain"]["script_s"] for s in SCRIPTS)
    assert (fresh, forked) == pytest.approx((27.535, 26.605), abs=1e-3)
    ratios = [rows[s]["fork_plain"]["script_s"] / rows[s]["fresh"]["script_s"] for s in SCRIPTS]
    assert min(ratios) < 0.6 and max(ratios) > 1.2
    # copy-on-write after the fork (transparent huge pages only on madvise): at most 7 % more faults
    faults = [rows[s]["fork_plain"]["minflt"] / rows[s]["fresh"]["minflt"] for s in SCRIPTS]
    assert all(1.0 < f < 1.071 for f in faults)


def test_nvrtc_warmed_in_the_server_leaves_its_children_without_cuda():
    """A compile through NVRTC (ctypes, no CUDA call) in the server before forking: every child's
    first CUDA call failed, so the server warms nothing."""
    rows = _probe()
    for script in SCRIPTS:
        assert "CUDA driver initialization failed" in rows[script]["fork_nvrtc"]["error"], script


def test_this_image_writes_no_bytecode_and_its_imports_take_twice_as_long():
    """The lent machine sets ``PYTHONDONTWRITEBYTECODE=1`` and ships no ``__pycache__``: torch,
    nvFuser and torch._inductor.config took 9.1-10.8 s to import; with a bytecode cache
    (``PYTHONPYCACHEPREFIX``, the variable unset), 13.1 s the first time (writing it), then 4.5 s."""
    without = (PROBE / "imports_without_bytecode.txt").read_text()
    assert "sys.flags.dont_write_bytecode 1 PYTHONDONTWRITEBYTECODE 1" in without
    assert all("pycache: None" in line for line in without.splitlines()[:4])
    plain = _seconds(without, "plain")
    with_cache = _seconds((ROUND / "imports_with_bytecode.txt").read_text(), "bytecode-cache")
    assert plain == [10.81, 9.07]
    assert with_cache == [13.08, 4.55, 4.45]
    assert min(plain) / max(with_cache[1:]) > 1.9


@pytest.mark.parametrize(("session", "median", "wall"), [("stablelm", 2.44, 35.27), ("phi2", 2.14, 32.43)])
def test_the_floors_of_stablelm_and_phi2(session, median, wall):
    """Every distinct fusion in one long-lived process (no isolation): its compile and its share of
    the samples. Measured here for the first time."""
    floor = _floor(session)
    assert not floor["stopped_at_limit"] and floor["replayed"] == floor["distinct"]
    costs = floor_costs(recorded_phases(ROUND / "floors" / session, "floor"))
    assert costs == pytest.approx(floor["costs_s"])
    assert (spread(costs)["median_s"], floor["wall_s"]) == pytest.approx((median, wall), abs=0.005)


@pytest.mark.parametrize(("session", "mode"), [(s, m) for s in SESSIONS for m in _modes(s)])
def test_each_runs_cost_per_fusion_is_recomputed_from_its_recorded_processes(session, mode):
    figures = _modes(session)[mode]
    costs = process_costs(figures["processes"])
    check_costs(figures, costs)


@pytest.mark.parametrize(
    ("session", "median", "worst", "reference"),
    [("llama3", 2.82, 5.11, 4.99), ("stablelm", 3.06, 4.81, 4.54), ("phi2", 3.10, 5.81, 5.44)],
)
def test_the_default_modes_cost_with_a_bytecode_cache(session, median, worst, reference):
    """No run stopped. The worst is within 1.9x the median in every session (the first fusion waits
    for the server's imports, now 4.5 s); the median is at most 3 s on llama3 only."""
    modes = _modes(session)
    figures = modes["forked_turn"]
    assert not figures["stopped_at_limit"] and figures["replayed"] == figures["distinct"]
    assert not modes["reference"]["stopped_at_limit"]
    assert (figures["median_s"], figures["worst_s"], modes["reference"]["median_s"]) == pytest.approx(
        (median, worst, reference), abs=0.005
    )
    assert figures["worst_s"] / figures["median_s"] < 2.0


@pytest.mark.parametrize(("session", "median_after_first"), [("llama3", 2.62), ("stablelm", 2.86), ("phi2", 2.38)])
def test_without_the_first_fusion_the_defaults_median_is_under_3_s(session, median_after_first):
    """The first fusion also waits for the server's imports, once per run. In sessions of 8 to 12
    distinct fusions that one cost lands in the middle of the others and moves the median a rank;
    the median of the others is under 3 s in all three sessions."""
    costs = process_costs(_modes(session)["forked_turn"]["processes"])
    assert spread(costs)["median_after_first_s"] == pytest.approx(median_after_first, abs=0.005)


@pytest.mark.parametrize("session", SESSIONS)
def test_every_verdict_is_the_references_on_every_record(session):
    modes = _modes(session)
    compared = compare_modes(modes, modes["reference"])["forked_turn"]
    assert compared["verdicts_vs_reference"] == {"compared": SESSIONS[session], "differ": [], "same": True}


def test_stablelm_nvfusion6_replays_slower_in_the_default_than_in_the_reference_every_round_since_d366b79():
    """Its median: 20464 ns in the default against 19904 ns in the reference beside it (+2.8 %,
    above the 2 % noise floor); fourth round 20287.5 against 19872 (+2.1 %); third round, before the
    profiler's imports moved, 19968 against 19856 (+0.6 %). Live: 20127.5 ns. Same clocks (1980 /
    3201 MHz), no clock event, no other process in either window. Not explained yet."""
    medians = {}
    for name, folder in (
        ("third", DATA / "third_round" / "spares_vs_turn" / "stablelm_turn"),
        ("fourth", DATA / "fourth_round" / "sessions" / "stablelm"),
        ("fifth", ROUND / "sessions" / "stablelm"),
    ):
        modes = recorded_modes(folder)
        medians[name] = (modes["forked_turn"]["replay_median_ns"]["6"], modes["reference"]["replay_median_ns"]["6"])
    assert medians == {"third": (19968.0, 19856.0), "fourth": (20287.5, 19872.0), "fifth": (20464.0, 19904.0)}
    shifted = compare_modes(_modes("stablelm"), _modes("stablelm")["reference"])["forked_turn"]["shifts_vs_reference"]
    assert shifted["shifted"] == ["3", "6"]
    assert shifted["rows"]["6"]["ratio"] == pytest.approx(1.0281, abs=5e-4)


def _replay_records(session: str, mode: str) -> dict[str, dict]:
    """The capture each of ``mode``'s replay processes wrote, by its log's stem."""
    folder = ROUND / "sessions" / session / mode / "logs"
    return {
        p.stem: json.loads(p.read_text())["fusions"][0]
        for p in sorted(folder.glob("*.json"))
        if not p.name.endswith(".phases.json")
    }


def test_stablelm_nvfusion6s_two_replays_differ_in_their_samples_only():
    """Inputs, kernel, launch configuration, registers, source, clocks: the same; no clock event and
    no other process in either window."""
    default = _replay_records("stablelm", "forked_turn")["0006_backward_nvFusion6"]
    reference = _replay_records("stablelm", "reference")["0006_backward_nvFusion6"]
    for key in ("inputs", "definition_hash", "segmentation", "enable_options", "disable_options"):
        assert default[key] == reference[key], key

    def untimed(record: dict) -> list[dict]:
        return [{k: v for k, v in kernel.items() if k != "timing"} for kernel in record["kernels"]]

    assert untimed(default) == untimed(reference)
    for record in (default, reference):
        device = record["conditions"]["device"]
        assert (device["sm_clock_mhz"], device["memory_clock_mhz"]) == (1980, 3201)
        assert device["clock_event_reasons"] == [0, 0, 0] and device["other_process_count"] == 0
        assert record["conditions"]["other_work"]["kernels"] == []
    assert (default["timing"]["summary"]["median_ns"], reference["timing"]["summary"]["median_ns"]) == (
        20464.0,
        19904.0,
    )


def test_the_defaults_sampling_window_was_shorter_than_the_references_for_every_fusion():
    """25 to 65 ms against 34 to 92 ms; what that has to do with nvFusion6 is not known."""
    default_windows, reference_windows = [], []
    for session in SESSIONS:
        default, reference = _replay_records(session, "forked_turn"), _replay_records(session, "reference")
        assert sorted(default) == sorted(reference)
        for stem in default:
            a = default[stem]["conditions"]["device"]["window_ns"]
            b = reference[stem]["conditions"]["device"]["window_ns"]
            assert a < b, (session, stem)
            default_windows.append(a / 1e6)
            reference_windows.append(b / 1e6)
    assert len(default_windows) == 29
    assert (min(default_windows), max(default_windows)) == pytest.approx((25.0, 65.4), abs=0.05)
    assert (min(reference_windows), max(reference_windows)) == pytest.approx((33.9, 91.6), abs=0.05)


def test_stablelms_median_fusion_moved_with_its_compile():
    """nvFusion1, the median of stablelm's default run in both rounds: its scripts (the compile)
    took 3.65 s in the fourth round and 2.61 s in the fifth, its turn 4.22 and 3.06 s."""
    seconds = []
    for folder in (DATA / "fourth_round" / "sessions" / "stablelm", ROUND / "sessions" / "stablelm"):
        figures = recorded_modes(folder)["forked_turn"]
        turn = next(p["seconds"] for p in figures["processes"] if p["log"].startswith("0001_"))
        assert turn == pytest.approx(figures["median_s"], abs=0.01)
        phases = json.loads((folder / "forked_turn" / "logs" / "0001_forward_nvFusion1.phases.json").read_text())
        seconds.append((round(phases["seconds"]["scripts"], 2), round(turn, 2)))
    assert seconds == [(3.65, 4.22), (2.61, 3.06)]


@pytest.mark.parametrize("session", SESSIONS)
def test_between_two_default_turns_the_hand_over_takes_a_seventh_of_a_second(session):
    """From the end of a process's capture (its last phase) to the next process's CUDA context: the
    process's exit and the worker seeing it go, on the critical path of every turn but the first
    (median 0.133 to 0.148 s; what ``--prepare-ahead handover`` takes off)."""
    docs = sorted(recorded_phases(ROUND / "sessions" / session, "forked_turn"), key=lambda d: d["ended_at"])
    gaps = handover_gaps(docs)
    assert 0.1 < min(gaps) and max(gaps) < 0.19
    assert 0.13 <= statistics.median(gaps) <= 0.15
