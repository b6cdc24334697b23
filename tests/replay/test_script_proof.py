"""A repro script is judged by what Python reads from its bytes, not by the text fusiondiff meant.

The read-back proof (:mod:`fusiondiff.replay.script_proof`) is checked on bytes made to differ
from the text, and shown to refuse the issue's attacks once the pinned codec line is taken away;
then a property test puts arbitrary text (codec declarations, escapes, surrogates, ``\\r``,
``\\x0c``, ``\\u2028``, NULs) into every text field of a recorded capture, its ``NVFUSER_``
variables, a string argument of its definition and its file name, and checks that the script Python
reads declares UTF-8 and holds only the nodes the repro writer emits: the names, attributes and
imports of the clean capture's script and of the helpers it may embed, ``torch.<dtype>``, and
constants.
"""

from __future__ import annotations

import ast
import copy
import inspect
import io
import json
import os
import tempfile
import tokenize
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fusiondiff.recording import synthesis
from fusiondiff.records.errors import FusionDiffError, ReplayError
from fusiondiff.replay import repro
from fusiondiff.replay.repro import write_repros
from fusiondiff.replay.script_proof import ENCODING_LINE, SECOND_LINE, prove_script

RECORDED = Path(__file__).parent.parent / "data" / "seed" / "live_backward.json"
"""Recorded on the H200: one backward fusion, four inputs, two kernels."""
BASE = json.loads(RECORDED.read_text())
BASE["environment"]["nvfuser_env"] = {"NVFUSER_DUMP": "cuda_kernel"}
BASE["fusions"][0]["enable_options"] = ["kernel_reuse"]
STRING_SLOT = "@@TEXT@@"
BASE["fusions"][0]["definition"] = BASE["fusions"][0]["definition"].replace(
    "    fd.add_output", f'    tv99 = fd.ops.neg(tv0, "{STRING_SLOT}")\n    fd.add_output', 1
)
"""The recording with an NVFUSER_ variable, an option, and a string argument in its definition, so
that each of those carries the text too."""
PAYLOAD = "PWNED"


def _python_reads(path: Path) -> tuple[str, ast.Module]:
    data = path.read_bytes()
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return encoding, compile(data, str(path), "exec", ast.PyCF_ONLY_AST, dont_inherit=True)


def _identifiers(tree: ast.AST) -> set[tuple[str, str]]:
    """Every name, attribute, import, function and argument in ``tree`` (``torch.<x>`` as one)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id == "torch":
                continue  # torch.<dtype>: a checked name (script_safety.dtype_expression), never called
            found.add(("attr", node.attr))
        elif isinstance(node, ast.Name):
            found.add(("name", node.id))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {("import", f"{getattr(node, 'module', '') or ''}:{a.name}") for a in node.names}
        elif isinstance(node, ast.FunctionDef):
            found.add(("def", node.name))
        elif isinstance(node, ast.arg):
            found.add(("arg", node.arg))
    return found


def _helpers() -> set[tuple[str, str]]:
    found = set()
    for helper in synthesis.SCRIPT_HELPERS:
        found |= _identifiers(ast.parse(inspect.getsource(helper)))
    # what the saved-inputs part adds around exact_storage
    found |= {("import", "safetensors.torch:load_file"), ("name", "load_file"), ("name", "_SAVED")}
    found |= {("name", "TENSORS_FILE"), ("attr", "is_absolute"), ("attr", "resolve"), ("attr", "parent")}
    found |= {("attr", "exists")}
    return found


def _write(tmp: Path, data: Any, name: str = "cap") -> Path:
    capture = tmp / f"{name}.json"
    capture.write_text(json.dumps(data))
    return capture


@pytest.fixture(scope="module")
def allowed(tmp_path_factory: pytest.TempPathFactory) -> set[tuple[str, str]]:
    tmp = tmp_path_factory.mktemp("clean")
    clean = copy.deepcopy(BASE)
    clean["fusions"][0]["definition"] = clean["fusions"][0]["definition"].replace(STRING_SLOT, "x")
    (script,) = write_repros(_write(tmp, clean), tmp / "r.py")
    encoding, tree = _python_reads(script)
    assert encoding == "utf-8"
    return _identifiers(tree) | _helpers()


def test_the_proof_refuses_bytes_that_python_reads_otherwise() -> None:
    meant = f"{ENCODING_LINE}\n{SECOND_LINE}\nx = '\\x41'\n"
    prove_script(meant.encode(), meant, "ok.py")
    declared = "# -*- coding: unicode_escape -*-\n# \\x0aPWNED()\nx = 1\n"
    with pytest.raises(ReplayError, match=r"would be decoded as 'unicode_escape'"):
        prove_script(declared.encode(), declared, "a.py")
    with pytest.raises(ReplayError, match=r"first two lines are not the pinned ones"):
        prove_script(b"x = 1\n", "x = 1\n", "b.py")
    with pytest.raises(ReplayError, match=r"its text differs from the one meant"):
        prove_script(meant.replace("'\\x41'", "1").encode(), meant, "c.py")
    with pytest.raises(ReplayError, match=r"its text differs from the one meant"):
        prove_script(meant.encode() + b"\x00", meant, "d.py")
    with pytest.raises(ReplayError, match=r"does not compile"):
        prove_script(meant.encode() + b"\x00", meant + "\x00", "d.py")
    with pytest.raises(ReplayError, match=r"its bytes are not utf-8"):
        prove_script(meant.encode() + b"\xff", meant, "f.py")
    with pytest.raises(ReplayError, match=r"its encoding"):
        prove_script(b"# coding: no-such-codec\nx = 1\n", "x = 1\n", "e.py")


ATTACKS = {
    "codec in the fusion name": {"name": "fusion0 coding:unicode_escape", "recorded_at": "2026 \\x0aPWNED()\\x0a#"},
    "UTF-7 in the fusion name": {"name": "fusion0 coding:utf_7", "recorded_at": "2026 +AAo-PWNED()+AAo-#"},
    "string argument": {"name": "fusion0 coding:unicode_escape", "slot": "\\x22)\\x0a    PWNED()\\x0a    #"},
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_without_the_pinned_lines_the_proof_refuses_each_attack(
    attack: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old header (capture text on line 1): Python would decode the script with the declared
    codec, the proof sees it in the written bytes and keeps no file."""
    monkeypatch.setattr(repro, "pinned_header", lambda: [])
    data = copy.deepcopy(BASE)
    fields = ATTACKS[attack]
    data["fusions"][0]["name"] = fields["name"]
    data["environment"]["recorded_at"] = fields.get("recorded_at", "2026")
    data["fusions"][0]["definition"] = data["fusions"][0]["definition"].replace(STRING_SLOT, fields.get("slot", "x"))
    with pytest.raises(ReplayError, match=r"r\.py: not written: Python would not read it as the code fusiondiff wrote"):
        write_repros(_write(tmp_path, data), tmp_path / "r.py")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cap.json"]


