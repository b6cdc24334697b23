"""``fusiondiff roundtrip`` on the GPU: a live capture recorded on the H200 (llama3's step, 26
records of 12 distinct fusions) replayed for real, a fresh process per fusion, each next process
started while the one before it runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusiondiff.model import TimingProtocol
from fusiondiff.options import RecordingOptions
from fusiondiff.store import load_capture

pytestmark = pytest.mark.gpu

LIVE = Path(__file__).parent.parent / "data" / "fidelity" / "llama3" / "live.json"
PREPARED = "waiting for its turn"


def test_every_distinct_fusion_is_replayed_in_its_own_process_each_prepared_during_the_one_before(tmp_path):
    from fusiondiff import roundtrip as rt

    options = RecordingOptions(protocol=TimingProtocol(warmup=3, samples=10))
    result = rt.roundtrip(LIVE, tmp_path / "rt", devices=[None], options=options)
    assert not result.interrupted and result.not_replayed == {}
    distinct = len(rt.distinct_fusions(load_capture(LIVE)))
    assert len(result.distinct) == distinct == 12 and result.replayed_now == distinct and result.started_ahead
    assert len(result.processes) == distinct and all(p.scripts == 1 for p in result.processes)
    assert {r.verdict for r in result.rows} <= {"SAME", "FASTER", "SLOWER", "AMBIGUOUS"}, result.rows
    merged = load_capture(tmp_path / "rt" / "replay.json")
    assert len(merged.fusions) == distinct and all(f.failure is None and f.kernels for f in merged.fusions)
    logs = sorted((tmp_path / "rt" / "logs").glob("*.log"))
    prepared = [log.name for log in logs if PREPARED in log.read_text()]
    # the first replay started in its turn; each later one was started ahead, while one ran
    assert len(logs) == distinct and len(prepared) == distinct - 1, prepared
