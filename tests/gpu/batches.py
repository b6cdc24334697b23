"""The GPU suite in batches, each short enough for one call of the lent GPU (10 minutes at most,
a refused start still costing time): ``bash tests/gpu/run_batch.sh BATCH OUT`` runs one.

A batch groups the test files that share an expensive set-up (the seed model's compile is a
session fixture, so every file that uses it sits in one batch). ``tests/gpu/test_batches.py``
checks on the CPU that every GPU test file is in exactly one batch. The measured times are in
``tests/gpu/README.md``.
"""

from __future__ import annotations

import sys

BATCHES: dict[str, tuple[str, ...]] = {
    # the seed model compiled once (conftest's session fixture), then capture, blocks, end to end
    "seed": (
        "tests/gpu/test_harness.py",
        "tests/gpu/test_capture.py",
        "tests/gpu/test_blocks.py",
        "tests/gpu/test_end_to_end.py",
    ),
    # replays of scripts in fresh processes: the seed's legacy script, ~80 translated legacy scripts
    "replay": ("tests/gpu/test_replay.py", "tests/gpu/test_legacy_scripts.py"),
    # the folders Thunder writes for a small program (recorded in the test: Thunder's own benchmark
    # report times every graph and region with several executors, minutes of its own)
    "thunder": ("tests/gpu/test_thunder_report.py",),
    # three round trips of a 12-fusion step, each fusion in a process of its own
    "roundtrip": ("tests/gpu/test_roundtrip.py",),
    # processes that are killed, refused, pinned or kept busy: faults, the two timers, the environment
    "process": ("tests/gpu/test_faults.py", "tests/gpu/test_timers.py", "tests/gpu/test_environment.py"),
    # every planted cause recorded (each side a fresh process) and diagnosed
    "zoo": ("tests/gpu/test_zoo.py",),
}

LIMIT_S = 480
"""A batch's time limit on the GPU machine (run_batch.sh stops pytest there; the rest of a device
call's 10 minutes is the machine's start and the bundle's install)."""


def main(argv: list[str]) -> int:
    """``python3 tests/gpu/batches.py BATCH``: the batch's test files, one a line."""
    if len(argv) != 1 or argv[0] not in BATCHES:
        print(f"usage: batches.py {{{','.join(BATCHES)}}}", file=sys.stderr)
        return 2
    print("\n".join(BATCHES[argv[0]]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
