"""The recorder describes and copies a new execution's inputs before it runs (needs torch, not a GPU).

A stand-in ``nvfuser_direct`` whose fusion writes into its input, like Thunder's lowering of an
in-place op (``fd.add_output(out, alias_input=x)``), shows what the record keeps.
"""

from __future__ import annotations

import sys
import types

import pytest

torch = pytest.importorskip("torch")


class InPlaceFusion:
    """Adds 1 to its first input in place and returns twice the result."""

    def execute(self, inputs, **kwargs):
        inputs[0].add_(1)
        return [inputs[0] * 2]

    def __str__(self) -> str:
        return "def nvfuser_fusion(fd : FusionDefinition) -> None :\n    pass\n"

    def repro_script_for(self, inputs) -> str:
        return "# repro\n"


@pytest.fixture
def install(monkeypatch):
    """Installs a deferred-timing recorder over a stand-in ``nvfuser_direct`` built on a fusion class."""
    from fusiondiff.options import RecordingOptions
    from fusiondiff.recording import recorder as recorder_module

    installed = []

    def _install(fusion_class):
        fake = types.ModuleType("nvfuser_direct")
        fake.FusionDefinition = fusion_class
        monkeypatch.setitem(sys.modules, "nvfuser_direct", fake)
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
        monkeypatch.setattr(recorder_module, "collect_environment", lambda: None)
        rec = recorder_module.Recorder("live", RecordingOptions(save_inputs=True), timing="deferred")
        rec.install()
        installed.append(rec)
        return rec

    yield _install
    for rec in installed:
        rec.uninstall()


def test_in_place_fusion_is_recorded_with_the_values_it_read(install):
    recorder = install(InPlaceFusion)
    fd = InPlaceFusion()
    x = torch.zeros(4, 4, dtype=torch.int64)
    for _ in range(3):
        fd.execute([x])
    assert recorder.errors == []
    assert torch.all(x == 3), "the session's own executions run unchanged"
    pending = recorder._pending[recorder._order[0]]
    assert pending.calls == 3
    meta = pending.record.inputs[0]
    assert (meta.min_value, meta.max_value) == (0, 0)
    assert torch.all(pending.copies[0] == 0)
    assert torch.all(recorder.tensors[meta.tensor_key] == 0)


class FailingFusion(InPlaceFusion):
    def execute(self, inputs, **kwargs):
        raise RuntimeError("nvFuser error")


def test_failed_execution_is_recorded_with_its_inputs_and_failure(install):
    recorder = install(FailingFusion)
    with pytest.raises(RuntimeError, match="nvFuser error"):
        FailingFusion().execute([torch.arange(-3, 4)])
    assert recorder.fusion_count == 1 and recorder.errors == []
    record = recorder._pending[recorder._order[0]].record
    assert record.failure is not None and record.failure.kind == "exception"
    assert record.failure.message == "RuntimeError: nvFuser error"
    assert (record.inputs[0].min_value, record.inputs[0].max_value) == (-3, 3)
    assert recorder.context_lost is None


class SometimesFailingFusion(InPlaceFusion):
    """Its instances fail with ``error`` when one is set."""

    error: str | None = None

    def execute(self, inputs, **kwargs):
        if self.error:
            raise RuntimeError(self.error)
        return super().execute(inputs, **kwargs)


def test_illegal_address_stops_all_timing(install):
    recorder = install(SometimesFailingFusion)
    SometimesFailingFusion().execute([torch.zeros(2, dtype=torch.int64)])
    crashing = SometimesFailingFusion()
    crashing.error = "CUDA error: an illegal memory access was encountered\n  C++ stack:\n #0 nvfuser::..."
    with pytest.raises(RuntimeError):
        crashing.execute([torch.zeros(3)])
    assert recorder.context_lost and "illegal memory access" in recorder.context_lost
    failure = recorder._pending[recorder._order[1]].record.failure
    assert failure.kind == "illegal_address"
    assert failure.message == "RuntimeError: CUDA error: an illegal memory access was encountered"
    capture = recorder.finish()  # the first fusion is not timed: the context is gone
    assert [f.failure is None for f in capture.fusions] == [True, False]
    assert capture.fusions[0].timing.count == 0
    assert any("not timed" in w for w in capture.fusions[0].warnings)


def test_recording_failure_is_kept_and_the_execution_still_runs(install, monkeypatch):
    from fusiondiff.recording import inputs as input_tools

    def broken(inputs):
        raise ValueError("cannot describe")

    monkeypatch.setattr(input_tools, "describe_inputs", broken)
    recorder = install(InPlaceFusion)
    x = torch.zeros(3, dtype=torch.int64)
    (out,) = InPlaceFusion().execute([x])
    assert torch.all(x == 1) and torch.all(out == 2)
    assert recorder.fusion_count == 0
    assert [str(e) for e in recorder.errors] == ["recording failed: ValueError: cannot describe"]
