"""Legacy repro scripts (``from nvfuser import ...``) translated for nvfuser_direct, checked as text."""

from __future__ import annotations

import ast
import difflib
from pathlib import Path

import pytest

from fusiondiff.records.errors import ReplayError
from fusiondiff.replay.legacy import Translation, translate_legacy

SEED_SCRIPT = Path(__file__).parent.parent / "data" / "seed" / "legacy_repro.py"


def changed_lines(before: str, after: str) -> list[str]:
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_seed_script_needs_only_the_import_changed():
    source = SEED_SCRIPT.read_text()
    result = translate_legacy(source, str(SEED_SCRIPT))
    assert result.is_legacy
    assert result.changes == ("line 8: from nvfuser import -> from nvfuser_direct import",)
    assert changed_lines(source, result.source) == [
        "-from nvfuser import FusionDefinition, DataType",
        "+from nvfuser_direct import FusionDefinition, DataType",
    ]
    # The versions header and every other comment survive.
    assert result.source.startswith("# CUDA devices:\n#  0: NVIDIA RTX 6000 Ada Generation\n")
    assert "# nvfuser version: 0.2.26+git37bc4fa\n" in result.source
    assert "        # sleep(5)\n" in result.source
    compile(result.source, "translated_seed.py", "exec")


def test_direct_script_passes_through_unchanged():
    translated_seed = translate_legacy(SEED_SCRIPT.read_text()).source
    again = translate_legacy(translated_seed)
    assert again == Translation(source=translated_seed, is_legacy=False, changes=())
    direct = (
        "# a direct script\n"
        "import nvfuser_direct\n"
        "from nvfuser_direct import FusionDefinition, DataType  # comment\n"
        "with FusionDefinition() as fd:\n"
        "    T0 = fd.define_tensor(shape=[2, 3], contiguity=[True, True], dtype=DataType.Float)\n"
        "    V = fd.define_vector(2)\n"
        "    fd.add_output(fd.ops.stride_order(T0, [0, 1]))\n"
    )
    assert translate_legacy(direct) == Translation(source=direct, is_legacy=False, changes=())


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("import nvfuser", "import nvfuser_direct as nvfuser"),
        ("import nvfuser as nvf", "import nvfuser_direct as nvf"),
        ("import os, nvfuser", "import os, nvfuser_direct as nvfuser"),
        ("from nvfuser import FusionDefinition, DataType", "from nvfuser_direct import FusionDefinition, DataType"),
        ("from nvfuser import *", "from nvfuser_direct import *"),
        (
            "from nvfuser.pytorch_utils import torch_dtype_to_nvfuser_dtype",
            "from nvfuser_direct.pytorch_utils import torch_dtype_to_nvfuser_dtype",
        ),
        ("import nvfuser.pytorch_utils as pu", "import nvfuser_direct.pytorch_utils as pu"),
        # `import nvfuser.x` also binds `nvfuser`, so the package is bound under that name too.
        ("import nvfuser.pytorch_utils", "import nvfuser_direct.pytorch_utils, nvfuser_direct as nvfuser"),
        ("from nvfuser import nvfuser_version", "from nvfuser_direct import nvfuser_direct_version as nvfuser_version"),
    ],
)
def test_imports_go_to_nvfuser_direct(line, expected):
    result = translate_legacy(line + "\n")
    assert result.source == expected + "\n"
    assert result.is_legacy
    assert len(result.changes) == 1 and result.changes[0].startswith("line 1: ")


@pytest.mark.parametrize(
    "line",
    [
        "import nvfuser_direct",
        "import nvfuserx",
        "from .nvfuser import helper",
        "from thunder.executors import nvfuserex",
    ],
)
def test_other_modules_are_left_alone(line):
    assert translate_legacy(line + "\n").source == line + "\n"


def test_define_vector_of_values_becomes_a_plain_list():
    source = (
        "def f(fd):\n"
        "    V0 = fd.define_vector([S1, 4096], dtype=DataType.Int)\n"
        "    V1 = fd.define_vector((2, 3))\n"
        "    V2 = fd.define_vector(3)\n"
    )
    result = translate_legacy(source)
    assert result.source == (
        "def f(fd):\n"
        "    V0 = [S1, 4096]\n"
        "    V1 = [2, 3]\n"
        # The input form (a size) exists in nvfuser_direct as it is.
        "    V2 = fd.define_vector(3)\n"
    )
    assert result.changes == (
        "line 2: fd.define_vector([S1, 4096], dtype=DataType.Int) -> [S1, 4096]",
        "line 3: fd.define_vector((2, 3)) -> [2, 3]",
    )


def test_add_output_stride_order_becomes_the_stride_order_op():
    source = "def f(fd):\n    fd.add_output(T5, stride_order=[2, 0, 1])\n"
    result = translate_legacy(source)
    assert result.source == "def f(fd):\n    fd.add_output(fd.ops.stride_order(T5, [2, 0, 1]))\n"
    assert result.changes == (
        "line 2: fd.add_output(T5, stride_order=[2, 0, 1]) -> fd.add_output(fd.ops.stride_order(T5, [2, 0, 1]))",
    )
    plain = "def f(fd):\n    fd.add_output(T5)\n"
    assert translate_legacy(plain).source == plain


