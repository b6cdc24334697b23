"""What may go from a capture into a script: the definition checked on its syntax tree, strings
as checked literals, comments on one line. The CLI side of it is in the bad-input battery."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fusiondiff.records.errors import ReplayError
from fusiondiff.records.escape import printable
from fusiondiff.replay.legacy import translate_legacy
from fusiondiff.replay.script_safety import (
    check_definition,
    comment_text,
    literal,
    literal_list,
    text_literal,
)

ROOT = Path(__file__).resolve().parent.parent.parent
RECORDINGS = sorted(
    p
    for p in [*ROOT.glob("tests/data/**/*.json"), *ROOT.glob("fusiondiff/data/**/*.json")]
    if '"schema_version"' in p.read_text() and "fusions" in json.loads(p.read_text())
)
"""Every capture recorded (a diff record, such as tests/data/records', holds its captures' fusions
under its sides: they are recorded captures' too, read here from those captures)."""
DEF = (
    "def nvfuser_fusion(fd : FusionDefinition) -> None :\n    T0 = fd.define_tensor(shape=[4], dtype=DataType.Float)\n"
)


def test_every_recorded_definition_is_accepted_before_and_after_translation():
    definitions = [f["definition"] for p in RECORDINGS for f in json.loads(p.read_text())["fusions"]]
    assert len(definitions) > 20
    for text in definitions:
        assert check_definition(text).startswith("nvfuser_fusion")
        assert check_definition(translate_legacy(text).source).startswith("nvfuser_fusion")


@pytest.mark.parametrize(
    "statement",
    [
        "T1 = fd.ops.add(T0, -1.5)",
        "T1 = fd.ops.add(T0, float('inf'))",
        "T1 = fd.ops.add(T0, -float('inf'))",
        'T1 = fd.ops.add(T0, float("nan"))',
        "S1 = fd.define_scalar(None, dtype=DataType.Int)",
        "T1, T2 = fd.ops.var_mean(T0, dims=[0], correction=0, keepdim=False)",
        "T1 = fd.ops.reshape(T0, new_shape=(2, 2))",
        "fd.add_output(fd.ops.stride_order(T0, [0]))",  # what the legacy translation writes
        "T1 = fd.ops.pad(T0, [[1, -1], [True, False]])",
        "T1 = fd.ops.some_op(T0, 'a string')",
    ],
)
def test_fd_calls_on_literals_and_defined_names_are_accepted(statement):
    assert check_definition(DEF + f"    {statement}\n") == "nvfuser_fusion"
    assert check_definition(DEF.replace(" : FusionDefinition) -> None :", "):") + f"    {statement}\n")


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("import os\n" + DEF, "line 1: not allowed in a definition: an import outside the function"),
        (DEF + "    x = y = fd.ops.neg(T0)\n", "line 3: not allowed in a definition: a chained assignment"),
        (DEF + "    T0.x = fd.ops.neg(T0)\n", "assigning to an attribute"),
        (DEF + "    T1 = fd.ops.neg(*T0)\n", "a starred expression"),
        (DEF + "    T1 = fd.ops.neg(**T0)\n", "** arguments"),
        (DEF + "    T1 = fd.ops.neg(T0[0])\n", "a subscript"),
        (DEF + "    T1 = fd.ops.neg(T0 + 1)\n", "an operator"),
        (DEF + "    T1 = fd.ops.neg(-T0)\n", "negating 'T0'"),
        (DEF + "    T1 = fd.ops.neg(b'x')\n", "the constant \"b'x'\""),
        (DEF + "    T1 = fd.ops.neg({1: 2})\n", "a dict"),
        (DEF + "    T1 = fd.ops.neg(float('1e5'))\n", "calling 'float'"),
        (DEF + "    T1 = fd.ops.neg(fd)\n", "the name 'fd'"),
        (DEF + "    T1 = fd.ops._private(T0)\n", "calling 'fd.ops._private'"),
        (DEF + "    T1 = fd.sched.split(T0)\n", "calling 'fd.sched.split'"),
        (DEF + "    for x in []: pass\n", "a for loop in the function"),
        (DEF + "    T1 = 1\n", "a bare constant (a statement must be a call of fd or fd.ops)"),
        (DEF + "    __x = fd.ops.neg(T0)\n", "rebinding the name '__x'"),
        (DEF + DEF, "a second function outside the function"),
        ("async " + DEF, "defines no function"),
        (DEF.replace("(fd ", "(fd, x "), "parameters other than `fd`"),
        (DEF.replace("-> None", "-> int"), "a return annotation other than None"),
        (DEF + "    T1 = fd.ops.neg(T0)  # \x1b[2J\n", r"character '\x1b'"),
        (DEF + "    T1 = fd.ops.neg(T0, '\u202e')\n", r"character '\u202e'"),
        ("def f(fd):\n    fd.x(" + "[" * 300 + "]" * 300 + ")\n", "not valid Python"),
    ],
)
def test_anything_else_is_refused_naming_the_line_and_construct(text, refused):
    with pytest.raises(ReplayError) as exc:
        check_definition(text, "the definition of k")
    message = str(exc.value)
    assert message.startswith("the definition of k") and refused in message
    assert "\n" not in message


def test_strings_become_checked_literals():
    assert literal("cuda:0", "device", "input 0") == "'cuda:0'"
    assert literal_list(["kernel_reuse", "id_model"], "option", "x") == "['kernel_reuse', 'id_model']"
    for value, kind in [
        ("cuda:0'", "device"),
        ("gpu", "device"),
        (b"cpu", "device"),
        ("0/in put", "tensor key"),
        ("-x", "option"),
        ("NVFUSER_a", "variable"),
        ("PATH", "variable"),
    ]:
        with pytest.raises(ReplayError, match=f"{kind} .* is not allowed in a script"):
            literal(value, kind, "where")
    assert text_literal("a'b\"c", "v") == repr("a'b\"c")
    with pytest.raises(ReplayError, match="not plain printable text"):
        text_literal("a\x00b", "v")


@pytest.mark.parametrize(
    "text", ["a\nb", "a\rb", "a\r\nb", "a\u2028b", "a\x1b[2Jb", "a\x00b", "a\ud800b", "a\x85b", "a\x0cb"]
)
def test_comment_text_is_one_printable_line(text):
    line = "# " + comment_text(text)
    assert line.isprintable() and len(line.splitlines()) == 1
    compile(line + "\nx = 1\n", "c.py", "exec")
    assert printable(comment_text(text)) == comment_text(text)
    assert comment_text("plain text, ünïcode") == "plain text, ünïcode"
