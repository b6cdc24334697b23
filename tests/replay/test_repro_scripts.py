"""Repro scripts written from captures. The records here are built in test code (they describe
the seed's RMSNorm fusion but were not recorded); the scripts are compiled and read, and where
torch is installed their input section (the helpers copied from
:mod:`fusiondiff.recording.synthesis` and the calls to them) runs on CPU tensors. nvFuser itself
never runs here."""

from __future__ import annotations

import ast
from dataclasses import replace

import pytest

from fusiondiff.front.cli import main
from fusiondiff.io.store import save_capture, tensors_path_for
from fusiondiff.records.definition import definition_hash
from fusiondiff.records.environment import Environment
from fusiondiff.records.errors import FusionDiffError, ReplayError
from fusiondiff.records.model import (
    Capture,
    FusionRecord,
    Segment,
    Segmentation,
    TensorMeta,
    Timing,
    TimingProtocol,
)
from fusiondiff.replay.rebuild import restore_constants
from fusiondiff.replay.repro import (
    render_repro,
    select_fusions,
    write_repros,
)
from fusiondiff.replay.script_env import script_nvfuser_env

from synthetic import write_saved_inputs

DEFINITION = """\
def nvfuser_fusion(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[4, 1024, 4096], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.define_tensor(shape=[4, 1024], contiguity=[True, True], dtype=DataType.Int, is_cpu=False)
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.mul(T3, T3)
    T5 = fd.ops.sum(T4, dims=[2], keepdim=False, dtype=DataType.Null)
    S6 = fd.define_scalar(4096.00, dtype=DataType.Double)
    T7 = fd.ops.div(T5, S6)
    S8 = fd.define_scalar(1.00000e-05, dtype=DataType.Double)
    T9 = fd.ops.add(T7, S8)
    fd.add_output(T9)
"""

ENV = Environment(
    gpu_name="NVIDIA H200",
    compute_capability="9.0",
    driver_version="580.82.07",
    cuda_version="13.0",
    torch_version="2.11.0+cu130",
    nvfuser_version="0.2.36",
    thunder_version="0.2.6",
    nvfuser_env={"NVFUSER_DISABLE": "kernel_reuse", "NVFUSER_ENABLE": "id_model"},
    recorded_at="2026-03-01T12:00:00+00:00",
)

INPUTS = (
    # bf16 activations at storage offset 1: 2-byte aligned, the seed's slow case.
    TensorMeta(
        index=0,
        kind="tensor",
        dtype="torch.bfloat16",
        shape=(4, 1024, 4096),
        stride=(4194304, 4096, 1),
        storage_offset=1,
        storage_numel=16777217,
        device="cuda:0",
        alignment_bytes=2,
    ),
    TensorMeta(
        index=1,
        kind="tensor",
        dtype="torch.bfloat16",
        shape=(4096,),
        stride=(1,),
        storage_numel=4096,
        device="cuda:0",
        alignment_bytes=256,
        tensor_key="nvFusion0.input1",
    ),
    TensorMeta(
        index=2,
        kind="tensor",
        dtype="torch.int64",
        shape=(4, 1024),
        stride=(1024, 1),
        storage_numel=4096,
        device="cuda:0",
        alignment_bytes=256,
        min_value=0.0,
        max_value=254.0,
        tensor_key="nvFusion0.input2",
    ),
    TensorMeta(index=3, kind="scalar", dtype="float", scalar_value="9.999999747378752e-06"),
)


def make_fusion(**changes) -> FusionRecord:
    """A record built in test code, shaped like what the live capture writes."""
    fields = dict(
        name="nvFusion0",
        definition=DEFINITION,
        definition_hash=definition_hash(changes.get("definition", DEFINITION)),
        inputs=INPUTS,
        kernels=(),
        segmentation=Segmentation(segments=(Segment(group_id=0, scheduler="inner_persistent"),)),
        timing=Timing(samples_ns=(19400.0, 19500.0)),
        trace="forward",
        call_count=3,
        enable_options=("kernel_reuse",),
        disable_options=("parallel_compile",),
        exact_constants=("9.999999747378752e-06", "4096.0"),
    )
    fields.update(changes)
    return FusionRecord(**fields)


