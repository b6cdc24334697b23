"""What the zoo scenarios share: the fusions they run, and the two ways a side is recorded.

A scenario module defines ``CAUSE`` (the differ's rule id it plants, ``None`` for the control),
``STORY`` (one sentence), and ``live(out)`` / ``reconstructed(out)`` writing ``out/live.json`` and
``out/replay.json``. ``python -m repro.zoo.<scenario> OUTDIR`` records both, each in a process of its own.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fusiondiff.records.model import TimingProtocol
from fusiondiff.records.options import RecordingOptions

PROTOCOL = TimingProtocol(warmup=5, samples=20, l2_mode="cold")

RMSNORM = """
def define_rmsnorm(fd):
    T0 = fd.define_tensor(shape=[4, 1024, 4096], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T8 = fd.ops.broadcast_in_dim(T3, shape=[4, 1024, 4096], broadcast_dims=[2])
    T10 = fd.ops.sum(fd.ops.mul(T2, T2), dims=[2], keepdim=False, dtype=DataType.Null)
    T15 = fd.ops.broadcast_in_dim(T10, shape=[4, 1024, 1], broadcast_dims=[0, 1])
    T18 = fd.ops.mul(T15, fd.ops.reciprocal(fd.define_scalar(4096.0, dtype=DataType.Double)))
    T21 = fd.ops.rsqrt(fd.ops.add(T18, fd.define_scalar(1e-05, dtype=DataType.Double)))
    T26 = fd.ops.broadcast_in_dim(T21, shape=[4, 1024, 4096], broadcast_dims=[0, 1, 2])
    T29 = fd.ops.cast(fd.ops.mul(fd.ops.mul(T2, T26), T8), dtype=DataType.BFloat16)
    fd.add_output(T21)
    fd.add_output(T29)
"""
"""The seed's RMSNorm fusion, as source so that scripts written by the scenarios can embed it."""


def build(definition_source: str, function: str) -> Any:
    """A FusionDefinition built from ``definition_source`` (which defines ``function(fd)``)."""
    from nvfuser_direct import DataType, FusionDefinition

    namespace: dict[str, Any] = {"DataType": DataType}
    exec(definition_source, namespace)
    with FusionDefinition() as fd:
        namespace[function](fd)
    return fd


def rmsnorm_inputs(offset: int = 0) -> list[Any]:
    import torch

    x = torch.randn(4 * 1024 * 4096 + offset, dtype=torch.bfloat16, device="cuda")[offset:].view(4, 1024, 4096)
    return [x, torch.randn(4096, dtype=torch.bfloat16, device="cuda")]


def capture_live(out: Path, run: Callable[[], object], protocol: TimingProtocol = PROTOCOL, source: str = "") -> Path:
    """Record ``run()`` with ``fusiondiff.capture`` into ``out/live.json``."""
    from fusiondiff.front.live import capture

    with capture(
        out / "live.json", options=RecordingOptions(protocol=protocol), source=source or f"zoo {out.name}: live side"
    ) as cap:
        run()
    assert cap.path is not None
    return cap.path


def replay_text(out: Path, script: str, protocol: TimingProtocol = PROTOCOL) -> Path:
    """Write ``script`` to ``out/reconstructed.py`` and replay it in a fresh process."""
    from fusiondiff.replay.runner import replay_script

    path = out / "reconstructed.py"
    path.write_text(script)
    return replay_script(str(path), output=str(out / "replay.json"), options=RecordingOptions(protocol=protocol))


def nvfuser_repro_of_live(out: Path) -> str:
    """nvFuser's own repro script of the live side's first fusion (what bug reports carry)."""
    from fusiondiff.io.store import load_capture

    script = load_capture(out / "live.json").fusions[0].repro_script
    if not script:
        raise RuntimeError("the live capture has no nvFuser repro script")
    return script


def replay_fusiondiff_repro(out: Path, protocol: TimingProtocol = PROTOCOL) -> Path:
    """fusiondiff's faithful repro of the live side, replayed in a fresh process."""
    from fusiondiff.replay.repro import write_repros
    from fusiondiff.replay.runner import replay_script

    script = write_repros(out / "live.json", out / "reconstructed.py")[0]
    return replay_script(str(script), output=str(out / "replay.json"), options=RecordingOptions(protocol=protocol))


SIDES = ("live", "reconstructed")
"""The two sides of a scenario, each recorded in a process of its own: a replay made while the live
process still held its CUDA context would run beside another process, a second cause the scenario
did not plant (fusiondiff reports it as ``other_processes``)."""


def scenario_main(live: Callable[[Path], object], reconstructed: Callable[[Path], object]) -> None:
    """Entry point of a scenario module: ``python -m repro.zoo.<scenario> OUTDIR [live|reconstructed]``.

    Without a side, each side runs in a fresh process of its own, the live one first."""
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    side = sys.argv[2] if len(sys.argv) > 2 else None
    if side is None:
        module = sys.modules["__main__"].__spec__.name  # type: ignore[union-attr]
        for name in SIDES:
            subprocess.run([sys.executable, "-m", module, str(out), name], check=True)
    elif side == "live":
        live(out)
    elif side == "reconstructed":
        reconstructed(out)
    else:
        raise SystemExit(f"unknown side {side!r}: live or reconstructed")
