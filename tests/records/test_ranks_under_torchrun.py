"""Under torchrun every rank writes its own capture and records its place (CPU: the launcher's
environment variables are set with monkeypatch, no process group is started)."""

from __future__ import annotations

import dataclasses
import types
from pathlib import Path

import pytest

from fusiondiff.io.store import load_capture, write_capture
from fusiondiff.records.distributed import RankInfo, process_group_backend, rank_from_env, rank_of_path, rank_path
from fusiondiff.records.environment import Environment

DATA = Path(__file__).parent.parent / "data"
PYTHIA = DATA / "fidelity" / "pythia" / "live.json"


@pytest.fixture
def torchrun(monkeypatch):
    """Sets the variables torchrun gives one rank."""

    def _set(rank: int, world: int, local: int | None = None) -> None:
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", str(world))
        monkeypatch.setenv("LOCAL_RANK", str(rank if local is None else local))

    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    return _set


def test_rank_read_from_torchrun_variables(torchrun):
    assert rank_from_env() is None
    torchrun(3, 4, local=1)
    assert rank_from_env() == RankInfo(rank=3, local_rank=1, world_size=4)


@pytest.mark.parametrize(
    "environ",
    [
        {"RANK": "0", "WORLD_SIZE": "1"},
        {"RANK": "0"},
        {"RANK": "x", "WORLD_SIZE": "2"},
        {"RANK": "2", "WORLD_SIZE": "2"},
    ],
)
def test_no_rank_for_a_world_of_one_or_unusable_variables(environ):
    assert rank_from_env(environ) is None


def test_rank_file_names():
    assert rank_path("out/live.json", 1) == Path("out/live.rank1.json")
    assert rank_path("live", 0) == Path("live.rank0.json")
    assert rank_of_path("out/live.rank12.json") == 12
    assert rank_of_path("live.json") is None


def test_each_rank_writes_its_own_file_and_its_tensors_follow(torchrun, tmp_path):
    torch = pytest.importorskip("torch")
    from fusiondiff.front.live import output_path

    capture = load_capture(PYTHIA)
    key = capture.fusions[0].inputs[0].tensor_key or "t0"
    written = []
    for rank in (0, 1):
        torchrun(rank, 2)
        path = output_path(tmp_path / "live.json")
        written.append(path)
        write_capture(capture, path, {key: torch.full((2,), float(rank))})
    assert [p.name for p in written] == ["live.rank0.json", "live.rank1.json"]
    assert not (tmp_path / "live.json").exists()
    assert {p.name for p in tmp_path.iterdir()} == {
        "live.rank0.json",
        "live.rank1.json",
        "live.rank0.tensors.safetensors",
        "live.rank1.tensors.safetensors",
    }
    assert load_capture(written[1]).tensors_file == "live.rank1.tensors.safetensors"


def test_single_process_output_path_is_unchanged(torchrun, tmp_path):
    pytest.importorskip("torch")
    from fusiondiff.front.live import output_path

    assert output_path(tmp_path / "live.json") == tmp_path / "live.json"


def test_environment_records_the_rank_and_old_files_load_without_it(torchrun, tmp_path):
    pytest.importorskip("torch")
    from fusiondiff.recording.environment import rank_fields

    assert rank_fields() == {}
    torchrun(1, 2)
    fields = rank_fields()
    # no process group was initialised in this process: the backend is unknown, never started
    assert fields == {"rank": 1, "local_rank": 1, "world_size": 2, "distributed_backend": None}
    old = load_capture(PYTHIA)
    assert (old.environment.rank, old.environment.world_size, old.environment.cuda_device_index) == (None, None, None)
    environment = dataclasses.replace(old.environment, cuda_device_index=1, **fields)  # type: ignore[arg-type]
    path = write_capture(dataclasses.replace(old, environment=environment, tensors_file=None), tmp_path / "r1.json")
    loaded = load_capture(tmp_path / "r1.json").environment
    assert (loaded.rank, loaded.local_rank, loaded.world_size, loaded.cuda_device_index) == (1, 1, 2, 1)
    assert path.environment == loaded


