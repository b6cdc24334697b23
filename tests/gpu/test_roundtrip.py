"""``fusiondiff roundtrip`` on the GPU: a live capture recorded on the H200 (llama3's step, 26
records of 12 distinct fusions) replayed for real, a fresh process per fusion, K processes started
ahead and prepared on the GPU (context, compile, profiler) between other replays' samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fusiondiff.io.store import load_capture
from fusiondiff.records.model import TimingProtocol
from fusiondiff.records.options import RecordingOptions
from fusiondiff.roundtrip.replays import FORK_SERVER_LOG

pytestmark = pytest.mark.gpu

LIVE = Path(__file__).parent.parent / "data" / "fidelity" / "llama3" / "live.json"
PREPARED = {"gpu": "waiting for its turn to time", "context": "waiting for its turn to run its scripts and time"}
"""What a replay's log says once it is prepared ahead, per ``--prepare-ahead``."""
ON_THE_GPU = ("cuda_context", "scripts", "profiler_init", "samples")
"""The phases of a replay process that reach the GPU (replay/phases.py)."""


@pytest.mark.parametrize(
    ("ahead", "prepare", "forked"), [(4, "gpu", False), (6, "context", False), (3, "context", True)]
)
def test_every_distinct_fusion_is_replayed_in_its_own_process_prepared_ahead_never_beside_samples(
    tmp_path, ahead, prepare, forked
):
    from fusiondiff import roundtrip as rt

    options = RecordingOptions(protocol=TimingProtocol(warmup=3, samples=10))
    result = rt.roundtrip(
        LIVE, tmp_path / "rt", devices=[None], options=options, ahead=ahead, prepare=prepare, forked=forked
    )
    assert result.forked == forked
    assert not result.interrupted and result.not_replayed == {}
    distinct = len(rt.distinct_fusions(load_capture(LIVE)))
    assert len(result.distinct) == distinct == 12 and result.replayed_now == distinct and result.started_ahead
    assert len(result.processes) == distinct and all(p.scripts == 1 for p in result.processes)
    assert {r.verdict for r in result.rows} <= {"SAME", "FASTER", "SLOWER", "NOT MEASURED"}, result.rows
    merged = load_capture(tmp_path / "rt" / "replay.json")
    assert len(merged.fusions) == distinct and all(f.failure is None and f.kernels for f in merged.fusions)
    # each replay's log (the fork server's own is beside them)
    logs = sorted(log for log in (tmp_path / "rt" / "logs").glob("*.log") if log.name != FORK_SERVER_LOG)
    prepared = [log.name for log in logs if PREPARED[prepare] in log.read_text()]
    # every replay was started ahead and prepared on the GPU before its turn to time
    assert len(logs) == distinct and len(prepared) == distinct, prepared
    _no_samples_beside_other_gpu_work(tmp_path / "rt" / "logs", distinct)
    if forked:  # every replay was a child of the one server, which never made a CUDA context
        server_log = (tmp_path / "rt" / "logs" / "fork_server.log").read_text()
        print(server_log)  # its OS threads after importing torch and nvFuser, for the record
        assert "serving" in server_log, server_log
        docs = [json.loads(p.read_text()) for p in (tmp_path / "rt" / "logs").glob("*.phases.json")]
        assert all(d["seconds"]["imports"] < 0.5 for d in docs), [d["seconds"]["imports"] for d in docs]
    for f in merged.fusions:  # the spares waiting on the GPU are not other processes
        device = f.conditions.device if f.conditions else None
        assert device is None or device.other_process_count == 0, (f.name, device)


def _no_samples_beside_other_gpu_work(logs: Path, distinct: int) -> None:
    """From each process's wall-clock phases: no replay's samples overlap another's context
    creation, scripts, profiler start or samples."""
    docs = [json.loads(p.read_text()) for p in sorted(logs.glob("*.phases.json"))]
    assert len(docs) == distinct
    windows = [(i, p["name"], p["start"], p["end"]) for i, d in enumerate(docs) for p in d["phases"]]
    for i, name, start, end in windows:
        assert name != "samples" or not [
            (j, other) for j, other, s, e in windows if j != i and other in ON_THE_GPU and s < end and start < e
        ], (i, start, end)
    for d in docs:
        span = {p["name"]: (p["start"], p["end"]) for p in d["phases"]}
        # its preparation (the profiler's start-up) and its wait for its turn end before its samples
        assert span["profiler_init"][1] <= span["samples"][0] and span["wait_to_time"][1] <= span["samples"][0], span
        if "wait_to_sample" in span:
            # gated at the context: its scripts ran in its turn (beside its profiler's start-up, when the turn
            # came first), then it waited for the profiler and for its turn to sample
            assert span["wait_to_time"][1] <= span["scripts"][0] <= span["scripts"][1] <= span["wait_to_sample"][0]
            assert span["profiler_init"][1] <= span["wait_to_sample"][1], span