def make_capture(*fusions: FusionRecord, tensors_file: str | None = None) -> Capture:
    return Capture(
        kind="live",
        environment=ENV,
        protocol=TimingProtocol(),
        fusions=fusions,
        source="train.py",
        tensors_file=tensors_file,
    )


def module_body(source: str) -> list[ast.stmt]:
    return ast.parse(source).body


def test_script_compiles_and_has_the_header():
    source = render_repro(make_fusion(), ENV, capture_name="live.json")
    compile(source, "repro.py", "exec")
    header = source.split("\n\n", 1)[0]
    for fact in (
        "forward/nvFusion0/",
        "called 3 times",
        "fusiondiff",
        "live.json",
        "NVIDIA H200",
        "sm 9.0",
        "driver 580.82.07",
        "CUDA 13.0",
        "torch 2.11.0+cu130",
        "nvFuser 0.2.36",
        "Thunder 0.2.6",
        "2026-03-01T12:00:00+00:00",
        "repro_script_for drops",
    ):
        assert fact in header, fact
    assert all(line.startswith("#") for line in header.splitlines())


def test_nvfuser_variables_are_set_before_nvfuser_direct_is_imported():
    body = module_body(render_repro(make_fusion(), ENV))
    env_lines = [
        s.lineno for s in body if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]).startswith("os.environ[")
    ]
    import_line = next(s.lineno for s in body if isinstance(s, ast.ImportFrom) and s.module == "nvfuser_direct")
    assert len(env_lines) == 2
    assert max(env_lines) < import_line
    source = render_repro(make_fusion(), ENV)
    assert "os.environ['NVFUSER_DISABLE'] = 'kernel_reuse'" in source
    assert "os.environ['NVFUSER_ENABLE'] = 'id_model'" in source
    # No other module is needed than torch and nvfuser_direct (and the standard library).
    imported = {a.name for s in body if isinstance(s, ast.Import) for a in s.names}
    imported |= {s.module for s in body if isinstance(s, ast.ImportFrom)}
    assert imported == {"os", "sys", "pathlib", "torch", "nvfuser_direct"}


def test_a_runner_can_read_the_variables_without_running_the_script():
    source = render_repro(make_fusion(), ENV)
    assert script_nvfuser_env(source) == {"NVFUSER_DISABLE": "kernel_reuse", "NVFUSER_ENABLE": "id_model"}
    other = (
        "import os\nos.environ['PATH'] = 'x'\nos.environ[name] = 'y'\nif True:\n    os.environ['NVFUSER_DUMP'] = 'z'\n"
    )
    assert script_nvfuser_env(other) == {}
    with pytest.raises(ReplayError, match="s.py is not valid Python"):
        script_nvfuser_env("os.environ[", "s.py")


def test_definition_is_embedded_and_called():
    source = render_repro(make_fusion(), ENV)
    assert "def nvfuser_fusion(fd : FusionDefinition) -> None :" in source
    assert "with FusionDefinition() as fd:\n    nvfuser_fusion(fd)\n" in source
    legacy_name = make_fusion(definition=DEFINITION.replace("def nvfuser_fusion(", "def nvfuser_fusion_id0("))
    assert "    nvfuser_fusion_id0(fd)\n" in render_repro(legacy_name, ENV)


def test_inputs_keep_storage_offset_stride_alignment_and_int_range():
    source = render_repro(make_fusion(), ENV)
    assert (
        "inputs.append(synthesize_storage(16777217, torch.bfloat16, 'cuda:0')"
        ".as_strided((4, 1024, 4096), (4194304, 4096, 1), 1))\ncheck_alignment(0, inputs[-1], 2)\n"
    ) in source
    assert "inputs.append(synthesize_storage(4096, torch.bfloat16, 'cuda:0').as_strided((4096,), (1,), 0))" in source
    assert (
        "inputs.append(synthesize_storage(4096, torch.int64, 'cuda:0', 0, 254).as_strided((4, 1024), (1024, 1), 0))\n"
        "pin_range(inputs[-1], 0, 254)\n"
        "check_alignment(2, inputs[-1], 256)\n"
    ) in source
    # Scalars keep their full precision as a literal.
    assert "inputs.append(9.999999747378752e-06)" in source


