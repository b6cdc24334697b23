"""A repro script pinned to a CUDA ordinal the machine lacks is moved to one it has (issue #16).

The scripts are fusiondiff's own faithful repros, rendered here from rank-1 versions of the
Pythia capture recorded on an H200 (the rank change is made in code, stated below), and a script
in the form nvFuser's ``repro_script_for`` writes. No GPU: the decision and the rewrite are text.
"""

from __future__ import annotations

import dataclasses
import sys
import textwrap
from pathlib import Path

import pytest

from fusiondiff.io.store import load_capture
from fusiondiff.records.errors import ReplayError
from fusiondiff.replay import child, runner
from fusiondiff.replay.devices import device_mapping, mapping_warnings, pinned_ordinals, remap_devices
from fusiondiff.replay.repro import render_repro

PYTHIA = Path(__file__).parent.parent / "data" / "fidelity" / "pythia" / "live.json"

NVFUSER_STYLE = """\
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[4, 1024], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.ops.relu(T0)
    fd.add_output(T1)

with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((4, 1024), dtype=torch.bfloat16, device='cuda:1'),  # device 'cuda:1'
    torch.randn(3, device=torch.device("cuda", 1)).cuda(1).to(1),
]
torch.cuda.set_device(1)
with torch.cuda.device(1):
    fd.execute(inputs, device=1)
fd.execute(inputs, device="cuda:0")
x = torch.zeros(2, device=2)
"""


def _rank1_repro() -> str:
    """The faithful repro of pythia's first fusion as rank 1 would have recorded it: SYNTHETIC
    rank change (every input on cuda:1, the fusion's device_index 1), made here."""
    capture = load_capture(PYTHIA)
    f = capture.fusions[0]
    f = dataclasses.replace(
        f,
        device_index=1,
        inputs=tuple(dataclasses.replace(t, device="cuda:1") if t.kind == "tensor" else t for t in f.inputs),
    )
    return render_repro(f, capture.environment, None, capture_name="live.rank1.json")


def test_every_literal_form_of_an_ordinal_is_found():
    assert pinned_ordinals(NVFUSER_STYLE) == {0, 1, 2}
    assert pinned_ordinals(_rank1_repro()) == {1}


def test_a_missing_ordinal_moves_to_the_current_device_and_the_rest_stays():
    assert device_mapping({0, 1, 2}, device_count=1, chosen=None, current=0) == {1: 0, 2: 0}
    assert device_mapping({0, 1}, device_count=2, chosen=None) == {}
    assert device_mapping({1}, device_count=0, chosen=None) == {}  # no GPU: the recorder says so


def test_device_moves_every_ordinal_to_the_one_chosen():
    assert device_mapping({0, 1, 2}, device_count=2, chosen=1) == {0: 1, 2: 1}
    with pytest.raises(ReplayError, match="--device 2: this machine has devices 0-1 visible"):
        device_mapping({0}, device_count=2, chosen=2)
    with pytest.raises(ReplayError, match="no CUDA device"):
        device_mapping({0}, device_count=0, chosen=0)


def test_rewrite_keeps_lines_comments_and_other_ordinals():
    moved = remap_devices(NVFUSER_STYLE, {1: 0, 2: 0})
    assert pinned_ordinals(moved) == {0}
    assert len(moved.splitlines()) == len(NVFUSER_STYLE.splitlines())
    assert "# device 'cuda:1'" in moved  # a comment is not code
    assert "device='cuda:0'), " in moved and 'torch.device("cuda", 0)).cuda(0).to(0)' in moved
    assert "torch.cuda.set_device(0)" in moved and "fd.execute(inputs, device=0)" in moved
    assert "torch.zeros(2, device=0)" in moved
    for before, after in zip(NVFUSER_STYLE.splitlines(), moved.splitlines(), strict=True):
        assert before.replace("1", "0").replace("2", "0") == after.replace("1", "0").replace("2", "0")
    compile(moved, "<moved>", "exec")


def test_the_faithful_repro_of_rank_1_runs_on_a_one_gpu_machine():
    source = _rank1_repro()
    mapping = device_mapping(pinned_ordinals(source), device_count=1, chosen=None)
    moved = remap_devices(source, mapping)
    assert pinned_ordinals(moved) == {0}
    assert "'cuda:1'" not in moved and "device=1" not in moved
    assert "device=0" in moved or "'cuda:0'" in moved
    # the exact text otherwise: only the ordinals changed
    assert moved.replace("cuda:0", "cuda:1").replace("device=0", "device=1") == source
    (warning,) = mapping_warnings("r1.py", mapping, 1, None)
    assert warning == (
        "r1.py pins cuda:1, which this machine lacks (1 visible CUDA device): replayed on cuda:0; --device N chooses"
    )


