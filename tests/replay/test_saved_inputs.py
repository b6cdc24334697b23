"""What a capture's saved inputs can give a repro script, read before the script relies on them
(``fusiondiff.replay.saved_inputs``), and ``repro -o x.py`` of several fusions (issue #24, the cases
once left ambiguous). The records are the hand-built ones of ``tests/replay/test_repro_scripts.py``; the
safetensors files are SYNTHETIC headers (``synthetic.write_saved_inputs``)."""

from __future__ import annotations

import struct
from dataclasses import replace

import pytest

from fusiondiff.io.store import save_capture, tensors_path_for
from fusiondiff.records.errors import FusionDiffError
from fusiondiff.replay.repro import write_repros

from replay.test_repro_scripts import INPUTS, make_capture, make_fusion
from synthetic import write_saved_inputs

SAVED = {"nvFusion0.input1": 4096 * 2, "nvFusion0.input2": 4096 * 8}
"""The byte sizes of the keyed inputs of INPUTS."""


@pytest.mark.parametrize(
    ("content", "note"),
    [
        (b"", "live.tensors.safetensors is not a safetensors file (shorter than a safetensors header)"),
        (struct.pack("<Q", 10**12) + b"{}", "is not a safetensors file (its header claims 1000000000000 bytes)"),
        (struct.pack("<Q", 4) + b"nope", "is not a safetensors file (its header is not JSON)"),
    ],
)
def test_a_damaged_saved_inputs_file_is_said_and_the_inputs_synthesized(tmp_path, content, note):
    capture_path = save_capture(
        make_capture(make_fusion(), tensors_file="live.tensors.safetensors"), tmp_path / "live.json"
    )
    tensors_path_for(capture_path).write_bytes(content)
    notes: list[str] = []
    source = write_repros(capture_path, tmp_path / "repro.py", on_note=notes.append)[0].read_text()
    assert len(notes) == 1 and note in notes[0] and note in source
    assert "safetensors.torch" not in source and "exact_storage" not in source


def test_an_input_the_saved_file_lacks_or_cannot_hold_is_synthesized_with_a_note(tmp_path):
    capture_path = save_capture(
        make_capture(make_fusion(), tensors_file="live.tensors.safetensors"), tmp_path / "live.json"
    )
    write_saved_inputs(tensors_path_for(capture_path), {"nvFusion0.input2": 100})
    notes: list[str] = []
    source = write_repros(capture_path, tmp_path / "repro.py", on_note=notes.append)[0].read_text()
    assert [n.split(" ", 1)[1] for n in notes] == [
        "input 1: live.tensors.safetensors has no tensor 'nvFusion0.input1': it is synthesized",
        "input 2: the saved tensor 'nvFusion0.input2' holds 100 bytes, its view reaches 32768: it is synthesized",
    ]
    assert "exact_storage" not in source and source.count("synthesize_storage(") == 4  # 3 inputs + its def


def test_a_saved_file_that_no_input_names_is_said(tmp_path):
    keyless = tuple(replace(m, tensor_key=None) for m in INPUTS)
    capture_path = save_capture(make_capture(make_fusion(inputs=keyless)), tmp_path / "live.json")
    write_saved_inputs(tensors_path_for(capture_path), SAVED)
    notes: list[str] = []
    write_repros(capture_path, tmp_path / "repro.py", on_note=notes.append)
    assert notes == [
        "live.tensors.safetensors is beside the capture, but no input of the fusions written names a tensor saved "
        "in it: the inputs are synthesized"
    ]


def test_a_script_name_for_several_fusions_is_refused(tmp_path):
    capture_path = save_capture(make_capture(make_fusion(), make_fusion(name="nvFusion1")), tmp_path / "live.json")
    # the two records are one distinct fusion: one script by default (issue #41), two for every record
    with pytest.raises(FusionDiffError, match=r"x\.py names a script but .* has 2 fusions: give a directory"):
        write_repros(capture_path, tmp_path / "x.py", every_record=True)
    assert not (tmp_path / "x.py").exists()
    (tmp_path / "y.py").mkdir()  # a directory the user made, whatever its name
    assert len(write_repros(capture_path, tmp_path / "y.py", every_record=True)) == 2
    assert len(write_repros(capture_path, tmp_path / "y.py")) == 1