def test_int_range_falls_back_to_0_to_9_and_storage_grows_to_what_the_view_reaches():
    index = TensorMeta(
        index=0,
        kind="tensor",
        dtype="torch.int32",
        shape=(8, 2),
        stride=(4, 1),
        storage_offset=3,
        storage_numel=0,
        device="cuda:0",
    )
    mask = TensorMeta(
        index=1, kind="tensor", dtype="torch.bool", shape=(5,), stride=(1,), storage_numel=5, device="cuda:0"
    )
    wide = TensorMeta(
        index=2,
        kind="tensor",
        dtype="torch.int64",
        shape=(2,),
        stride=(1,),
        storage_numel=2,
        device="cuda:0",
        min_value=-5.0,
        max_value=float(2**63 - 1),
    )
    source = render_repro(make_fusion(inputs=(index, mask, wide)), ENV)
    # offset 3 + (8-1)*4 + (2-1)*1 + 1 = 33 elements, although the record said 0.
    assert "synthesize_storage(33, torch.int32, 'cuda:0', 0, 9).as_strided((8, 2), (4, 1), 3)" in source
    assert "values 0..9 (range not recorded)" in source
    assert "synthesize_storage(5, torch.bool, 'cuda:0').as_strided((5,), (1,), 0)" in source
    # randint's exclusive bound must fit int64.
    assert f"synthesize_storage(2, torch.int64, 'cuda:0', -5, {2**63 - 2})" in source
    # Unknown alignment (0) is not checked.
    assert "check_alignment(" not in source.split("inputs = []", 1)[1]


def test_options_and_device_are_passed_to_execute():
    source = render_repro(make_fusion(), ENV)
    assert (
        "outputs = fd.execute(inputs, _enable_options=['kernel_reuse'], _disable_options=['parallel_compile'])"
        in source
    )
    on_gpu1 = render_repro(make_fusion(device_index=1, enable_options=(), disable_options=()), ENV)
    assert "outputs = fd.execute(inputs, device=1, _enable_options=[], _disable_options=[])" in on_gpu1


def test_constant_close_to_the_printed_one_is_restored():
    source = render_repro(make_fusion(), ENV)
    assert "S8 = fd.define_scalar(9.999999747378752e-06, dtype=DataType.Double)" in source
    assert "#   1.00000e-05 -> 9.999999747378752e-06" in source
    # 4096.0 is exactly what was printed: nothing to restore.
    assert "S6 = fd.define_scalar(4096.00, dtype=DataType.Double)" in source


def test_constant_that_only_looks_similar_is_not_substituted():
    text, restored, ambiguous = restore_constants(DEFINITION, ["1e-06"])
    assert text == DEFINITION
    assert restored == () and ambiguous == ()
    source = render_repro(make_fusion(exact_constants=("1e-06",)), ENV)
    assert "fd.define_scalar(1.00000e-05, dtype=DataType.Double)" in source
    assert "restored from the recorded exact values" not in source


def test_constant_restoration_rules():
    text, restored, _ = restore_constants(DEFINITION, ["9.999999747378752e-06"])
    assert restored == (("1.00000e-05", "9.999999747378752e-06"),)
    assert text == DEFINITION.replace("1.00000e-05", "9.999999747378752e-06")
    # The sign is printed as an operator: only the magnitude is replaced.
    text, restored, _ = restore_constants("x = -1.00000e-05\n", ["-9.999999747378752e-06"])
    assert text == "x = -9.999999747378752e-06\n"
    # Two recorded values round to the same literal: which one it was is unknown, so it stays.
    text, restored, ambiguous = restore_constants(DEFINITION, ["9.999999747378752e-06", "1e-05"])
    assert text == DEFINITION and restored == () and ambiguous == ("1.00000e-05",)
    # Integers, strings and unparsable values are left alone.
    text, restored, _ = restore_constants(
        "y = f(4096, '1.00000e-05')\n", ["4096.0000001", "9.999999747378752e-06", "x"]
    )
    assert text == "y = f(4096, '1.00000e-05')\n" and restored == ()


