"""Merging the replays, diffing them against the live fusions, and a row per live fusion ranked by
the time nothing recorded explains."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fusiondiff.records.gates import combined_exit_code
from fusiondiff.records.model import Capture
from fusiondiff.records.notes import ROUNDTRIP_SOURCE
from fusiondiff.roundtrip.host_totals import host_per_call_ns
from fusiondiff.roundtrip.plan import source_of
from fusiondiff.roundtrip.records import DistinctFusion, FusionRow, LiveSource, QuestionRow, RoundTripResult


def merge_replays(paths: Sequence[Path], source: str, target: Path | None = None) -> Capture | None:
    """One replay capture of the per-fusion replays at ``paths`` (the first one's environment and
    protocol; every warning kept once), its block timelines' files named from ``target``, where it
    will be written. ``None`` when there is none."""
    from fusiondiff.io.store import load_capture
    from fusiondiff.io.timelines import rebased

    captures = [load_capture(p) if target is None else rebased(load_capture(p), p, target) for p in paths]
    if not captures:
        return None
    warnings = list(dict.fromkeys(w for c in captures for w in c.warnings))
    protocols = {c.protocol for c in captures}
    if len(protocols) > 1:
        warnings.append(f"the replays were taken under {len(protocols)} timing protocols (reruns with other options)")
    return dataclasses.replace(
        captures[0],
        fusions=tuple(f for c in captures for f in c.fusions),
        source=source,
        tensors_file=None,
        warnings=tuple(warnings),
        roundtrip=True,
    )


def finish(
    capture: Capture,
    sources: Sequence[LiveSource],
    directory: Path,
    distinct: Sequence[DistinctFusion],
    ties: dict[int, str],
    isolation: str,
    devices: Sequence[str | None],
    replayed_now: int,
    resumed: int,
    not_replayed: dict[int, str],
    interrupted: bool,
) -> RoundTripResult:
    from fusiondiff.io.files import check_not_input, write_text
    from fusiondiff.io.store import save_capture
    from fusiondiff.roundtrip.folder import owned, trusted_replay

    lives = [s.path for s in sources]
    label = " + ".join(p.name for p in lives)
    several = len(sources) > 1
    replays_dir = directory / "replays"
    # only replays tied to this run's plan (folder.plan_tie): not a live capture, nor another fusion's
    have = [
        d
        for d in distinct
        if d.index not in not_replayed and trusted_replay(replays_dir / f"{d.stem}.json", ties.get(d.index))
    ]
    for d in distinct:
        if d.index not in not_replayed and d not in have:
            not_replayed[d.index] = "not replayed (interrupted)" if interrupted else "no valid replay capture"
    merged = merge_replays(
        [replays_dir / f"{d.stem}.json" for d in have],
        f"{ROUNDTRIP_SOURCE}{label}: {len(have)} script(s)",
        directory / "replay.json",
    )
    replay_path = diff_path = None
    result = None
    subset = None
    rep_of_stem = {d.stem: d.index for d in have}
    if merged is not None:
        replay_path = owned(directory / "replay.json")
        check_not_input(replay_path, lives)
        save_capture(merged, replay_path, devices=False)
        # A holds the distinct live fusions that have a replay: the others are in the summary. Of
        # several ranks, each named with its rank (two ranks' nvFusion2 may both be there).
        subset = dataclasses.replace(
            capture,
            fusions=tuple(
                dataclasses.replace(capture.fusions[d.index], name=f"rank{source_of(sources, d.index).rank}:{f.name}")
                if several
                else f
                for d in have
                for f in (capture.fusions[d.index],)
            ),
        )
        from fusiondiff.diff.core import diff
        from fusiondiff.report.formats.record import dumps_diff_record
        from fusiondiff.report.interface import DiffReport
        from fusiondiff.report.words.paths import display_paths, source_label

        result = diff(
            # the replay ran on the worker's GPU (cuda:0 of its CUDA_VISIBLE_DEVICES), which the
            # differ describes as the live rank's own device: where it ran is not a property
            subset,
            merged,
            source_a=source_label(label if several else lives[0], capture.source, whole=True),
            source_b=source_label(replay_path, merged.source, whole=True),
        )
        diff_path = owned(directory / "diff.json")
        check_not_input(diff_path, lives)
        path_a, path_b = display_paths([lives[0], replay_path])
        write_text(diff_path, dumps_diff_record(DiffReport(result, subset, merged, path_a, path_b)), devices=False)
    rows = _rows(capture, distinct, have, result, merged, rep_of_stem, not_replayed, sources)
    return RoundTripResult(
        live=label if several else str(lives[0]),
        directory=directory,
        isolation=isolation,
        devices=tuple(devices),
        distinct=tuple(distinct),
        replayed_now=replayed_now,
        resumed=resumed,
        not_replayed=dict(not_replayed),
        rows=tuple(rows),
        replay_path=replay_path,
        diff_path=diff_path,
        exit_code=2 if result is None else combined_exit_code([result.exit_code(), 1 if not_replayed else 0]),
        questions=() if result is None else question_rows(result),
        interrupted=interrupted,
        sources=tuple(sources),
    )


def question_rows(result: Any) -> tuple[QuestionRow, ...]:
    """Each question's verdict line and gate (:mod:`fusiondiff.report.words.questions`), for the summary."""
    from fusiondiff.records.gates import QUESTIONS
    from fusiondiff.report.formats.diff_text import verdict_line
    from fusiondiff.report.words.questions import ledger_line, question_lines

    lines = question_lines(result, kernel=verdict_line(result))
    return tuple(
        QuestionRow(q, result.passes(q), lines[q], ledger_line(result.ledger(q)), result.outcome(q)) for q in QUESTIONS
    )


