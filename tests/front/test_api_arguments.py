"""The Python API's arguments checked as the command line's are (issue #40): one-line
:class:`FusionDiffError`, nothing read from a string's characters nor a scan of ``/``, nothing
written for a value that is not a record; and the Slurm executor never unpickles what lies in a
job's folder."""

from __future__ import annotations

import dataclasses
import os
import pickle
import time
from pathlib import Path
from typing import Any

import pytest

import fusiondiff
from fusiondiff.front import api
from fusiondiff.records.errors import FusionDiffError
from fusiondiff.roundtrip import roundtrip

RECORDED = Path(__file__).parent.parent / "data" / "seed" / "live_backward.json"

CALLS = {
    "open_report of one string": (lambda: api.open_report(str(RECORDED)), r"takes a list of paths, not one path"),
    "open_report of a Path": (lambda: api.open_report(RECORDED), r"takes a list of paths, not one path"),
    "open_report of numbers": (lambda: api.open_report([1, 2]), r"takes paths \(str or Path\), not int"),
    "open_report of None": (lambda: api.open_report(None), r"takes a list of paths, not NoneType"),
    "open_report of nothing": (lambda: api.open_report([]), r"needs at least 1 path"),
    "load_rank_captures of one string": (lambda: api.load_rank_captures("/"), r"takes a list of paths, not one path"),
    "load_rank_captures of bytes": (lambda: api.load_rank_captures(b"x"), r"takes a list of paths, not one path"),
    "load_rank_captures of an empty name": (lambda: api.load_rank_captures([""]), r"takes paths"),
    "diff_files of None": (lambda: api.diff_files(None, RECORDED), r"diff_files takes a path"),
    "roundtrip of no captures": (lambda: roundtrip([], "rt-never-made"), r"needs at least 1 path"),
    "roundtrip of a number": (lambda: roundtrip(3, "rt-never-made"), r"takes a list of paths, not int"),
    "save_capture of None": (lambda: fusiondiff.save_capture(None, "never-written.json"), r"takes a Capture"),
    "save_capture to None": (
        lambda: fusiondiff.save_capture(fusiondiff.load_capture(RECORDED), None),
        r"takes a file path",
    ),
}


@pytest.mark.parametrize("name", CALLS)
def test_a_bad_argument_is_one_line_and_nothing_is_written(name: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    call, pattern = CALLS[name]
    started = time.monotonic()
    with pytest.raises(FusionDiffError, match=pattern) as refused:
        call()
    assert "\n" not in str(refused.value)
    assert time.monotonic() - started < 10  # no scan of /
    assert list(tmp_path.iterdir()) == []


class _Planted:
    """What a planted pickle would run when loaded."""

    def __init__(self, mark: str) -> None:
        self.mark = mark

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Path(self.mark).write_text, ("PWNED",))


def _slurm_work(tmp_path: Path) -> tuple[Any, Path, list[Any]]:
    """A Slurm executor's work on two fusions of a recorded capture (nothing submitted), the job
    folder of its task 0 and the fusions."""
    from fusiondiff.io.store import load_capture
    from fusiondiff.roundtrip import slurm
    from fusiondiff.roundtrip.plan import distinct_fusions
    from fusiondiff.roundtrip.records import ReplayPlan

    live = Path(__file__).parent.parent / "data" / "fidelity" / "llama3" / "live.json"
    pending = distinct_fusions(load_capture(live))[:2]
    plan = ReplayPlan(
        tuple(pending),
        1,
        {d.index: tmp_path / f"{d.stem}.py" for d in pending},
        {d.index: "" for d in pending},
        tmp_path / "replays",
        tmp_path / "logs",
    )
    work = slurm.SlurmExecutor(slurm.SlurmSettings(gpus_per_task=0)).work(
        plan, lambda *a: None, print, time.monotonic, False
    )
    job_dir = tmp_path / "slurm" / "1"
    job_dir.mkdir(parents=True)
    return work, job_dir, pending