def test_nested_rewrites_and_the_rest_of_the_text_are_kept():
    source = (
        "# header kept\n"
        "from nvfuser import FusionDefinition  # import comment\n"
        "\n"
        "def f(fd):  # signature comment\n"
        "    name = 'é'; fd.add_output(fd.ops.add(T0, T1), stride_order=fd.define_vector([1, 0]))  # after\n"
        "    fd.add_output(\n"
        "        T2,  # inner comments of a rewritten call are lost; the line's tail is not\n"
        "        stride_order=[0, 1],\n"
        "    )  # tail\n"
    )
    result = translate_legacy(source)
    assert result.source == (
        "# header kept\n"
        "from nvfuser_direct import FusionDefinition  # import comment\n"
        "\n"
        "def f(fd):  # signature comment\n"
        "    name = 'é'; fd.add_output(fd.ops.stride_order(fd.ops.add(T0, T1), [1, 0]))  # after\n"
        # every line keeps its number (errors name the user's lines): the call keeps its three line breaks
        "    fd.add_output(fd.ops.stride_order(T2, [0, 1])\n\n\n)  # tail\n"
    )
    # One line per rewrite, in source order, inner ones included.
    assert [c.split(":")[0] for c in result.changes] == ["line 2", "line 5", "line 5", "line 6"]
    ast.parse(result.source)


def test_untranslatable_constructs_are_all_named_in_one_line_with_what_to_do():
    source = (
        "from nvfuser import FusionDefinition\n"
        "from nvfuser.contrib import nn\n"
        "def f(fd):\n"
        "    T2 = fd.ops.add_alpha(T0, T1, S0)\n"
        "    T5 = fd.ops.batch_norm(T0, w, b, m, v, False, S0, S1, False)\n"
        "    T6 = fd.ops.index_put_accumulate(T0, I0, T1)\n"
        "    T7 = fd.ops.batch_norm(T0, w, b, m, v, False, S0, S1, False)\n"
    )
    with pytest.raises(ReplayError) as exc:
        translate_legacy(source, "bug.py")
    message = str(exc.value)
    assert "\n" not in message
    assert message.startswith(
        "fusiondiff could not translate 3 constructs to nvfuser_direct: nvfuser.contrib (line 2): "
    )
    # in source order, each with its lines and what to do; add_alpha (line 4) is translated
    assert "; fd.ops.batch_norm (lines 5, 7): nvfuser_direct has no batch_norm; write it out with " in message
    assert "; fd.ops.index_put_accumulate (line 6): nvfuser_direct has no index_put_accumulate; " in message
    assert "add_alpha" not in message


def test_an_op_named_like_a_missing_one_outside_ops_is_fine():
    source = "x = table.at(3)\ny = model.add_alpha\n"
    assert translate_legacy(source).source == source


def test_syntax_error_is_one_line_with_the_line_number():
    with pytest.raises(ReplayError) as exc:
        translate_legacy("import torch\nx = (1,\n", "broken.py")
    message = str(exc.value)
    assert message.startswith("broken.py is not valid Python: ")
    assert message.endswith("(line 2)")
    assert "\n" not in message


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # sdpfa_bwd's log_sumexp= became logsumexp= (af00238ed, 2026-01-20)
        (
            "fd.ops.sdpfa_bwd(g, q, k, v, o, log_sumexp=l, dropout_p=p, is_causal=c, philox_seed=s, philox_offset=f, scale=None)",
            "fd.ops.sdpfa_bwd(g, q, k, v, o, logsumexp=l, dropout_p=p, is_causal=c, philox_seed=s, philox_offset=f, scale=None)",
        ),
        # define_vector(size, dtype=...) of June 2023: direct's takes the size only
        ("fd.define_vector(2, dtype=DataType.Int)", "fd.define_vector(2)"),
        # the three argument squeeze of 2024 on (dims, squeeze_expanded) is today's form
        ("fd.ops.squeeze(T0, [1], False)", "fd.ops.squeeze(T0, [1], False)"),
        ("fd.ops.squeeze(T0, [4, 1], [1])", "fd.ops.squeeze(T0, [1])"),
        ("fd.ops.reshape(T0, [4, 8], new_shape=[32])", "fd.ops.reshape(T0, new_shape=[32])"),
        # sdpfa_fwd with bias and mask first (2026 and direct) is left alone
        ("fd.ops.sdpfa_fwd(q, k, v, T3, T4, S5, S6, S7)", "fd.ops.sdpfa_fwd(q, k, v, T3, T4, S5, S6, S7)"),
        (
            "fd.ops.sdpfa_fwd(q, k, v, None, None, None)",
            "fd.ops.sdpfa_fwd(q, k, v, dropout_p=None, is_causal=None, scale=None)",
        ),
        ("fd.execute(inputs, device=0)", "fd.execute(inputs, device=0)"),
        ("fd.add_output(T0, T1)", "fd.add_output(T0, T1)"),  # an alias, not a stride order
        ("fd.ops.normal(m, s, [2, 3], dtype=DataType.Float)", "fd.ops.normal(m, s, [2, 3], dtype=DataType.Float)"),
        ("fd.ops.min(T0, axes=[0])", "fd.ops.min(T0, dims=[0])"),
        ("fd.ops.prod(T0, axis=0)", "fd.ops.prod(T0, dim=0)"),
    ],
)
def test_one_rule_on_one_call(before, after):
    source = f"def f(fd):\n    x = {before}\n"
    assert translate_legacy(source).source == f"def f(fd):\n    x = {after}\n"


