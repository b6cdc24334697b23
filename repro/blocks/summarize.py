"""Print what the block-level timelines of captures hold: per kernel, measured or refused, the
probe's overhead and the statistics; then the overhead over all measured kernels (median, worst).

    python3 repro/blocks/summarize.py live.json [replay.json ...]
"""

from __future__ import annotations

import statistics
import sys

from fusiondiff.io.store import load_capture
from fusiondiff.records.model import traced_name


def main(paths: list[str]) -> None:
    overheads = []
    for path in paths:
        capture = load_capture(path)
        print(f"== {path}: {len(capture.fusions)} fusion(s)")
        for fusion in capture.fusions:
            timeline = fusion.sm_timeline
            name = traced_name(fusion.name, fusion.trace)
            if timeline is None:
                print(f"  {name}: no timeline")
                continue
            if timeline.refusal is not None:
                print(f"  {name}: refused {timeline.refusal.code}: {timeline.refusal.detail}")
            for k in timeline.kernels:
                if k.refusal is not None:
                    print(f"  {name} {k.kernel}: refused {k.refusal.code}: {k.refusal.detail}")
                    continue
                o = k.overhead
                overheads.append(o)
                print(
                    f"  {name} {k.kernel}: {k.runs[0].ctas} CTAs, {k.warps_per_cta} warps, SMs {k.stat('sms_used'):.0f}, "
                    f"waves {k.stat('waves'):.0f}, most CTAs/SM {k.stat('max_ctas_per_sm'):.0f}, resident {k.stat('ctas_at_once'):.0f}, "
                    f"span {k.stat('span_ns') / 1000:.2f} us, tail {k.stat('tail_ns') / 1000:.2f} us, "
                    f"CTA p50 {k.stat('cta_p50_ns') / 1000:.2f} p99 {k.stat('cta_p99_ns') / 1000:.2f} us, "
                    f"first start max {k.stat('first_start_max_ns') / 1000:.2f} us, "
                    f"plain {k.plain_median_ns / 1000:.2f} us, probe {k.instrumented_median_ns / 1000:.2f} us "
                    f"({100 * o:+.1f} %), regs {k.registers_plain}->{k.registers_instrumented}, res {k.timer_resolution_ns} ns"
                )
    if overheads:
        print(
            f"overhead over {len(overheads)} measured kernel(s): median {100 * statistics.median(overheads):+.1f} %, "
            f"worst {100 * max(overheads):+.1f} %, best {100 * min(overheads):+.1f} %"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
