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
        # printed as Thunder's in-place lowering prints it: the output aliases the input
        return (
            "def nvfuser_fusion(fd : FusionDefinition) -> None :\n"
            "    tv0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int, is_cpu=False)\n"
            "    tv1 = fd.ops.add(tv0, 1)\n"
            "    fd.add_output(tv1, tv0)\n"
        )

    def repro_script_for(self, inputs) -> str:
        return "# repro\n"


@pytest.fixture
def install(monkeypatch):
    """Installs a deferred-timing recorder over a stand-in ``nvfuser_direct`` built on a fusion class."""
    from fusiondiff.recording import recorder as recorder_module
    from fusiondiff.records.options import RecordingOptions

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
    # the graph hash the recorder computed is written with the record: the differ matches on it
    from fusiondiff.records.definition import GRAPH_HASH_TAG, structural_hash

    assert pending.record.graph_hash == GRAPH_HASH_TAG + structural_hash(str(fd))


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


def test_no_memory_for_the_input_copies_keeps_the_record_untimed(install, monkeypatch):
    from fusiondiff.recording import inputs as input_tools
    from fusiondiff.recording.executions import OUT_OF_MEMORY

    def no_memory(value):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB.")

    monkeypatch.setattr(input_tools, "faithful_copy", no_memory)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    recorder = install(InPlaceFusion)
    x = torch.zeros(3, dtype=torch.int64)
    (out,) = InPlaceFusion().execute([x])
    assert torch.all(x == 1) and torch.all(out == 2), "the session's execution still runs"
    assert recorder.errors == [] and recorder.out_of_memory == 1
    capture = recorder.finish()
    (fusion,) = capture.fusions
    assert fusion.timing.count == 0 and OUT_OF_MEMORY in fusion.warnings
    assert fusion.inputs[0].shape == (3,)
    assert "1 fusion(s) not timed: the GPU ran out of memory" in capture.warnings


def test_no_memory_while_timing_keeps_the_record_untimed(install, monkeypatch):
    from fusiondiff.recording import recorder as recorder_module

    def no_memory(self, pending, copies):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 120.00 MiB.")

    monkeypatch.setattr(recorder_module.Recorder, "_time", no_memory)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    recorder = install(InPlaceFusion)
    InPlaceFusion().execute([torch.zeros(3, dtype=torch.int64)])
    capture = recorder.finish()  # deferred: timed here, out of memory here
    assert capture.fusions[0].timing.count == 0
    assert recorder.out_of_memory == 1 and recorder.errors == []


def test_exception_line_is_the_first_line_cut_short():
    from fusiondiff.records.errors import exception_line

    assert exception_line(RuntimeError("first\nsecond")) == "first"
    assert exception_line(RuntimeError("x" * 400), limit=10) == "xxxxxxx..."
    assert exception_line(RuntimeError("")) == ""


class PureFusion(InPlaceFusion):
    """Returns twice its input and writes nothing: its inputs are copied after it ran."""

    def execute(self, inputs, **kwargs):
        self.free_while_running = self.memory_free()
        return [inputs[0] * 2]

    def __str__(self) -> str:
        return (
            "def nvfuser_fusion(fd : FusionDefinition) -> None :\n"
            "    tv0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int, is_cpu=False)\n"
            "    tv1 = fd.ops.mul(tv0, 2)\n"
            "    fd.add_output(tv1)\n"
        )


def test_inputs_of_a_fusion_that_writes_nothing_are_copied_after_it_ran(install, monkeypatch):
    from fusiondiff.recording import inputs as input_tools

    copied = []
    real_copy = input_tools.faithful_copy
    monkeypatch.setattr(input_tools, "faithful_copy", lambda v: copied.append(v) or real_copy(v))
    recorder = install(PureFusion)
    fd = PureFusion()
    fd.memory_free = lambda: list(copied)  # what fusiondiff had copied when the fusion ran
    fd.execute([torch.arange(3)])
    assert fd.free_while_running == [], "no copy was taken while the session's execution ran"
    assert len(copied) == 1 and recorder.fusion_count == 1
    assert torch.equal(recorder._pending[recorder._order[0]].copies[0], torch.arange(3))


def test_aliased_output_is_detected_in_the_printed_definition():
    from fusiondiff.recording.executions import writes_into_inputs

    assert writes_into_inputs(str(InPlaceFusion()))
    assert not writes_into_inputs(str(PureFusion()))
    assert writes_into_inputs("def f(fd):\n    fd.add_output(tv1, alias_input=tv0)\n")


class UnprintableFusion(InPlaceFusion):
    """Runs, but nvFuser's printer fails on it (as on an output laid out by the stride_order op)."""

    def execute(self, inputs, **kwargs):
        return [inputs[0] * 2]

    def __str__(self) -> str:
        raise RuntimeError(
            "Expected !is_complex_allocation . Encountered non-trivial allocation\nframe #0: nvfCheckFail"
        )


def test_fusion_nvfuser_cannot_print_is_recorded_with_a_note(install):
    recorder = install(UnprintableFusion)
    (out,) = UnprintableFusion().execute([torch.arange(3)])
    assert torch.equal(out, torch.arange(3) * 2)
    assert recorder.errors == [] and recorder.fusion_count == 1
    record = recorder._pending[recorder._order[0]].record
    note = "nvFuser could not print this definition: RuntimeError: Expected !is_complex_allocation . Encountered non-trivial allocation"
    assert record.definition == f"# {note}\n"
    assert note in record.warnings


def test_after_a_stop_request_executions_run_untouched_and_unrecorded(install):
    from fusiondiff.records import termination

    recorder = install(PureFusion)
    fd = PureFusion()
    fd.memory_free = lambda: None
    termination.requested.set()
    try:
        (out,) = fd.execute([torch.arange(3)])
    finally:
        termination.requested.clear()
    assert torch.equal(out, torch.arange(3) * 2)
    assert recorder.fusion_count == 0 and recorder.errors == []