def test_fusion_cache_goes_and_a_block_left_empty_keeps_a_pass():
    source = (
        "from nvfuser import FusionCache, FusionDefinition\n"
        "fc = FusionCache.get()\n"
        "def reset():\n"
        "    FusionCache.reset()\n"
        "with FusionDefinition(fc) as fd:\n"
        "    pass\n"
    )
    assert translate_legacy(source).source == (
        "from nvfuser_direct import FusionDefinition\n"
        "\n"
        "def reset():\n"
        "    pass\n"
        "with FusionDefinition() as fd:\n"
        "    pass\n"
    )


def test_an_import_of_fusion_cache_alone_goes_entirely():
    source = "import torch\nfrom nvfuser import FusionCache\nFusionCache.reset()\n"
    assert translate_legacy(source).source == "import torch\n\n\n"


def test_operators_apply_to_nvfuser_values_only():
    source = (
        "import torch\n"
        "from nvfuser import FusionDefinition\n"
        "with FusionDefinition() as fd:\n"
        "    t0 = fd.define_tensor(shape=[-1], contiguity=[True])\n"
        "    n = 2 * 3\n"
        "    t1 = t0 * t0 < t0\n"
        "t0 = torch.ones(3)\n"
        "t2 = t0 + 1\n"
    )
    assert translate_legacy(source).source == (
        "import torch\n"
        "from nvfuser_direct import FusionDefinition\n"
        "with FusionDefinition() as fd:\n"
        "    t0 = fd.define_tensor(shape=[-1], contiguity=[True])\n"
        "    n = 2 * 3\n"
        "    t1 = fd.ops.lt(fd.ops.mul(t0, t0), t0)\n"
        "t0 = torch.ones(3)\n"
        "t2 = t0 + 1\n"
    )


def test_an_operator_with_no_fusion_definition_in_scope_is_refused():
    source = "from nvfuser import Tensor\ndef double(x: Tensor) -> Tensor:\n    return x + x\n"
    with pytest.raises(ReplayError, match=r"^fusiondiff could not translate x \+ x \(line 3\) to nvfuser_direct: "):
        translate_legacy(source)


def test_an_op_direct_lacks_is_refused_in_a_legacy_script_only():
    legacy = "from nvfuser import FusionDefinition\ndef f(fd):\n    fd.ops.view(T0, [2, 3], [6])\n"
    with pytest.raises(
        ReplayError, match=r"fd\.ops\.view \(line 3\) to nvfuser_direct: nvfuser_direct 0\.2\.36 has no such op"
    ):
        translate_legacy(legacy)
    direct = legacy.replace("from nvfuser import", "from nvfuser_direct import")
    assert translate_legacy(direct).source == direct
    # torch's ops namespace is not nvFuser's
    torch_ops = "import torch\nimport nvfuser\nx = torch.ops.aten.view(t, [6])\n"
    assert translate_legacy(torch_ops).source == torch_ops.replace(
        "import nvfuser\n", "import nvfuser_direct as nvfuser\n"
    )


def test_script_failure_names_the_scripts_own_line_or_an_untranslated_call():
    from fusiondiff.replay.child import describe_script_failure

    def rejects(*args, **kwargs):  # stands for a pybind-bound nvFuser function: its frame is not the script's
        raise TypeError(
            "sum(): incompatible function arguments. The following argument types are supported:\n    1. ..."
        )

    def failure(code: str) -> str:
        try:
            exec(compile(code, "bug.py", "exec"), {"fd_ops_sum": rejects})
        except Exception as exc:  # noqa: BLE001
            return describe_script_failure(exc, "bug.py")
        raise AssertionError("did not raise")

    assert failure("x = 1\nimport no_such_module_here\n") == (
        "the script's own code failed at line 2: ModuleNotFoundError: No module named 'no_such_module_here'"
    )
    assert failure("def define():\n    fd_ops_sum(1, axes=[0])\n\ndefine()\n") == (
        "nvFuser rejected a call at line 2 that fusiondiff did not translate: "
        "sum(): incompatible function arguments. The following argument types are supported:"
    )
