"""Faults of the live side on the GPU (issue #12): a capture killed by a signal leaves no file or a
complete one; a replay script's left-over child processes are stopped with it; a capture whose GPU
runs out of memory says so in one line and keeps its records.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fusiondiff.io.store import load_capture

pytestmark = pytest.mark.gpu

QUICK = ["--samples", "10", "--warmup", "3"]

# Runs one Thunder fusion, says so through a file, then waits to be killed.
WAITING_SCRIPT = textwrap.dedent(
    """
    import sys, time
    import torch
    import thunder

    x = torch.randn(1024, 1024, device="cuda")
    jitted = thunder.jit(lambda x: (x * 2).sin())
    jitted(x)
    torch.cuda.synchronize()
    open(sys.argv[1], "w").write("ready")
    time.sleep(600)
    """
)

# A repro script whose fusion runs, then leaves a child behind that would outlive it.
FORKING_SCRIPT = textwrap.dedent(
    """
    import os, subprocess, sys
    import torch
    from nvfuser_direct import FusionDefinition, DataType

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(t0, t0))
    fd.execute([torch.randn(1 << 20, device="cuda")])
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    open({pidfile!r}, "w").write(str(child.pid))
    if os.fork() == 0:  # a forked copy of the script itself, too
        import time
        open({pidfile!r} + ".fork", "w").write(str(os.getpid()))
        time.sleep(600)
        os._exit(0)
    """
)

# Fills most of the GPU, then runs a fusion whose inputs fusiondiff cannot copy to time it.
CROWDED_SCRIPT = textwrap.dedent(
    """
    import torch
    import thunder

    total = torch.cuda.get_device_properties(0).total_memory
    n = int(total * 0.42) // 4
    x = torch.ones(n, device="cuda")
    jitted = thunder.jit(lambda x: x * 2 + 1)
    out = jitted(x)
    torch.cuda.synchronize()
    print("checksum", out[:1000].sum().item(), out[-1000:].sum().item())
    """
)


def _fusiondiff(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "fusiondiff", *args], capture_output=True, text=True, timeout=timeout
    )
    print(f"$ fusiondiff {' '.join(args)}\n[exit {result.returncode}]\n{result.stdout}{result.stderr}")
    return result


def _no_file_or_a_complete_one(path: Path) -> str:
    """What was left at ``path``: nothing, or a capture that loads; never a partial file or a temp."""
    leftovers = [p.name for p in path.parent.iterdir() if p.name != path.name and p.suffix != ".py"]
    leftovers = [n for n in leftovers if not n.startswith("ready")]
    assert leftovers == [], f"files left behind: {leftovers}"
    if not path.exists():
        return "no file"
    capture = load_capture(path)
    return f"a complete capture of {len(capture.fusions)} fusion(s)"


def _killed_during_capture(tmp_path: Path, sig: signal.Signals) -> tuple[subprocess.Popen, str, str]:
    script = tmp_path / "waiting.py"
    script.write_text(WAITING_SCRIPT)
    ready, output = tmp_path / "ready", tmp_path / "live.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fusiondiff", "capture", str(script), *QUICK, "-o", str(output), "--", str(ready)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while not ready.exists():
        assert proc.poll() is None, f"the capture ended before the script was ready: {proc.communicate()}"
        assert time.monotonic() < deadline, "the script never became ready"
        time.sleep(0.2)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    print(f"[{sig.name}: exit {proc.returncode}]\n{out}{err}")
    return proc, err, _no_file_or_a_complete_one(output)


def test_sigterm_during_capture_leaves_no_partial_file_and_no_traceback(tmp_path):
    proc, err, left = _killed_during_capture(tmp_path, signal.SIGTERM)
    print("SIGTERM left", left)
    assert proc.returncode == 143
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "fusiondiff capture: terminated"


def test_sigkill_during_capture_leaves_no_partial_file(tmp_path):
    proc, _, left = _killed_during_capture(tmp_path, signal.SIGKILL)
    print("SIGKILL left", left)
    assert proc.returncode == -signal.SIGKILL


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0): it is gone as far as the user is concerned
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_replay_stops_the_children_a_script_leaves_behind(tmp_path):
    pidfile = tmp_path / "child.pid"
    script = tmp_path / "forking.py"
    script.write_text(FORKING_SCRIPT.format(pidfile=str(pidfile)))
    result = _fusiondiff("replay", str(script), *QUICK, "-o", str(tmp_path / "replay.json"))
    assert result.returncode == 0, result.stderr
    assert load_capture(tmp_path / "replay.json").fusions
    pids = [int(p.read_text()) for p in (pidfile, Path(f"{pidfile}.fork")) if p.exists()]
    assert len(pids) == 2, "both children started"
    time.sleep(1)
    assert [pid for pid in pids if _alive(pid)] == [], "a child of the replay script outlived it"


def test_capture_out_of_gpu_memory_is_one_line_and_keeps_the_record(tmp_path):
    script = tmp_path / "crowded.py"
    script.write_text(CROWDED_SCRIPT)
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0, plain.stderr
    output = tmp_path / "live.json"
    result = _fusiondiff("capture", str(script), *QUICK, "-o", str(output))
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("fusiondiff capture: error")]
    assert len(errors) == 1 and "ran out of memory" in errors[0], result.stderr
    assert "Traceback" not in result.stderr
    assert plain.stdout.splitlines()[-1] in result.stdout, "the capture changed what the script computed"
    capture = load_capture(output)
    untimed = [f for f in capture.fusions if f.timing.count == 0]
    assert untimed and all(any("ran out of memory" in w for w in f.warnings) for f in untimed)
    print(json.dumps({"fusions": len(capture.fusions), "untimed": len(untimed)}))


# A script written on a machine with more GPUs: it pins cuda:7 and device=7.
PINNED_SCRIPT = textwrap.dedent(
    """
    import torch
    from nvfuser_direct import FusionDefinition, DataType

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.exp(t0))
    x = torch.randn(256, 256, device="cuda:7")
    fd.execute([x], device=7)
    """
)


def test_script_pinning_a_gpu_this_machine_lacks_replays_on_the_visible_one(tmp_path):
    """Issue #16: the fusion does not depend on the ordinal; the user is told once, in one warning
    (a note, wrapped to stderr's width like every note)."""
    script = tmp_path / "pinned.py"
    script.write_text(PINNED_SCRIPT)
    output = tmp_path / "replay.json"
    result = _fusiondiff("replay", str(script), *QUICK, "-o", str(output))
    assert result.returncode == 0, result.stderr
    flat = " ".join(result.stderr.split())  # the note read with its line breaks as spaces
    assert flat.count("cuda:7") == 1, result.stderr
    assert "pins cuda:7, which this machine lacks" in flat and "replayed on cuda:0" in flat, result.stderr
    (fusion,) = load_capture(output).fusions
    assert fusion.kernels and fusion.device_index == 0
