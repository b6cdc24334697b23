"""The round trip's modes as measured on the H200 (issue #28, ``tests/data/roundtrip_modes``): the
benchmark's figures recomputed from what each mode's run recorded (its processes' ends, its
processes' phases), and what the runs showed about each mode's turn-taking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.bench_roundtrip import compare_modes, floor_costs, process_costs, spread

DATA = Path(__file__).parent / "data" / "roundtrip_modes"


def _modes(session: str) -> dict:
    return json.loads((DATA / session / "modes.json").read_text())["modes"]


def _phases(session: str, mode: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((DATA / session / mode / "logs").glob("*.phases.json"))]


@pytest.mark.parametrize(
    ("session", "mode"),
    [("llama3_first", m) for m in ("reference", "ahead", "pipeline")]
    + [("llama3_second", "context"), ("phi2", "context"), ("phi2", "reference"), ("stablelm", "context")],
)
def test_each_modes_cost_per_fusion_is_recomputed_from_its_recorded_processes(session, mode):
    figures = _modes(session)[mode]
    costs = process_costs(figures["processes"])
    assert costs == pytest.approx(figures["costs_s"])
    assert spread(costs)["median_s"] == pytest.approx(figures["median_s"])
    assert len(costs) == figures["replayed"] == len(_phases(session, mode))


def test_the_floor_is_one_process_whose_fusions_cost_their_compile_and_share_of_the_samples():
    floor = _modes("llama3_first")["floor"]
    assert len(floor["processes"]) == 1 and floor["processes"][0]["scripts"] == 12
    assert floor_costs(_phases("llama3_first", "floor")) == pytest.approx(floor["costs_s"])


def test_the_verdicts_each_mode_gave_against_the_reference_run_beside_it():
    first = _modes("llama3_first")
    compared = compare_modes(first, first["reference"])
    assert compared["ahead"]["verdicts_vs_reference"]["same"]
    assert compared["floor"]["verdicts_vs_reference"]["same"]
    # the pipeline (scripts compiled ahead on the GPU) turned two fusions' verdicts, records 3, 7, 11
    # (one distinct fusion, replayed 1.1 % slower) and 17, 21 (1.0 % faster): why it is not the default
    assert compared["pipeline"]["verdicts_vs_reference"]["differ"] == ["3", "7", "11", "17", "21"]
    for session in ("phi2", "stablelm"):
        modes = _modes(session)
        verdicts = compare_modes(modes, modes["reference"])["context"]["verdicts_vs_reference"]
        assert verdicts["same"] and verdicts["compared"] >= 8, session


def test_a_context_mode_turn_waits_for_the_preparations_under_way_and_the_process_before_it_to_exit():
    """What the phases of llama3's context run show (the next step's evidence): no process samples
    while another prepares, and each turn's scripts start at least the previous process's exit after
    its writing ended."""
    docs = _phases("llama3_second", "context")
    windows = [(p["start"], p["end"], i, p["name"]) for i, d in enumerate(docs) for p in d["phases"]]
    samples = [w for w in windows if w[3] == "samples"]
    preparing = [w for w in windows if w[3] in ("cuda_context", "profiler_init")]
    assert len(samples) == 12 and len(preparing) == 24
    assert not [(s, p) for s in samples for p in preparing if s[2] != p[2] and p[0] < s[1] and s[0] < p[1]]
    ends = sorted(w[1] for w in windows if w[3] == "writing")
    starts = sorted(w[0] for w in windows if w[3] == "scripts")
    gaps = [start - end for end, start in zip(ends, starts[1:])]
    assert min(gaps) > 0.9  # about a second between a process's capture written and the next turn
