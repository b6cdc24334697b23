"""Recompute the block statistics a capture holds from its own CTA arrays, and write it back.

    python3 repro/blocks/restat.py CAPTURE.json [...]

For captures recorded before a statistic's definition changed (``ctas_at_once`` became the median
over SMs of each SM's most CTAs at once, after the H200 showed a few SMs per run with more CTA
intervals overlapping than the SM can hold; it was ``max_resident_per_sm``, the largest over SMs).
Only ``runs`` of each measured kernel change; each is
recomputed by ``fusiondiff.records.block_stats.run_stats`` from the arrays the capture's file holds (its
sha256 checked), so the statistics are again what the arrays give.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from fusiondiff.io.store import _parse_capture, _read_bounded, save_capture  # noqa: E402
from fusiondiff.io.timelines import _checked, _files, _kernel_arrays, timeline_file  # noqa: E402
from fusiondiff.records.block_stats import run_stats  # noqa: E402


def restat(path: Path) -> None:
    # the field was named max_resident_per_sm (and held the largest over SMs) when these were recorded
    raw = _read_bounded(path).replace(b'"max_resident_per_sm":', b'"ctas_at_once":')
    capture = _parse_capture(path, [raw])  # not load_capture: the stored statistics are about to change
    files = {p: _checked(p, sha, path) for p, sha in _files(capture, path).items()}
    fusions = []
    for fusion in capture.fusions:
        timeline = fusion.sm_timeline
        file = None if timeline is None else timeline_file(path, timeline)
        if timeline is None or file is None:
            fusions.append(fusion)
            continue
        kernels = []
        for kernel in timeline.kernels:
            if kernel.measured:
                prefix = kernel.arrays
                arrays = files[file]
                start, end, sm = (arrays[f"{prefix}.{n}"] for n in ("start_ns", "end_ns", "sm"))
                sm_end = arrays.get(f"{prefix}.sm_end")
                runs = tuple(
                    run_stats(start[r], end[r], sm[r], None if sm_end is None else sm_end[r])
                    for r in range(start.shape[0])
                )
                kernel = dataclasses.replace(kernel, runs=runs)
                _kernel_arrays(arrays, kernel, str(file))  # the arrays give these statistics now
            kernels.append(kernel)
        fusions.append(dataclasses.replace(fusion, sm_timeline=dataclasses.replace(timeline, kernels=tuple(kernels))))
    save_capture(dataclasses.replace(capture, fusions=tuple(fusions)), path)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        restat(Path(name))
        print(f"restat {name}")