SPECIAL = [
    "coding:unicode_escape",
    "coding=utf_7 ",
    "# -*- coding: latin-1 -*-",
    "\\x0aPWNED()\\x0a#",
    "+AAo-PWNED()+AAo-",
    "\nPWNED()\n",
    "\rPWNED()",
    "\x0cPWNED()",
    "\u2028PWNED()",
    "\x85PWNED()",
    "\x00",
    "\ud800",
    "\udc80",
    "\\x22)\\x0a    PWNED()\\x0a    #",
    "'); PWNED(); ('",
    '"""',
    "\\",
    "\x1b[2J",
]
TEXT = st.lists(st.one_of(st.sampled_from(SPECIAL), st.text(max_size=10)), min_size=1, max_size=4).map("".join)


def _text_paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(data, str):
        return [prefix]
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in _text_paths(v, (*prefix, k))]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in _text_paths(v, (*prefix, i))]
    return []


TARGETS = [*_text_paths(BASE), ("env key",), ("definition string",), ("file name",)]
"""Every text field of the capture, an NVFUSER_ variable's name, the definition's string argument
and the capture's file name."""


def _mutated(changes: list[tuple[tuple[Any, ...], str]]) -> tuple[dict[str, Any], str]:
    data, name = copy.deepcopy(BASE), "cap"
    slot = "x"
    for target, text in changes:
        if target == ("env key",):
            data["environment"]["nvfuser_env"] = {f"NVFUSER_{text}": "1"}
        elif target == ("definition string",):
            slot = text
        elif target == ("file name",):
            name = text.replace("/", "_").replace("\x00", "_")[:60]
            name = name if name not in ("", ".", "..") else "cap"
        else:
            parent = data
            for key in target[:-1]:
                parent = parent[key]
            parent[target[-1]] = text
    fusion = data["fusions"][0]
    if isinstance(fusion.get("definition"), str):
        fusion["definition"] = fusion["definition"].replace(STRING_SLOT, slot)
    return data, name


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(st.tuples(st.sampled_from(TARGETS), TEXT), min_size=1, max_size=3))
def test_any_text_anywhere_in_a_capture_becomes_no_code(
    changes: list[tuple[tuple[Any, ...], str]], tmp_path: Path, allowed: set[tuple[str, str]]
) -> None:
    data, name = _mutated(changes)
    try:
        os.fsencode(name)
    except UnicodeEncodeError:
        name = "cap"
    folder = Path(tempfile.mkdtemp(dir=tmp_path))  # hypothesis reuses tmp_path across examples
    try:
        (script,) = write_repros(_write(folder, data, name), folder / "r.py")
    except FusionDiffError as exc:
        # refused, with a message (the command line prints it as one escaped line), and nothing written
        assert str(exc)
        assert not (folder / "r.py").exists()
        return
    encoding, tree = _python_reads(script)
    assert encoding == "utf-8"
    assert script.read_bytes().split(b"\n", 2)[:2] == [ENCODING_LINE.encode(), SECOND_LINE.encode()]
    foreign = _identifiers(tree) - allowed
    assert not foreign, foreign
    assert PAYLOAD not in {i for _, i in _identifiers(tree)}