def test_ambiguous_constant_is_noted_in_the_script():
    source = render_repro(make_fusion(exact_constants=("9.999999747378752e-06", "1e-05")), ENV)
    assert "#   1.00000e-05: several recorded constants round to it, left as printed" in source
    compile(source, "repro.py", "exec")


def test_exact_tensors_are_loaded_relative_to_the_script():
    source = render_repro(make_fusion(), ENV, "live.tensors.safetensors")
    compile(source, "repro.py", "exec")
    assert "from safetensors.torch import load_file" in source
    assert "TENSORS_FILE = Path('live.tensors.safetensors')" in source
    assert "TENSORS_FILE = Path(__file__).resolve().parent / TENSORS_FILE" in source
    assert "exact_storage(_SAVED, 'nvFusion0.input1', torch.bfloat16, 'cuda:0').as_strided((4096,), (1,), 0)" in source
    assert (
        "exact_storage(_SAVED, 'nvFusion0.input2', torch.int64, 'cuda:0').as_strided((4, 1024), (1024, 1), 0)" in source
    )
    # An input without a saved tensor is still synthesized.
    assert (
        "synthesize_storage(16777217, torch.bfloat16, 'cuda:0').as_strided((4, 1024, 4096), (4194304, 4096, 1), 1)"
        in source
    )
    # Without a tensors file, safetensors is not needed.
    assert "safetensors" not in render_repro(make_fusion(), ENV)


def test_scalars_become_number_literals_only():
    def scalar(value: str | None) -> FusionRecord:
        return make_fusion(inputs=(TensorMeta(index=0, kind="scalar", dtype="float", scalar_value=value),))

    assert "inputs.append(float('nan'))" in render_repro(scalar("nan"), ENV)
    assert "inputs.append(-3)" in render_repro(scalar("-3"), ENV)
    assert "inputs.append(True)" in render_repro(scalar("True"), ENV)
    with pytest.raises(ReplayError, match="input 0 is a scalar whose value was not recorded"):
        render_repro(scalar(None), ENV)
    with pytest.raises(ReplayError, match="not a number"):
        render_repro(scalar("__import__('os').system('true')"), ENV)


def test_legacy_definition_is_translated_and_untranslatable_one_names_the_fusion():
    legacy = DEFINITION.replace("fd.add_output(T9)", "fd.add_output(T9, stride_order=[0, 1])")
    assert "fd.add_output(fd.ops.stride_order(T9, [0, 1]))" in render_repro(make_fusion(definition=legacy), ENV)
    broken = DEFINITION.replace("fd.ops.add(T7, S8)", "fd.ops.index_put_accumulate(T7, S8, S6)")
    with pytest.raises(ReplayError, match=r"forward/nvFusion0/.*fd\.ops\.index_put_accumulate \(line 11\)"):
        render_repro(make_fusion(definition=broken), ENV)


def test_write_one_fusion_to_a_file(tmp_path):
    capture_path = save_capture(make_capture(make_fusion()), tmp_path / "live.json")
    notes = []
    written = write_repros(capture_path, tmp_path / "out" / "repro.py", on_note=notes.append)
    assert written == [tmp_path / "out" / "repro.py"]
    source = written[0].read_text()
    # the fusion names saved tensors, but the capture was written without its safetensors file
    missing = "the capture's exact inputs (live.tensors.safetensors) were not found: inputs are synthesized"
    assert notes == [missing]
    assert source == render_repro(make_fusion(), ENV, capture_name=str(capture_path), notes=(missing,))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["repro.py"]  # no temporary left behind