def test_forked_processes_gated_at_their_imports_use_the_gpu_only_in_their_own_turn(tmp_path):
    """``--processes forked --ahead 1 --prepare-ahead imports``: each replay a child of the one server,
    its CUDA context made in its own turn, then its compile and its samples (whose window starts the
    profiler), as in the reference; no other replay process holds a context on the GPU while it samples."""
    import sys

    from fusiondiff import roundtrip as rt

    options = RecordingOptions(protocol=TimingProtocol(warmup=3, samples=10))
    result = rt.roundtrip(
        LIVE, tmp_path / "rt", devices=[None], options=options, ahead=1, prepare="imports", forked=True
    )
    assert result.forked and result.started_ahead and not result.interrupted and result.not_replayed == {}
    merged = load_capture(tmp_path / "rt" / "replay.json")
    assert len(merged.fusions) == 12 and all(f.failure is None and f.kernels for f in merged.fusions)
    docs = [json.loads(p.read_text()) for p in sorted((tmp_path / "rt" / "logs").glob("*.phases.json"))]
    assert len(docs) == 12 and all(d["seconds"]["imports"] < 0.5 for d in docs), [d["seconds"] for d in docs]
    on_gpu = [(i, p["start"], p["end"]) for i, d in enumerate(docs) for p in d["phases"] if p["name"] in ON_THE_GPU]
    for i, start, end in on_gpu:  # one process's GPU work never overlaps another's
        assert not [j for j, s, e in on_gpu if j != i and s < end and start < e], (i, start, end)
    for d in docs:
        span = {p["name"]: (p["start"], p["end"]) for p in d["phases"]}
        # no profiler window before the samples: CUPTI comes up after the compile, as in the reference
        assert "profiler_init" not in span and span["scripts"][1] <= span["samples"][0], span
    torch = sys.modules.get("torch")
    pytest_holds_a_context = torch is not None and torch.cuda.is_initialized()
    for f in merged.fusions:  # neither the server nor the next replay held a context beside it
        device = f.conditions.device if f.conditions else None
        assert device is not None and device.other_process_count == 0, (f.name, device)
        if not pytest_holds_a_context and device.processes_listed is not None:
            assert device.processes_listed == 1, (f.name, device)


def test_handover_starts_each_turn_as_the_one_before_has_sampled_and_samples_alone(tmp_path):
    """``--prepare-ahead handover`` (forked, one ahead): each turn's CUDA context begins after the
    previous process's samples and before that process has gone (its capture written), and its
    samples come after; NVML lists no other process with a context while a replay samples."""
    import sys

    from fusiondiff import roundtrip as rt

    options = RecordingOptions(protocol=TimingProtocol(warmup=3, samples=10))
    result = rt.roundtrip(
        LIVE, tmp_path / "rt", devices=[None], options=options, ahead=1, prepare="handover", forked=True
    )
    assert result.forked and result.prepared_ahead == "handover" and result.not_replayed == {}
    merged = load_capture(tmp_path / "rt" / "replay.json")
    assert len(merged.fusions) == 12 and all(f.failure is None and f.kernels for f in merged.fusions)
    docs = sorted(
        (json.loads(p.read_text()) for p in (tmp_path / "rt" / "logs").glob("*.phases.json")),
        key=lambda d: d["ended_at"],
    )
    assert len(docs) == 12
    gaps = []
    for before, after in zip(docs, docs[1:]):
        was = {p["name"]: (p["start"], p["end"]) for p in before["phases"]}
        now = {p["name"]: (p["start"], p["end"]) for p in after["phases"]}
        assert was["samples"][1] <= now["cuda_context"][0], (was, now)
        assert before["ended_at"] <= now["samples"][0], (before["ended_at"], now)
        gaps.append(now["cuda_context"][0] - before["ended_at"])
    # a turn no longer waits for the exit before it (0.13-0.15 s in the default: fifth round of #28)
    assert sorted(gaps)[len(gaps) // 2] < 0.06, gaps
    torch = sys.modules.get("torch")
    pytest_holds_a_context = torch is not None and torch.cuda.is_initialized()
    for f in merged.fusions:
        device = f.conditions.device if f.conditions else None
        assert device is not None and device.other_process_count == 0, (f.name, device)
        if not pytest_holds_a_context and device.processes_listed is not None:
            assert device.processes_listed == 1, (f.name, device)


def test_the_reference_mode_starts_each_process_in_its_turn(tmp_path):
    from fusiondiff import roundtrip as rt

    options = RecordingOptions(protocol=TimingProtocol(warmup=3, samples=10))
    result = rt.roundtrip(LIVE, tmp_path / "rt", devices=[None], options=options, prestart=False)
    assert not result.interrupted and result.not_replayed == {} and not result.started_ahead
    logs = sorted((tmp_path / "rt" / "logs").glob("*.log"))
    assert logs and not [log.name for log in logs if "waiting for its turn" in log.read_text()]
    phases = [json.loads(p.read_text()) for p in sorted((tmp_path / "rt" / "logs").glob("*.phases.json"))]
    assert len(phases) == len(logs) and all("wait_to_time" not in d["seconds"] for d in phases)