def test_backend_read_only_when_torch_distributed_is_initialised(monkeypatch):
    torch = pytest.importorskip("torch")
    assert process_group_backend() is None  # not initialised: nothing is started to find out
    monkeypatch.setattr(torch.distributed, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.distributed, "get_backend", lambda: "nccl")
    assert process_group_backend() == "nccl"


def test_fusion_device_comes_from_its_inputs():
    torch = pytest.importorskip("torch")
    from fusiondiff.recording.executions import device_index

    on_cuda1 = types.SimpleNamespace(device=torch.device("cuda", 1))
    scalar = 3
    # Thunder may pass device=0 (or nothing) while rank 1's tensors live on cuda:1
    assert device_index(0, [scalar, on_cuda1]) == 1
    assert device_index(None, [on_cuda1]) == 1
    assert device_index(torch.device("cuda", 2), [scalar]) == 2


def test_rank_fields_are_not_environment_differences():
    from fusiondiff.diff.compare import compare_captures

    capture = load_capture(PYTHIA)
    ranked = [
        dataclasses.replace(
            capture,
            environment=dataclasses.replace(
                capture.environment,
                rank=r,
                local_rank=r,
                world_size=2,
                cuda_device_index=r,
                distributed_backend="nccl" if r else "gloo",
            ),
        )
        for r in (0, 1)
    ]
    assert compare_captures(*ranked) == ()
    assert Environment().rank is None


def test_environment_is_read_again_for_the_device_the_rank_chose(torchrun):
    """A torchrun script calls ``torch.cuda.set_device(LOCAL_RANK)`` and starts its process group
    after ``fusiondiff capture`` began recording: the capture describes the rank's GPU and backend."""
    from fusiondiff.recording.environment import settled_environment

    read_for = []

    def read_environment(device_index):
        read_for.append(device_index)
        return Environment(cuda_device_index=device_index, rank=1, local_rank=1, world_size=2)

    at_install = Environment(
        cuda_device_index=0, rank=1, local_rank=1, world_size=2, recorded_at="2026-11-30T15:00:00+00:00"
    )
    fusions = [dataclasses.replace(f, device_index=1) for f in load_capture(PYTHIA).fusions]
    settled = settled_environment(at_install, fusions, read=read_environment, backend=lambda: "nccl")
    assert read_for == [1]
    assert (settled.cuda_device_index, settled.distributed_backend) == (1, "nccl")
    assert settled.recorded_at == "2026-11-30T15:00:00+00:00"
    # fusions on the device read at install: nothing read again but the backend
    again = dataclasses.replace(settled, distributed_backend=None)
    assert (
        settled_environment(again, fusions, read=read_environment, backend=lambda: "nccl").distributed_backend == "nccl"
    )
    assert read_for == [1]
    assert settled_environment(None, fusions) == Environment()
    assert read_for == [1]


@pytest.mark.parametrize(
    ("kind", "source", "timer", "said"),
    [
        ("live", "session", "kineto", "nvFuser's PythonProfiler cannot run in it afterwards"),
        ("live", "session", "nvfuser", "torch.profiler sees no kernel events in it afterwards"),
        ("live", "train.py --steps 1", "kineto", None),
        ("replay", "session", "kineto", None),
    ],
)
def test_the_cupti_notice_is_said_only_to_a_session_that_goes_on(kind, source, timer, said):
    """Every replay of a round trip printed it once before; only ``with fusiondiff.capture():`` in the
    user's own process needs to know that CUPTI stays taken."""
    pytest.importorskip("torch")
    from fusiondiff.recording import recorder as recorder_module
    from fusiondiff.records.options import RecordingOptions

    recorder = recorder_module.Recorder(kind, RecordingOptions().with_timer(timer), source=source)
    assert recorder.session_notice() is None, "nothing to say before a profiler ran"
    recorder.sampler.used_profiler = True
    notice = recorder.session_notice()
    assert (notice is None) if said is None else (said in notice)
