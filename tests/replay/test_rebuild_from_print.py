"""The rules that make nvFuser's printed definition rebuild the recorded fusion, checked on the
definitions of three litgpt training steps recorded on the H200 (tests/data/rebuild/probe.json:
each print, the IR's exact constants, and whether the rebuilt print compiled the live CUDA source).

Each rule must fire exactly on the fusions whose rebuilt print compiled other CUDA source, for the
reason the source diff shows, and leave every other definition untouched."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from fusiondiff.replay.rebuild import faithful_definition, index_literals, restore_constants

PROBE = json.loads((Path(__file__).parent.parent / "data" / "rebuild" / "probe.json").read_text())["fusions"]
_CONSTANT = re.compile(r"\((?P<value>[^()]*)\)$")


def _exact(fusion: dict) -> list[str]:
    return [_CONSTANT.search(c)["value"] for c in fusion["consts_math"]]


def _changed_lines(fusion: dict) -> list[str]:
    diff = fusion.get("cuda_diff_raw") or []
    return [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def _ids(fusion: dict) -> str:
    return f"{fusion['model']}-{fusion['n']}"


@pytest.mark.parametrize("fusion", PROBE, ids=_ids)
def test_each_change_matches_what_the_cuda_source_showed(fusion):
    rebuilt = faithful_definition(fusion["text"], _exact(fusion))
    ast.parse(rebuilt.text)
    changed = _changed_lines(fusion)
    index_casts = any("__to_index" in line for line in changed)
    int_suffix = any(re.search(r"__to_double\(\d+LL\)", line) for line in changed if line.startswith("+"))
    rounded = any(re.search(r"e[+-]\d\d", line) for line in changed if "__to_" not in line and "for(" not in line)
    if fusion["cuda_equal_raw"]:
        assert rebuilt.text == fusion["text"], "a definition that rebuilt faithfully must not change"
    else:
        assert index_casts or int_suffix or rounded
        assert (rebuilt.index_literals > 0) == (index_casts or int_suffix)
        if fusion.get("restored_pairs"):
            assert rebuilt.restored == tuple(map(tuple, fusion["restored_pairs"]))


def test_probe_covers_every_rule():
    changed = [f for f in PROBE if not f["cuda_equal_raw"]]
    assert len(PROBE) == 48 and len(changed) == 20
    assert any("__to_index" in line for f in changed for line in _changed_lines(f))
    assert any("__to_double(2048LL)" in line for f in changed for line in _changed_lines(f))
    assert any(f.get("cuda_equal_restored") for f in changed)


def test_pad_width_scalars_and_their_operands_become_index():
    text = (
        "def nvfuser_fusion(fd : FusionDefinition) -> None :\n"
        "    tv0 = fd.define_tensor(shape=[4, 64], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)\n"
        "    c1 = fd.ops.add(0, 4096)\n"
        "    c2 = fd.ops.add(c1, 1024)\n"
        "    tv1 = fd.ops.pad(tv0, pad_widths=[c2, 0, 0, 0], value=0.0)\n"
        "    c3 = fd.ops.add(7, 8)\n"
        "    fd.add_output(tv1)\n"
    )
    out, count = index_literals(text)
    assert count == 3
    assert (
        "c1 = fd.ops.add(fd.define_scalar(0, dtype=DataType.Index), fd.define_scalar(4096, dtype=DataType.Index))"
        in out
    )
    assert "c2 = fd.ops.add(c1, fd.define_scalar(1024, dtype=DataType.Index))" in out
    assert "c3 = fd.ops.add(7, 8)" in out  # not a pad width: left as Int
    assert "pad_widths=[c2, 0, 0, 0]" in out


def test_only_casts_of_extents_become_index():
    text = (
        "def nvfuser_fusion(fd : FusionDefinition) -> None :\n"
        "    tv0 = fd.define_tensor(shape=[2, 2048], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)\n"
        "    c1 = fd.ops.cast(2048, dtype=DataType.Double)\n"
        "    c2 = fd.ops.cast(0, dtype=DataType.Double)\n"
        "    c3 = fd.ops.cast(4096, dtype=DataType.Double)\n"
    )
    out, count = index_literals(text)
    assert count == 1
    assert "c1 = fd.ops.cast(fd.define_scalar(2048, dtype=DataType.Index), dtype=DataType.Double)" in out
    assert "c2 = fd.ops.cast(0, dtype=DataType.Double)" in out
    assert "c3 = fd.ops.cast(4096, dtype=DataType.Double)" in out


def test_constants_from_the_ir_restore_gelu_and_mean_scales():
    text = "    tv1 = fd.ops.mul(0.000488281, tv0)\n    c1 = fd.ops.reciprocal(1.41421)\n"
    out, restored, ambiguous = restore_constants(text, ["0.00048828125", "1.4142135623730951", "0.5"])
    assert "fd.ops.mul(0.00048828125, tv0)" in out and "reciprocal(1.4142135623730951)" in out
    assert dict(restored) == {"0.000488281": "0.00048828125", "1.41421": "1.4142135623730951"} and not ambiguous