def test_a_result_pickle_planted_in_a_job_folder_is_never_loaded(tmp_path: Path) -> None:
    """The task's outcome comes from the JSON it wrote; submitit's ``*_result.pkl`` (which
    ``job.result()`` would unpickle) is left alone, and a task without its JSON fails its fusions."""
    pytest.importorskip("submitit")
    from fusiondiff.roundtrip import slurm

    work, job_dir, pending = _slurm_work(tmp_path)
    mark = tmp_path / "PWNED"
    (job_dir / "1_0_0_result.pkl").write_bytes(pickle.dumps(("success", _Planted(str(mark)))))

    class Job:
        job_id = "1_0"

        class paths:
            stderr = job_dir / "1_0_0_log.err"

        def result(self):  # what submitit would do
            return pickle.loads((job_dir / "1_0_0_result.pkl").read_bytes())

    work.tasks = [dataclasses.replace(work.tasks[0], outcome=job_dir / "0.json")]
    work._collect(0, Job())
    assert not mark.exists()
    assert set(work.failures) == {d.index for d in pending}
    assert all("it wrote no outcome" in why for why in work.failures.values())
    # an outcome naming fusions that are not the task's is refused too
    work.outcomes.clear()
    work.failures.clear()
    slurm.write_outcome(job_dir / "0.json", slurm.TaskOutcome((9999,), {}, ()))
    work._collect(0, Job())
    assert all("not its own" in why for why in work.failures.values())


def _stderr_fifo(path: Path) -> None:
    os.mkfifo(path)


def _stderr_to_dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _stderr_huge(path: Path) -> None:
    with path.open("wb") as f:  # 1 GiB, sparse: only its tail is read
        f.seek(1 << 30)
        f.write(b"\nTraceback (most recent call last):\nMemoryError: the telling line\nsrun: error: task 0: Exited\n")


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_stderr_fifo, "it wrote no outcome"),  # never opened for a writer: a read would wait forever
        (_stderr_to_dev_zero, "it wrote no outcome"),  # endless zeros
        (_stderr_huge, "MemoryError: the telling line"),
    ],
    ids=["a FIFO", "a link to /dev/zero", "1 GiB"],
)
def test_a_failed_tasks_stderr_that_is_no_file_to_read_is_not_waited_on(tmp_path: Path, make, says) -> None:
    """A failed task's fusions fail with its stderr's last telling line: a FIFO or a link to
    ``/dev/zero`` planted there is not read (the task's own words instead), a huge one only by its tail."""
    pytest.importorskip("submitit")
    work, job_dir, pending = _slurm_work(tmp_path)
    stderr = job_dir / "1_0_0_log.err"
    make(stderr)

    class Job:
        job_id = "1_0"

        class paths:
            pass

    Job.paths.stderr = stderr  # type: ignore[attr-defined]
    work.tasks = [dataclasses.replace(work.tasks[0], outcome=job_dir / "0.json")]
    started = time.monotonic()
    work._collect(0, Job())
    assert time.monotonic() - started < 10
    assert set(work.failures) == {d.index for d in pending}
    assert all(why.startswith("Slurm task 1_0 failed: ") and says in why for why in work.failures.values())


@pytest.mark.parametrize(
    "settings",
    [
        {"partition": "gpu\n#SBATCH --wrap=id"},
        {"partition": "a b"},
        {"partition": ""},
        {"time_min": 0},
        {"time_min": 10**9},
        {"gpus_per_task": -1},
        {"batches_per_task": 0},
        {"poll_s": 0},
    ],
)
def test_slurm_settings_are_checked_when_made(settings) -> None:
    from fusiondiff.roundtrip.slurm import SlurmSettings

    with pytest.raises(FusionDiffError) as refused:
        SlurmSettings(**settings)
    assert "\n" not in str(refused.value).replace("\\n", "")