def test_non_ascii_text_before_a_literal_does_not_shift_the_rewrite():
    source = "label = 'é→'; x = torch.ones(1, device='cuda:3')  # ünïcode\n"
    assert remap_devices(source, {3: 0}) == "label = 'é→'; x = torch.ones(1, device='cuda:0')  # ünïcode\n"


def test_the_child_moves_ordinals_and_warns(monkeypatch):
    source, warnings = child._on_existing_device(NVFUSER_STYLE, "s.py", count=2, chosen=None, current=0)
    assert pinned_ordinals(source) == {0, 1}
    assert warnings == [
        "s.py pins cuda:2, which this machine lacks (2 visible CUDA devices): replayed on cuda:0; --device N chooses"
    ]
    source, warnings = child._on_existing_device(NVFUSER_STYLE, "s.py", count=2, chosen=1, current=1)
    assert pinned_ordinals(source) == {1}
    assert warnings == [
        "s.py pins cuda:0: replayed on cuda:1 (--device 1)",
        "s.py pins cuda:2: replayed on cuda:1 (--device 1)",
    ]


def test_the_device_reaches_the_child_and_a_negative_one_is_refused(tmp_path, monkeypatch):
    script = tmp_path / "s.py"
    script.write_text("x = 1\n")
    seen = {}

    def fake_run_child(params, timeout_s, progress, log_file, command=None, child_env=None, phases=False, relay=None):  # noqa: ANN001
        seen.update(params)
        return child.ReplayOutcome(status="ok", written=str(tmp_path / "out.json"))

    monkeypatch.setattr(runner, "_run_child", fake_run_child)
    monkeypatch.setattr(runner.live_side, "require", lambda command, needs=(): None)  # torch and nvFuser: faked too
    runner.replay_scripts([str(script)], output=str(tmp_path / "out.json"), device=1)
    assert seen["device"] == 1
    with pytest.raises(ReplayError, match="--device -1"):
        runner.replay_scripts([str(script)], output=str(tmp_path / "out.json"), device=-1)


@pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")
def test_a_script_failure_keeps_its_traceback_in_the_log_beside_the_capture(tmp_path):
    """The replay child's whole output goes to ``<output>.log``; a script's own exception is
    printed there by ``_run_one`` (the fake child runs exactly that function)."""
    script = tmp_path / "bad.py"
    script.write_text("def f():\n    raise ValueError('planted')\n\nf()\n")
    fake = tmp_path / "fake_child.py"
    fake.write_text(
        textwrap.dedent(
            f"""\
            from fusiondiff.replay.child import _run_one
            path = {str(script)!r}
            print(_run_one(path, compile(open(path).read(), path, "exec")))
            """
        )
    )
    log = runner.log_path_for(tmp_path / "replay.json")
    outcome = runner._run_child(
        {"scripts": [str(script)]},
        60.0,
        lambda message: None,
        log,
        command=lambda params: [sys.executable, str(fake)],
        child_env={"PYTHONPATH": str(Path(__file__).parent.parent.parent)},
    )
    assert outcome.status == "error"  # the fake child reports no status: the log is what is checked
    text = log.read_text()
    assert log == tmp_path / "replay.log"
    assert "Traceback (most recent call last)" in text and "ValueError: planted" in text
    assert f'File "{script}", line 2, in f' in text
    assert "the script's own code failed at line 2: ValueError: planted" in text


def test_the_command_line_passes_device(tmp_path, monkeypatch):
    from fusiondiff.front.cli import main

    seen = {}

    def fake_replay_scripts(scripts, **kwargs):  # noqa: ANN001, ANN003
        seen.update(kwargs)
        return tmp_path / "out.json"

    monkeypatch.setattr(runner, "replay_scripts", fake_replay_scripts)
    script = tmp_path / "s.py"
    script.write_text("x = 1\n")
    assert main(["replay", str(script), "-o", str(tmp_path / "out.json"), "--device", "1"]) == 0
    assert seen["device"] == 1