def test_write_several_fusions_to_a_directory(tmp_path):
    other = DEFINITION.replace("T9 = fd.ops.add(T7, S8)", "T9 = fd.ops.sub(T7, S8)")
    fusions = (
        make_fusion(),
        make_fusion(trace="backward"),
        make_fusion(name="nvFusion1"),
        # Same region, another definition: the names would collide, so the hash tells them apart.
        make_fusion(name="nvFusion1", definition=other),
        make_fusion(name="fusion0", trace=None),
    )
    capture_path = save_capture(make_capture(*fusions), tmp_path / "live.json")
    # by default one script per distinct fusion (issue #41): all but the fourth share graph, inputs
    # and options, so two scripts, each named for its first record as every record is named below
    h1, h2 = (f.definition_hash[:12] for f in fusions[2:4])
    distinct = write_repros(capture_path, tmp_path / "distinct")
    assert [p.name for p in distinct] == ["forward_nvFusion0.py", f"forward_nvFusion1_{h2}.py"]
    written = write_repros(capture_path, tmp_path / "repros", every_record=True)
    assert [p.name for p in written] == [
        "forward_nvFusion0.py",
        "backward_nvFusion0.py",
        f"forward_nvFusion1_{h1}.py",
        f"forward_nvFusion1_{h2}.py",
        "script_fusion0.py",
    ]
    assert sorted(p.name for p in (tmp_path / "repros").iterdir()) == sorted(p.name for p in written)
    assert "fd.ops.sub(T7, S8)" in written[3].read_text()
    (tmp_path / "a_file.py").write_text("")
    with pytest.raises(FusionDiffError, match="is a file but .* has 5 fusions"):
        write_repros(capture_path, tmp_path / "a_file.py", every_record=True)


def test_one_fusion_into_an_existing_directory(tmp_path):
    capture_path = save_capture(make_capture(make_fusion()), tmp_path / "live.json")
    (tmp_path / "out").mkdir()
    assert write_repros(capture_path, tmp_path / "out") == [tmp_path / "out" / "forward_nvFusion0.py"]


def test_select_by_name_or_key_and_errors_list_the_names(tmp_path):
    fusions = (make_fusion(), make_fusion(trace="backward"), make_fusion(name="nvFusion1"))
    capture = make_capture(*fusions)
    assert select_fusions(capture, "nvFusion1") == (fusions[2],)
    assert select_fusions(capture, fusions[1].key) == (fusions[1],)
    assert select_fusions(capture, "backward/nvFusion0") == (fusions[1],)
    with pytest.raises(FusionDiffError) as exc:
        select_fusions(capture, "nvFusion7", origin="live.json")
    message = str(exc.value)
    assert message.startswith("live.json has no fusion 'nvFusion7'; available: nvFusion0 (forward/nvFusion0/")
    assert "nvFusion1 (forward/nvFusion1/" in message and "(backward/nvFusion0/" in message
    with pytest.raises(FusionDiffError, match="'nvFusion0' names 2 fusions"):
        select_fusions(capture, "nvFusion0")
    with pytest.raises(FusionDiffError, match="holds no fusions"):
        select_fusions(make_capture(), None)
    capture_path = save_capture(capture, tmp_path / "live.json")
    assert write_repros(capture_path, tmp_path / "one.py", fusion="nvFusion1") == [tmp_path / "one.py"]
    with pytest.raises(FusionDiffError, match="no fusion 'nope'"):
        write_repros(capture_path, tmp_path / "none.py", fusion="nope")
    assert not (tmp_path / "none.py").exists()


def test_saved_tensors_are_referenced_relative_to_each_script(tmp_path):
    capture_path = save_capture(
        make_capture(make_fusion(), tensors_file="live.tensors.safetensors"), tmp_path / "live.json"
    )
    write_saved_inputs(tensors_path_for(capture_path), {"nvFusion0.input1": 4096 * 2, "nvFusion0.input2": 4096 * 8})
    beside = write_repros(capture_path, tmp_path / "repro.py")[0].read_text()
    assert "TENSORS_FILE = Path('live.tensors.safetensors')" in beside
    below = write_repros(capture_path, tmp_path / "sub" / "repro.py")[0].read_text()
    assert "TENSORS_FILE = Path('../live.tensors.safetensors')" in below
    assert "exact_storage(_SAVED, 'nvFusion0.input2', torch.int64" in below


