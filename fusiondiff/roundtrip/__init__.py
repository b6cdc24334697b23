"""``fusiondiff roundtrip``: replay every distinct fusion of a live capture from its faithful repro,
and say which ones do not run at their live speed.

A training step holds hundreds of fusion records, many of them the same fusion (a model's repeated
layers). The round trip:

1. picks each distinct fusion once: same definition graph (:attr:`FusionRecord.structure_hash`),
   same input signature (:attr:`FusionRecord.input_signature`) and same enable/disable options
   (the repro keeps the options, so two records that differ only there are two replays);
2. writes its faithful repro (:func:`fusiondiff.replay.repro.render_repro`) to ``DIR/scripts/``;
3. replays them in fresh processes (:func:`fusiondiff.replay.runner.replay_scripts`), one worker
   per visible GPU fed from a queue, each worker's processes seeing only its GPU
   (``CUDA_VISIBLE_DEVICES``); a fresh process per fusion by default, or ``batch`` scripts per
   process, which is faster and less isolated (a fusion can then inherit another's compiled
   kernels or a lost CUDA context: scripts a batch did not replay are retried alone); while a
   worker's replay runs, its next ``ahead`` replays' processes are already started
   (:func:`fusiondiff.replay.runner.start_replay`): each reads its script and imports torch and
   nvFuser and, with ``prepare="gpu"`` (not the default until measured on a GPU), when let, prepares on the GPU (its own CUDA context, its script run and its
   fusion compiled, the profiler's first window), several at once but never while a replay takes
   its samples there, and waits for its turn to take its warm-ups and samples
   (:mod:`fusiondiff.replay.stages`); each GPU times one replay at a time and each replay is still
   a fresh process that owes nothing to the fusions before it. ``prepare="imports"`` (the default,
   with ``ahead=1``) stops the preparation at the imports; without ``prestart`` (``--no-prestart``, the reference) each
   process starts only in its turn;
4. keeps each fusion's replay in ``DIR/replays/<script>.json`` as soon as it is done, so a rerun
   (or a run stopped by Ctrl-C) resumes and skips what is there and valid;
5. merges them into ``DIR/replay.json``, diffs the distinct live fusions against it into
   ``DIR/diff.json`` (the exported diff record) and builds the session summary: every live fusion
   against the replay of its distinct fusion, ranked by the time nothing recorded explains, and the
   step's totals.

A torchrun session leaves one live capture per rank (``live.rank0.json``, ``live.rank1.json``).
Given several (or a folder of them), the round trip takes every rank's fusions together: each
rank's fusions are first described on the reference rank's device (rank 1's ``cuda:1`` is where
rank 1 runs, not a property), so a fusion that every rank ran alike is one distinct fusion,
replayed once, while one that a rank ran differently (an input at another offset) is its own.
Each live record keeps its rank, and the summary has a row per rank.

The replay itself is a parameter (``replay``), so everything but the GPU work is tested with
recorded replays.

The modules follow the pipeline: :mod:`.plan` (which captures, fusions and GPUs), :mod:`.run`
(scripts, the queue, the workers), :mod:`.results` (merge, diff, a row per live fusion),
:mod:`.summary` (the text); :mod:`.records` holds what they pass along, :mod:`.replays` the real
replay in fresh processes.
"""

from fusiondiff.roundtrip.plan import (
    batches,
    choose_devices,
    combine_ranks,
    distinct_fusions,
    isolation_words,
    visible_devices,
)
from fusiondiff.roundtrip.records import (
    DistinctFusion,
    FusionRow,
    LiveSource,
    RankRow,
    ReplayProcess,
    RoundTripResult,
)
from fusiondiff.roundtrip.replays import ReplayFunction, replay_in_child
from fusiondiff.roundtrip.results import merge_replays
from fusiondiff.roundtrip.run import roundtrip
from fusiondiff.roundtrip.summary import render_summary

__all__ = [
    "DistinctFusion",
    "FusionRow",
    "LiveSource",
    "RankRow",
    "ReplayProcess",
    "ReplayFunction",
    "RoundTripResult",
    "batches",
    "choose_devices",
    "combine_ranks",
    "distinct_fusions",
    "isolation_words",
    "merge_replays",
    "render_summary",
    "replay_in_child",
    "roundtrip",
    "visible_devices",
]
