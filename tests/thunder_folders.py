"""Folders built in the tests as Thunder 0.2.6's report functions write them, not recorded.

They mimic ``thunderfx_benchmark_report(..., compare_fusion=True, time_rtol=0.0)`` (``graphN/``
with each FX graph split's scripts and ``graphN/nvfusion_reports/`` with each nvFusion region's
``<region>_nvfuser_<Timer>.py`` and ``<region>_torchcompile_<Timer>.py``, the "Benchmark results:"
docstring at the end) and ``save_thunderfx_repros(..., save_fusion=True)`` (``graphN/fusion_reports/``
with ``<region>_repro_nvfuser.py``): the file names, the script shapes (nvFuser's repro print, then
Thunder's timing lines as ``ThunderFusionReport.write_nvfuser_benchmark`` writes them, formatted with
ruff as Thunder's ``format_python_file`` does) and the printed lines of ``check_timing``. The nvFuser
definition is the one nvFuser printed on the H100 (``tests/data/h100/offset_thunderfx_4096``); the
second region's is a small one written here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"
RECORDED_PRINT = DATA / "h100" / "offset_thunderfx_4096" / "nvfuser_repro.py"

SMALL_PRINT = """\
# CUDA devices:
#  0: NVIDIA H100 80GB HBM3
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.ops.relu(tv0)
    fd.add_output(tv1)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((1024,), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
"""

REGIONS = {
    "graph0_thunder_0_nvFusion0_forward": "recorded",
    "graph1_thunder_0_nvFusion0_forward": "small",
}
"""The regions of the built folders: two FX graphs (nested folders), one nvFusion region each."""

FIGURES_US = {
    ("graph0_thunder_0_nvFusion0_forward", "WallTime"): (71.204, 66.018),
    ("graph0_thunder_0_nvFusion0_forward", "KernelTime"): (61.337, 60.113),
    ("graph1_thunder_0_nvFusion0_forward", "WallTime"): (9.881, 8.502),
    ("graph1_thunder_0_nvFusion0_forward", "KernelTime"): (1.725, 1.436),
}
"""(torchcompile, nvfuser) medians in microseconds printed for each region and timer."""


def nvfuser_print(kind: str) -> str:
    """What nvFuser's ``repro_script_for`` prints for the region (ends with ``fd.execute(inputs)``)."""
    text = RECORDED_PRINT.read_text() if kind == "recorded" else SMALL_PRINT
    assert text.rstrip().endswith("fd.execute(inputs)")
    return text.rstrip() + "\n"


def bsym_docstring(region: str) -> str:
    """The bound symbol Thunder prints in its docstring (a shortened stand-in: Thunder's own is longer)."""
    name = region.split("_")[3]
    return f"# {name} (a bound symbol of Thunder's trace)\n[t0] = {name}(x, r, w)"


def check_timing_line(region: str, timer: str) -> str:
    """The line Thunder's ``check_timing`` prints for the region under ``timer`` at ``time_rtol=0``."""
    torchcompile, nvfuser = FIGURES_US[(region, timer)]
    return (
        f"Benchmark {timer} for **{region}** requires investigation: torchcompile({torchcompile:.3f} us) "
        f"and nvfuser({nvfuser:.3f} us) is not close (rtol=0.0, atol=0.0)\n"
    )


def benchmark_script(region: str, kind: str, timer: str) -> str:
    """``ThunderFusionReport.write_nvfuser_benchmark``'s script for the region, before formatting."""
    repro = nvfuser_print(kind).replace("fd.execute(inputs)\n", "")
    timing = (
        f'{timer}(threshold=0.1, min_run_time=0.01, max_run_time=10.0).time("nvfuser_fn(inputs)", '
        'globals={"nvfuser_fn":nvfuser_fn, "inputs": inputs})'
    )
    extra = f"Benchmark results:\n{check_timing_line(region, timer)}\n"
    return (
        f"from thunder.dynamo.benchmark_utils import {timer}\n{repro}\nnvfuser_fn = fd.execute\n"
        f'measurement = {timing}\nprint(measurement)\n"""\n{bsym_docstring(region)}\n\n{extra}"""\n'
    )


def inductor_benchmark_script(region: str, timer: str) -> str:
    """``write_inductor_benchmark``'s script, in outline (it is skipped by its name)."""
    return (
        "import torch\n\ndef nvFusion0(x):\n    return x\n\ninputs = [torch.randn(4)]\n"
        f"torch_compiled_callable = torch.compile(nvFusion0)\nfrom thunder.dynamo.benchmark_utils import {timer}\n"
        f'measurement = {timer}().time("torch_compiled_callable(*inputs)")\nprint(measurement)\n'
    )


def graph_script(backend: str) -> str:
    """An FX graph split's script in outline (``write_benchmark`` / ``write_repro``; skipped by its name)."""
    return f"# a {backend} script of an FX graph\nimport torch\n\nclass DynamoModule(torch.nn.Module):\n    pass\n"


def format_like_thunder(paths: list[Path]) -> None:
    """``ruff format`` over the written scripts, as Thunder's ``format_python_file`` does."""
    subprocess.run([sys.executable, "-m", "ruff", "format", "-q", *map(str, paths)], check=True)


def build_report_folder(root: Path) -> Path:
    """``thunderfx_benchmark_report(..., compare_fusion=True, time_rtol=0.0)``'s folder under
    ``root/report``, and what it printed in ``root/report.txt``; returns the folder."""
    folder = root / "report"
    written: list[Path] = []
    stream = []
    for region, kind in REGIONS.items():
        graph = region.split("_")[0]
        split = "_".join(region.split("_")[:3])
        for timer in ("WallTimeWithMemoryUsage", "KernelTime"):
            for backend in ("inductor_backend", "thunder"):
                written.append(_write(folder / graph / f"{split}_{backend}_{timer}.py", graph_script(backend)))
        for timer in ("WallTime", "KernelTime"):
            reports = folder / graph / "nvfusion_reports"
            written.append(_write(reports / f"{region}_nvfuser_{timer}.py", benchmark_script(region, kind, timer)))
            written.append(
                _write(reports / f"{region}_torchcompile_{timer}.py", inductor_benchmark_script(region, timer))
            )
            stream.append(check_timing_line(region, timer))
            stream.append(f"The scripts are saved: {region}_nvfuser_{timer}.py, {region}_torchcompile_{timer}.py\n\n")
    format_like_thunder(written)
    (root / "report.txt").write_text("".join(stream))
    return folder


def build_repros_folder(root: Path) -> Path:
    """``save_thunderfx_repros(..., save_fusion=True)``'s folder under ``root/repros``."""
    folder = root / "repros"
    written = []
    for region, kind in REGIONS.items():
        graph = region.split("_")[0]
        split = "_".join(region.split("_")[:3])
        written.append(_write(folder / graph / f"{split}.py", graph_script("thunder")))
        repro = f'{nvfuser_print(kind)}\n"""\n{bsym_docstring(region)}\n"""\n'
        written.append(_write(folder / graph / "fusion_reports" / f"{region}_repro_nvfuser.py", repro))
    format_like_thunder(written)
    return folder


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (links not followed) and its bytes: to see nothing was written there."""
    found = {}
    for top, _, files in os.walk(folder):  # links to folders are never entered
        for name in files:
            path = Path(top) / name
            if not path.is_symlink():
                found[str(path.relative_to(folder))] = path.read_bytes()
    return found