def test_missing_saved_tensors_fall_back_to_synthesized_inputs_with_a_note(tmp_path):
    capture_path = save_capture(
        make_capture(make_fusion(), tensors_file="live.tensors.safetensors"), tmp_path / "live.json"
    )
    source = write_repros(capture_path, tmp_path / "repro.py")[0].read_text()
    assert (
        "# Note: the capture's exact inputs (live.tensors.safetensors) were not found: inputs are synthesized" in source
    )
    assert "safetensors.torch" not in source
    assert "synthesize_storage(4096, torch.int64, 'cuda:0', 0, 254)" in source


def test_cli_repro_writes_the_script(tmp_path, capsys):
    capture_path = save_capture(make_capture(make_fusion()), tmp_path / "live.json")
    assert main(["repro", str(capture_path), "-o", str(tmp_path / "r.py")]) == 0
    assert f"wrote {tmp_path / 'r.py'}" in capsys.readouterr().err
    compile((tmp_path / "r.py").read_text(), "r.py", "exec")
    assert main(["repro", str(capture_path), "-o", str(tmp_path / "x.py"), "--fusion", "nvFusion9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "available: nvFusion0" in err


def test_header_comment_cannot_break_out_of_the_comment():
    sneaky = replace(ENV, gpu_name="GPU\nimport shutil")
    source = render_repro(make_fusion(), sneaky)
    assert "\nimport shutil" not in source
    compile(source, "repro.py", "exec")


# --------------------------------------------------------------------------------------------
# The input section of a written script, run on CPU tensors (needs torch, not nvFuser or a GPU)


def _run_input_section(source: str, script_path, until: str = "# The per-call options") -> dict:
    """Execute what a script runs between defining the fusion and executing it (or ``until``):
    the helpers copied into it and the inputs they build. Returns the script's globals."""
    start = source.index("    nvfuser_fusion(fd)\n") + len("    nvfuser_fusion(fd)\n")
    end = source.index(until)
    section = source[start:end]
    namespace: dict = {"__file__": str(script_path), "__name__": "__repro__"}
    exec(compile("import sys\nimport torch\nfrom pathlib import Path\n" + section, str(script_path), "exec"), namespace)
    return namespace


def _cpu(index, dtype, shape, stride, offset=0, **fields) -> TensorMeta:
    numel = offset + 1 + sum((n - 1) * s for n, s in zip(shape, stride))
    return TensorMeta(
        index=index,
        kind="tensor",
        dtype=dtype,
        shape=shape,
        stride=stride,
        storage_offset=offset,
        storage_numel=numel,
        device="cpu",
        alignment_bytes=0,
        **fields,
    )


def test_script_helpers_rebuild_dtype_layout_and_int_range_on_cpu(tmp_path):
    torch = pytest.importorskip("torch")
    inputs = (
        _cpu(0, "torch.bfloat16", (4, 8), (8, 1), offset=1),
        _cpu(1, "torch.float8_e4m3fn", (16,), (1,)),  # 1-byte float: randn cannot draw it directly
        _cpu(2, "torch.int32", (5, 2), (1, 5), offset=3, min_value=-3.0, max_value=7.0),  # transposed
        _cpu(3, "torch.int64", (6,), (2,)),  # range not recorded
        _cpu(4, "torch.bool", (5,), (1,)),
        _cpu(5, "torch.int8", (3,), (1,), min_value=-128.0, max_value=127.0),  # the dtype's whole range
    )
    namespace = _run_input_section(render_repro(make_fusion(inputs=inputs), ENV), tmp_path / "repro.py")
    built = namespace["inputs"]
    assert len(built) == len(inputs)
    for meta, tensor in zip(inputs, built):
        assert str(tensor.dtype) == meta.dtype
        assert tuple(tensor.shape) == meta.shape and tuple(tensor.stride()) == meta.stride
        assert tensor.storage_offset() == meta.storage_offset
        assert tensor.untyped_storage().nbytes() // tensor.element_size() >= meta.storage_numel
    # the recorded extremes are written in, so the values span exactly the recorded range
    assert (int(built[2].min()), int(built[2].max())) == (-3, 7)
    assert 0 <= int(built[3].min()) and int(built[3].max()) <= 9
    assert set(built[4].tolist()) <= {False, True}
    # randint's exclusive bound must fit the dtype: the largest int8 is given up
    assert (int(built[5].min()), int(built[5].max())) == (-128, 126)
    assert torch.isfinite(built[1].float()).all()


def test_script_alignment_check_warns_only_on_another_alignment(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    # the recorded inputs are on cuda: only the helpers are run
    namespace = _run_input_section(render_repro(make_fusion(), ENV), tmp_path / "repro.py", until="inputs = []")
    storage = torch.zeros(64, dtype=torch.bfloat16)
    aligned, shifted = storage[0:8], storage[1:9]
    got = namespace["alignment_of"](aligned.data_ptr())
    namespace["check_alignment"](0, aligned, got)
    assert capsys.readouterr().err == ""
    namespace["check_alignment"](1, shifted, got)
    assert capsys.readouterr().err == f"warning: input 1 is 2-byte aligned; in the recording it was {got}\n"


def test_script_loads_exact_inputs_relative_to_itself(tmp_path):
    torch = pytest.importorskip("torch")
    safetensors = pytest.importorskip("safetensors.torch")
    saved = torch.arange(12, dtype=torch.int64)
    inputs = (_cpu(0, "torch.int64", (3, 3), (1, 3), offset=2, tensor_key="k0", min_value=0.0, max_value=11.0),)
    (tmp_path / "sub").mkdir()
    safetensors.save_file({"k0": saved}, str(tmp_path / "live.tensors.safetensors"))
    source = render_repro(make_fusion(inputs=inputs), ENV, "../live.tensors.safetensors")
    built = _run_input_section(source, tmp_path / "sub" / "repro.py")["inputs"][0]
    assert torch.equal(built, saved.as_strided((3, 3), (1, 3), 2))
    assert built.untyped_storage().data_ptr() != saved.untyped_storage().data_ptr()


def test_replay_inputs_are_drawn_like_the_scripts_inputs():
    """``replay --inputs`` rebuilds a record with the same functions the script copies."""
    torch = pytest.importorskip("torch")
    from fusiondiff.recording.inputs import materialize

    # materialize checks the rebuilt alignment (up to 16 bytes) against the record's
    small = materialize(replace(_cpu(0, "torch.float8_e5m2", (4, 4), (1, 4)), alignment_bytes=256))
    assert small.dtype == torch.float8_e5m2 and small.stride() == (1, 4)
    wide = _cpu(1, "torch.int64", (2, 3), (3, 1), offset=1, min_value=-5.0, max_value=float(2**63 - 1))
    wide = materialize(replace(wide, alignment_bytes=8))
    assert (int(wide.min()), int(wide.max())) == (-5, 2**63 - 2)
    assert wide.storage_offset() == 1


def test_scripts_replayed_in_one_process_may_share_nvfuser_settings_but_not_disagree():
    from fusiondiff.records.errors import ReplayError
    from fusiondiff.replay.script_env import scripts_nvfuser_env

    a = 'import os\nos.environ["NVFUSER_DISABLE"] = "parallel_compile"\n'
    b = 'import os\nos.environ["NVFUSER_ENABLE"] = "id_model"\n'
    assert scripts_nvfuser_env([("a.py", a), ("b.py", b), ("c.py", a)]) == {
        "NVFUSER_DISABLE": "parallel_compile",
        "NVFUSER_ENABLE": "id_model",
    }
    other = a.replace("parallel_compile", "kernel_reuse")
    with pytest.raises(ReplayError, match="a.py and d.py set NVFUSER_DISABLE differently: replay them separately"):
        scripts_nvfuser_env([("a.py", a), ("d.py", other)])
