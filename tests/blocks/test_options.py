"""``--sm-timeline`` on the command line, in the options handed to a replay child, and the recorder
it selects (no GPU needed)."""

from __future__ import annotations

import pytest
from inprocess import fusiondiff

from fusiondiff.front.cli import _recording_options, _split_script_args, build_parser
from fusiondiff.recording.recorder import Recorder
from fusiondiff.records.options import RecordingOptions
from fusiondiff.replay.timeline_recorder import TimelineRecorder, recorder_class


@pytest.mark.parametrize(
    ("argv", "runs", "overhead"),
    [
        (["replay", "r.py", "-o", "o.json"], 0, 0.25),
        (["replay", "r.py", "-o", "o.json", "--sm-timeline"], 5, 0.25),
        (
            [
                "replay",
                "r.py",
                "-o",
                "o.json",
                "--sm-timeline",
                "--sm-timeline-runs",
                "3",
                "--sm-timeline-max-overhead",
                "10",
            ],
            3,
            0.10,
        ),
        (["replay", "r.py", "-o", "o.json", "--sm-timeline-runs", "3"], 0, 0.25),
        (["capture", "--sm-timeline", "s.py", "-o", "o.json"], 5, 0.25),
        (["capture", "s.py", "-o", "o.json", "--sm-timeline", "--", "--sm-timeline-runs", "2"], 5, 0.25),
        (["roundtrip", "live.json", "-o", "rt", "--sm-timeline", "--sm-timeline-runs", "2"], 2, 0.25),
    ],
)
def test_the_flags_set_the_recording_options(argv, runs, overhead):
    args = build_parser().parse_args(argv)
    if argv[0] == "capture":
        _split_script_args(args)  # as `fusiondiff capture` does: its options may follow SCRIPT
    options = _recording_options(args)
    assert options.sm_timeline == runs and options.sm_timeline_max_overhead == pytest.approx(overhead)
    assert recorder_class(options) is (TimelineRecorder if runs else Recorder)


@pytest.mark.parametrize(
    "bad", [["--sm-timeline-runs", "0"], ["--sm-timeline-runs", "x"], ["--sm-timeline-max-overhead", "-5"]]
)
def test_impossible_values_are_refused_before_anything_runs(bad):
    result = fusiondiff("replay", "r.py", "-o", "o.json", *bad)
    assert result.returncode == 2 and "--sm-timeline" in result.stderr.splitlines()[-1]


def test_the_options_reach_the_replay_child_intact():
    options = RecordingOptions(sm_timeline=4, sm_timeline_max_overhead=0.3)
    assert RecordingOptions.from_jsonable(options.to_jsonable()) == options
