"""``fusiondiff sm-timeline LIVE -o OUT``: the block level of a capture recorded after the fact,
by replaying every fusion on the capture's own inputs (the exact tensors of ``--save-inputs``, or
tensors rebuilt from their recorded layout) in one fresh process with ``--sm-timeline``, and giving
each record of the capture the timeline of its replay.

A capture taken with ``fusiondiff capture --sm-timeline`` has its timelines from the session
itself (what other work held the GPU then shows); this is for a capture taken without, or when the
session cannot be run again. A replay record is given to a capture record only when it ran the
same definition on the same input signature and launched the same kernels with the same grid and
block; otherwise the record's timeline says why it has none.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Sequence
from pathlib import Path

from fusiondiff.records.blocks import FusionTimeline, Refusal
from fusiondiff.records.model import Capture, FusionRecord
from fusiondiff.records.options import RecordingOptions
from fusiondiff.records.progress import Progress, silent

NOTE = "block timelines recorded by `fusiondiff sm-timeline`: each fusion replayed on these inputs in a fresh process"


def _launches(fusion: FusionRecord) -> list[tuple[object, ...]]:
    return [(k.normalized_name, k.launch.grid, k.launch.block) for k in sorted(fusion.kernels, key=lambda k: k.order)]


def attach(live: Capture, replay: Capture) -> Capture:
    """``live`` with each record given the timeline of the replay record that ran the same (see the
    module docstring); file references stay the replay's (:func:`~fusiondiff.io.timelines.copied`
    writes them beside the new capture)."""
    unused = list(range(len(replay.fusions)))
    fusions = []
    for fusion in live.fusions:
        match = next(
            (
                i
                for i in unused
                if replay.fusions[i].structure_hash == fusion.structure_hash
                and replay.fusions[i].input_signature == fusion.input_signature
            ),
            None,
        )
        if match is None:
            timeline = FusionTimeline(runs=0, refusal=Refusal("failed", "no replay of this fusion ran on its inputs"))
        else:
            unused.remove(match)
            found = replay.fusions[match]
            timeline = found.sm_timeline or FusionTimeline(
                runs=0, refusal=Refusal("failed", "its replay recorded no timeline")
            )
            if _launches(found) != _launches(fusion):
                timeline = FusionTimeline(
                    runs=timeline.runs,
                    refusal=Refusal("launch_differs", "its replay launched other kernels or launch configurations"),
                )
        fusions.append(dataclasses.replace(fusion, sm_timeline=timeline))
    return dataclasses.replace(live, fusions=tuple(fusions), warnings=(*live.warnings, NOTE))


def record_live_side(
    live_path: str | Path,
    output: str | Path,
    runs: int,
    max_overhead: float,
    *,
    timeout_s: float = 900.0,
    progress: Progress | None = None,
    device: int | None = None,
) -> Path:
    """Replay every fusion of ``live_path`` on its inputs with ``runs`` instrumented runs per kernel,
    under the capture's own timing protocol (its warm-ups, samples, L2 mode and timer), and write the
    capture with the timelines to ``output`` (their arrays beside it). Raises what the replay raises."""
    from fusiondiff.io.files import check_not_input
    from fusiondiff.io.store import load_capture, save_capture
    from fusiondiff.io.timelines import copied
    from fusiondiff.replay.repro import write_repros
    from fusiondiff.replay.runner import replay_scripts

    live_path, output = Path(live_path), Path(output)
    live = load_capture(live_path)
    check_not_input(output, [live_path])
    protocol = dataclasses.replace(live.protocol, flush_bytes=0)
    options = RecordingOptions(protocol=protocol, sm_timeline=runs, sm_timeline_max_overhead=max_overhead)
    with tempfile.TemporaryDirectory(prefix="fusiondiff-sm-timeline-") as work:
        # every record its own replay: each record gets the timelines of a replay of itself
        scripts: Sequence[Path] = write_repros(live_path, Path(work) / "scripts", every_record=True)
        replayed = Path(work) / "replay.json"
        replay_scripts(
            [str(s) for s in scripts],
            output=str(replayed),
            options=options,
            inputs_capture=str(live_path),
            timeout_s=timeout_s,
            progress=progress or silent,
            device=device,
        )
        attached = attach(live, load_capture(replayed))
        result = copied(attached, replayed, output)
    save_capture(
        dataclasses.replace(result, tensors_file=live.tensors_file if output.parent == live_path.parent else None),
        output,
    )
    return output
