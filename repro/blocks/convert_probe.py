"""Turn the buffers the block-level probe recorded on the H200 (2026-12-01) into test data.

    python3 repro/blocks/convert_probe.py PROBE_DIR tests/data/blocks

PROBE_DIR is what ``repro/blocks/probe.py`` wrote (``probe.json``, ``sources/``). Each probe
buffer is read as raw bytes out of its ``torch.save`` archive (``data/0``: the int64 storage; the
archive's pickle is never loaded), decoded with the probe's own record layout (its first layout:
8 words per CTA, ``start, end (atomicMax), start clock, end clock, sm | rank << 32, end sm + 1,
warps ended, cluster``), checked (every CTA wrote a start, every warp its end), and written:

- ``probe/``: ``probe.json`` as recorded, each buffer's raw bytes (``buffers/*.i64.gz``) and the
  full sources nvFuser gave (``sources/*.cu.gz``);
- ``seed/``: ``tests/data/offset/live.json`` (the seed RMSNorm, activation at storage offset 1) and
  ``tests/data/offset/replay_nvfuser.json`` (nvFuser's own repro replayed), each given the block
  timeline the probe recorded for its kernel (``rmsnorm_offset1_after_aligned`` and ``rmsnorm``);
- ``same_kernel/``: the replay's record twice, with the timelines of two probe runs of its kernel
  (``rmsnorm`` and ``rmsnorm_ws``: the enable option made no other kernel).

The timelines' plain and instrumented medians are the probe's (same process, fusiondiff's protocol,
30 cold-L2 samples); the records' own samples stay those of their captures (2026-11-30).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import shutil
import sys
import zipfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from fusiondiff.io.store import load_capture, write_capture  # noqa: E402
from fusiondiff.io.timelines import compact  # noqa: E402
from fusiondiff.records.block_stats import run_stats, timer_resolution_ns  # noqa: E402
from fusiondiff.records.blocks import FusionTimeline, KernelTimeline  # noqa: E402

KERNEL = "nvfuser_inner_persistent_f0_c1_r0_g0"
MAX_OVERHEAD = 0.35
"""The first probe layout cost up to 33 % on the offset kernel (16 warps contending for one word);
the fixtures keep its timelines under this threshold, which their capture says."""
NOTE = (
    "block timeline converted by repro/blocks/convert_probe.py from repro/blocks/probe.py's buffers (the "
    "probe's first record layout, H200, 2026-12-01), not recorded by --sm-timeline"
)


def raw_buffer(path: Path) -> np.ndarray:
    with zipfile.ZipFile(path) as archive:
        name = next(n for n in archive.namelist() if n.endswith("/data/0"))
        return np.frombuffer(archive.read(name), dtype="<i8").copy()


def decode_v1(words: np.ndarray, warps: int) -> dict[str, np.ndarray]:
    header, records = words[:8], words[8:].reshape(-1, 8)
    assert header[0] == 0 and header[1] == records.shape[0], header
    assert (records[:, 0] != 0).all(), "a CTA wrote no start"
    assert (records[:, 6] == warps).all(), "a warp wrote no end"
    origin = records[:, 0].min()
    return {
        "start_ns": records[:, 0] - origin,
        "end_ns": records[:, 1] - origin,
        "sm": records[:, 4] & 0xFFFFFFFF,
        "sm_end": records[:, 5] - 1,
    }


def timeline(case: str, probe: dict, sources: Path) -> tuple[FusionTimeline, dict[str, np.ndarray]]:
    result = probe[case]
    plain, inst = result["plain_medians"][KERNEL], result["instrumented_medians"][KERNEL]
    warps = math.ceil(math.prod(plain["block"]) / 32)
    arrays = decode_v1(raw_buffer(sources / f"{case}.{KERNEL}.buffer.pt"), warps)
    stats = run_stats(arrays["start_ns"], arrays["end_ns"], arrays["sm"], arrays["sm_end"])
    kernel = KernelTimeline(
        kernel=KERNEL,
        order=0,
        runs=(stats,),
        warps_per_cta=warps,
        plain_median_ns=plain["median_ns"],
        instrumented_median_ns=inst["median_ns"],
        registers_plain=plain["registers"],
        registers_instrumented=inst["registers"],
        timer_resolution_ns=timer_resolution_ns(arrays["start_ns"]),
        arrays="f0.k0",
    )
    stored = {
        "f0.k0.start_ns": compact(arrays["start_ns"][None, :]),
        "f0.k0.end_ns": compact(arrays["end_ns"][None, :]),
        "f0.k0.sm": compact(arrays["sm"][None, :], "I16"),
    }
    if (arrays["sm_end"] != arrays["sm"]).any():
        stored["f0.k0.sm_end"] = compact(arrays["sm_end"][None, :], "I16")
    fusion = FusionTimeline(
        runs=1, kernels=(kernel,), outputs_identical=result["instrumented_outputs_equal"], max_overhead=MAX_OVERHEAD
    )
    return fusion, stored


def with_timeline(source: Path, case: str, probe: dict, sources: Path, target: Path) -> None:
    capture = load_capture(source)
    fusion_timeline, arrays = timeline(case, probe, sources)
    fusions = (dataclasses.replace(capture.fusions[0], sm_timeline=fusion_timeline), *capture.fusions[1:])
    capture = dataclasses.replace(capture, fusions=fusions, warnings=(*capture.warnings, NOTE))
    target.parent.mkdir(parents=True, exist_ok=True)
    write_capture(capture, target, timelines=arrays)


def main(probe_dir: Path, out: Path) -> None:
    probe = json.loads((probe_dir / "probe.json").read_text())
    sources = probe_dir / "sources"
    kept = out / "probe"
    (kept / "buffers").mkdir(parents=True, exist_ok=True)
    (kept / "sources").mkdir(parents=True, exist_ok=True)
    shutil.copy(probe_dir / "probe.json", kept / "probe.json")
    for pt in sorted(sources.glob("*.buffer.pt")):
        name = pt.name.removesuffix(".buffer.pt")
        (kept / "buffers" / f"{name}.i64.gz").write_bytes(gzip.compress(raw_buffer(pt).tobytes(), mtime=0))
    for cu in (
        "rmsnorm.session.cu",
        "dependent_reductions.session.cu",
        "rope_resize.session.cu",
        "two_reductions.session.cu",
    ):
        (kept / "sources" / f"{cu}.gz").write_bytes(gzip.compress((sources / cu).read_bytes(), mtime=0))
    data = HERE.parent.parent / "tests" / "data" / "offset"
    with_timeline(data / "live.json", "rmsnorm_offset1_after_aligned", probe, sources, out / "seed" / "live.json")
    with_timeline(data / "replay_nvfuser.json", "rmsnorm", probe, sources, out / "seed" / "replay.json")
    with_timeline(data / "replay_nvfuser.json", "rmsnorm", probe, sources, out / "same_kernel" / "a.json")
    with_timeline(data / "replay_nvfuser.json", "rmsnorm_ws", probe, sources, out / "same_kernel" / "b.json")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
