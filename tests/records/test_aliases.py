"""Outputs no kernel writes: a view of another output or of an input is not counted as a write, on
the recorded H100 capture whose fusion returns tensors with their transposes, and on definitions
built here for the cases it lacks (said so at each)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fusiondiff.io.store import load_capture
from fusiondiff.records.aliases import aliased_outputs, views_of
from fusiondiff.records.traffic import fusion_bytes, fusion_traffic, peak_gbs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import synthetic as syn  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "data"

HEADER = "def nvfuser_fusion(fd : FusionDefinition) -> None :\n"
INPUT = (
    "    tv0 = fd.define_tensor(shape=[512, 3072], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)\n"
)
TRANSPOSED = (
    HEADER
    + INPUT
    + "    tv1 = fd.ops.neg(tv0)\n"
    + "    tv2 = fd.ops.permute(tv1, dims=[1, 0])\n"
    + "    fd.add_output(tv1)\n"
    + "    fd.add_output(tv2)\n"
)
"""Built here: a fusion that returns a tensor and its transpose, as nvFusion6 [backward] does."""


def _outputs(second_stride: tuple[int, int]) -> tuple:
    """Built here: the two outputs' layouts, the second's strides as given."""
    return (syn.tensor(0, (512, 3072)), syn.tensor(1, (3072, 512), stride=second_stride))


def test_a_transpose_of_another_output_is_not_a_write_and_the_row_says_why():
    record = syn.fusion(definition=TRANSPOSED, inputs=(syn.tensor(0, (512, 3072)),), outputs=_outputs((1, 3072)))
    figure = fusion_bytes(record)
    assert figure is not None
    assert figure.read == figure.written == 512 * 3072 * 2  # the input read, output 0 written, output 1 not
    assert "output 1 is a permute of output 0 (the same memory): not counted as a write" in figure.notes
    (row,) = fusion_traffic(record, 3000.0)
    assert row.bytes == 2 * 512 * 3072 * 2 and row.notes == figure.notes


def test_a_transposed_copy_written_dense_is_a_write():
    """Its strides are no permutation of output 0's: nvFuser wrote a copy, and the copy counts."""
    record = syn.fusion(definition=TRANSPOSED, inputs=(syn.tensor(0, (512, 3072)),), outputs=_outputs((512, 1)))
    figure = fusion_bytes(record)
    assert figure is not None and figure.written == 2 * 512 * 3072 * 2
    assert not any("not counted as a write" in note for note in figure.notes)


def test_a_reshape_of_an_input_is_not_a_write():
    definition = HEADER + INPUT + "    tv1 = fd.ops.reshape(tv0, new_shape=[2, 256, 3072])\n    fd.add_output(tv1)\n"
    (view,) = views_of(definition)
    assert (view.output, view.source, view.position, view.ops) == (0, "input", 0, ("reshape",))
    record = syn.fusion(
        definition=definition, inputs=(syn.tensor(0, (512, 3072)),), outputs=(syn.tensor(0, (2, 256, 3072)),)
    )
    assert aliased_outputs(record.definition, record.outputs, record.inputs) == {
        0: "output 0 is a reshape of input 0 (the same memory): not counted as a write"
    }
    figure = fusion_bytes(record)
    assert figure is not None and figure.written == 0


def test_a_definition_whose_outputs_are_computed_has_no_view_and_is_not_parsed():
    assert views_of(syn.RMSNORM_DEFINITION) == ()
    assert views_of(TRANSPOSED.replace("fd.ops.permute(tv1, dims=[1, 0])", "fd.ops.exp(tv1)")) == ()


def test_the_h100_backward_fusion_that_returns_two_transposes_is_near_69_percent_of_the_peak():
    """Recorded on the H100: nvFusion6 [backward] returns tv26, tv28 = permute(tv26), tv25 and
    tv27 = permute(tv25); counted with its transposes as writes it read 97.2 % of the peak."""
    capture = load_capture(DATA / "h100" / "train_qwen3" / "live.json")
    record = next(f for f in capture.fusions if f.name == "nvFusion6" and f.trace == "backward")
    (row,) = fusion_traffic(record, peak_gbs(capture.environment))
    assert row.percent_of_peak == pytest.approx(69.4, abs=0.1)
    assert sum(1 for note in row.notes if "not counted as a write" in note) == 2