def _rows(
    capture: Capture,
    distinct: Sequence[DistinctFusion],
    have: Sequence[DistinctFusion],
    result: Any,
    merged: Capture | None,
    rep_of_stem: dict[str, int],
    not_replayed: dict[int, str],
    sources: Sequence[LiveSource] = (),
) -> list[FusionRow]:
    """Every live fusion against the replay of its distinct fusion (see :class:`FusionRow`)."""
    from fusiondiff.records.gates import KERNEL

    several = len(sources) > 1

    def where(index: int) -> tuple[int | None, int | None]:
        if not several:
            return None, None
        source = source_of(sources, index)
        return source.rank, index - source.first

    def ref(index: int) -> str:
        rank, position = where(index)
        return f"#{index}" if rank is None else f"rank {rank} #{position}"

    # the pair of each replayed distinct fusion: A of the diff lists ``have`` in order
    pair_of: dict[int, Any] = {}
    unexplained_labels: set[str] = set()
    if result is not None:
        # the kernel question's ledger says which fusions' gaps nothing recorded explains
        unexplained_labels = set(result.ledger(KERNEL).unexplained_fusions)
        for p in result.pairs:
            pair_of[have[p.index_a].index] = p
    crossed: dict[int, int] = {}  # live fusion -> the fusion whose replay the diff paired it with
    if merged is not None:
        for rep, p in pair_of.items():
            replayed_from = rep_of_stem.get(merged.fusions[p.index_b].name.partition(":")[0])
            if replayed_from is not None and replayed_from != rep:
                crossed[rep] = replayed_from
    rep_of = {m: d.index for d in distinct for m in d.members}
    rows = []
    for i, f in enumerate(capture.fusions):
        rep = rep_of[i]
        pair = pair_of.get(rep)
        live_ns = f.timing.median_ns
        note = "" if rep == i else f"replay of {ref(rep)}"
        if rep in crossed:
            note = join_notes(note, f"paired by the diff with the replay of {ref(crossed[rep])}")
        rank, position = where(i)

        # what every row of this record holds, whatever its replay became
        row = functools.partial(
            FusionRow, index=i, name=f.name, trace=f.trace, call_count=f.call_count, replayed_as=rep,
            live_median_ns=live_ns, rank=rank, rank_index=position, live_host_ns=host_per_call_ns(f),
        )  # fmt: skip
        if pair is None:
            why = not_replayed.get(rep, "its replay matched no live fusion")
            rows.append(
                row(replay_median_ns=math.nan, verdict="NOT REPLAYED", unexplained_ns=0.0, note=join_notes(note, why))
            )
            continue
        if pair.failed:
            assert merged is not None
            failure = merged.fusions[pair.index_b].failure
            why = f"replay failed: {failure.kind.replace('_', ' ')}: {failure.message}" if failure else "replay failed"
            rows.append(
                row(replay_median_ns=math.nan, verdict="FAILED", unexplained_ns=0.0, note=join_notes(note, why))
            )
            continue
        t = pair.timing
        replay_ns = t.median_b_ns
        gap = abs(t.median_b_ns - t.median_a_ns)
        unexplained_rep = gap if pair.label in unexplained_labels and not math.isnan(gap) else 0.0
        if rep == i:
            unexplained = unexplained_rep
        else:  # the same fraction of this record's own gap to the shared replay
            own_gap = abs(replay_ns - live_ns)
            unexplained = 0.0 if not gap or math.isnan(own_gap) else own_gap * unexplained_rep / gap
        replay_host = math.nan if merged is None else host_per_call_ns(merged.fusions[pair.index_b])
        rows.append(
            row(
                replay_median_ns=replay_ns,
                verdict=t.verdict,
                unexplained_ns=unexplained,
                note=note,
                replay_host_ns=replay_host,
            )
        )
    rows.sort(key=lambda r: (-r.unexplained_ns, -(abs(r.gap_ns) if not math.isnan(r.gap_ns) else -1.0), r.index))
    return rows


def join_notes(*parts: str) -> str:
    return "; ".join(p for p in parts if p)
