"""The round trip's Slurm executor against a real Slurm: one node on localhost (tests/slurm_cluster.py),
started once for the session, with the replay faked by the recorded H200 replay of llama3's step
(tests/data/fidelity/llama3), as the other round-trip tests fake it. The fake is pickled by submitit
and called in the job's Python, which imports it from this module (tests/ is on its PYTHONPATH)."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fusiondiff.front.cli import main
from fusiondiff.io.store import load_capture, save_capture
from fusiondiff.records.errors import FusionDiffError, ReplayError
from fusiondiff.roundtrip import roundtrip

LLAMA3 = Path(__file__).parent.parent / "data" / "fidelity" / "llama3"
TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent


@dataclasses.dataclass(frozen=True)
class RecordedReplay:
    """A picklable replay function: for each script, the recorded replay of the live fusion its
    repro was written for. A script named in ``crash`` kills the job's Python (as a node failure
    would: no result for submitit); one in ``fail`` raises as a replay that died does; one in ``bug``
    raises what no replay should (the task's Python ends with it)."""

    live: Path
    recorded: Path = LLAMA3 / "replay.json"
    crash: frozenset[str] = frozenset()
    fail: frozenset[str] = frozenset()
    bug: frozenset[str] = frozenset()
    delay_s: float = 0.0

    def __call__(self, scripts, output: Path, device) -> None:
        stems = [Path(s).stem for s in scripts]
        time.sleep(self.delay_s)
        if any(s in self.crash for s in stems):
            print(f"fake node failure while replaying {stems[0]}", file=sys.stderr, flush=True)
            os._exit(3)
        if any(s in self.bug for s in stems):
            raise RuntimeError(f"fake replay bug in {stems[0]}")
        if any(s in self.fail for s in stems):
            raise ReplayError("the replay process died (killed by signal 9) before reporting")
        live, recorded = load_capture(self.live), load_capture(self.recorded)
        fusions = []
        for stem in stems:
            f = live.fusions[int(stem.split("_", 1)[0])]
            replayed = next(r for r in recorded.fusions if r.name.startswith(f"{f.trace}_{f.name}:"))
            fusions.append(dataclasses.replace(replayed, name="fusion0" if len(stems) == 1 else f"{stem}:fusion0"))
        save_capture(dataclasses.replace(recorded, fusions=tuple(fusions), source=" ".join(scripts)), output)


@pytest.fixture(scope="session")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A one-node Slurm on localhost for the session; skips with the reason it cannot start."""
    pytest.importorskip("submitit", reason="submitit is not installed (pip install 'fusiondiff[cluster]')")
    import slurm_cluster

    reason = slurm_cluster.unavailable()
    if reason:
        pytest.skip(reason)
    cluster = slurm_cluster.one_node_cluster(tmp_path_factory.mktemp("slurm"))
    try:
        env = cluster.__enter__()
    except RuntimeError as exc:
        pytest.skip(f"the one-node Slurm did not start: {exc}")
    try:
        yield env
    finally:
        cluster.__exit__(None, None, None)


@pytest.fixture
def on_slurm(slurm: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The client environment of the cluster, and a PYTHONPATH under which the job's Python finds
    this module (the fake replay) and this checkout."""
    for name, value in slurm.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), str(ROOT), os.environ.get("PYTHONPATH", "")]))


def _executor(**settings):  # type: ignore[no-untyped-def]
    from fusiondiff.roundtrip.slurm import SlurmExecutor, SlurmSettings

    return SlurmExecutor(SlurmSettings(gpus_per_task=0, poll_s=0.5, **settings))


def _live(tmp_path: Path) -> Path:
    live = tmp_path / "live.json"
    live.write_bytes((LLAMA3 / "live.json").read_bytes())
    return live


def test_round_trip_as_a_job_array_lands_in_dir_and_resumes(on_slurm: None, tmp_path: Path) -> None:
    live = _live(tmp_path)
    out = tmp_path / "rt"
    lines: list[str] = []
    local = roundtrip(live, tmp_path / "local", devices=[None], replay=RecordedReplay(live))
    result = roundtrip(
        live, out, replay=RecordedReplay(live), executor=_executor(batches_per_task=3), progress=lines.append
    )
    assert not result.interrupted and not result.not_replayed
    assert len(result.distinct) == len(local.distinct) and result.replayed_now == len(local.distinct)
    assert {r.index: r.verdict for r in result.rows} == {r.index: r.verdict for r in local.rows}
    assert sorted(p.name for p in (out / "replays").iterdir()) == sorted(
        p.name for p in (tmp_path / "local" / "replays").iterdir()
    )
    assert (out / "replay.json").is_file() and (out / "diff.json").is_file()
    assert any("submitted Slurm job" in line for line in lines), lines
    assert any(f"{len(local.distinct)}/{len(local.distinct)} fusion(s) replayed" in line for line in lines), lines
    assert len(result.processes) == len(local.distinct)
    # a second run replays nothing: every replay is kept, nothing is submitted
    again_lines: list[str] = []
    again = roundtrip(live, out, executor=_executor(), progress=again_lines.append)
    assert again.replayed_now == 0 and again.resumed == len(local.distinct)
    assert not any("submitted" in line for line in again_lines)
    assert {r.index: r.verdict for r in again.rows} == {r.index: r.verdict for r in local.rows}


def test_a_failed_task_reports_its_fusions_with_the_jobs_stderr(on_slurm: None, tmp_path: Path) -> None:
    live = _live(tmp_path)
    capture = load_capture(live)
    from fusiondiff.roundtrip import distinct_fusions

    distinct = distinct_fusions(capture)
    crashed, bug, failed = distinct[0].stem, distinct[2].stem, distinct[-1].stem
    replay = RecordedReplay(live, crash=frozenset({crashed}), bug=frozenset({bug}), fail=frozenset({failed}))
    result = roundtrip(live, tmp_path / "rt", replay=replay, executor=_executor(batches_per_task=2))
    # tasks of two fusions: the first task's Python died, the second's raised; each fusion of both
    # failed with what the job's stderr says, and the one replay that failed inside a task says why
    first, second = {d.index for d in distinct[:2]}, {d.index for d in distinct[2:4]}
    assert set(result.not_replayed) == first | second | {distinct[-1].index}
    for index in first:
        assert f"fake node failure while replaying {crashed}" in result.not_replayed[index]
    for index in second:
        assert f"RuntimeError: fake replay bug in {bug}" in result.not_replayed[index]
    assert "killed by signal 9" in result.not_replayed[distinct[-1].index]
    assert result.replayed_now == len(distinct) - 5
    # a rerun replays only those five
    again = roundtrip(live, tmp_path / "rt", replay=RecordedReplay(live), executor=_executor())
    assert again.replayed_now == 5 and not again.not_replayed


def test_ctrl_c_cancels_the_array_and_a_rerun_resumes(on_slurm: None, tmp_path: Path) -> None:
    """Ctrl-C while the array runs (raised here from the first progress line after submitting):
    the tasks cancelled, nothing left in Slurm's queue, the round trip says it was interrupted."""
    from fusiondiff.roundtrip.slurm import _queued

    live = _live(tmp_path)
    arrays: list[str] = []

    def progress(line: str) -> None:
        if line.startswith("fusiondiff roundtrip: Slurm job "):
            arrays.append(line.split()[3].rstrip(":"))
            raise KeyboardInterrupt

    slow = RecordedReplay(live, delay_s=120)
    result = roundtrip(live, tmp_path / "rt", replay=slow, executor=_executor(batches_per_task=4), progress=progress)
    assert result.interrupted and result.replayed_now == 0
    deadline = time.monotonic() + 30
    while _queued(arrays[0]) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _queued(arrays[0]) == {}
    again = roundtrip(live, tmp_path / "rt", replay=RecordedReplay(live), executor=_executor(batches_per_task=4))
    assert not again.interrupted and again.replayed_now == len(again.distinct) and not again.not_replayed


def test_slurm_without_submitit_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "submitit" else real(name, *a))
    code = main(["roundtrip", str(LLAMA3 / "live.json"), "-o", str(tmp_path / "rt"), "--executor", "slurm"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().count("\n") == 0 and "pip install 'fusiondiff[cluster]'" in err, err


def test_device_is_refused_with_slurm(capsys, tmp_path) -> None:
    pytest.importorskip("submitit")
    code = main(
        ["roundtrip", str(LLAMA3 / "live.json"), "-o", str(tmp_path / "rt"), "--executor", "slurm", "--device", "0"]
    )
    assert code == 2 and "--gpus-per-task" in capsys.readouterr().err


def test_a_partition_slurm_refuses_is_one_error(on_slurm: None, tmp_path: Path) -> None:
    live = _live(tmp_path)
    with pytest.raises(FusionDiffError, match="Slurm refused the job array: .*partition"):
        roundtrip(live, tmp_path / "rt", replay=RecordedReplay(live), executor=_executor(partition="nope"))
    assert not list((tmp_path / "rt" / "replays").glob("*.json"))


def test_each_array_task_takes_turns_as_the_local_workers_do(monkeypatch, tmp_path: Path) -> None:
    """``--ahead`` and ``--prepare-ahead`` reach the workers each task runs on its node (no Slurm
    needed: the tasks are built and one is run here, its workers stood in for)."""
    pytest.importorskip("submitit")
    from fusiondiff.roundtrip import slurm
    from fusiondiff.roundtrip.plan import distinct_fusions
    from fusiondiff.roundtrip.records import ReplayPlan
    from fusiondiff.roundtrip.workers import TurnTaking

    pending = distinct_fusions(load_capture(LLAMA3 / "live.json"))[:4]
    scripts = {d.index: tmp_path / f"{d.stem}.py" for d in pending}
    ties = {d.index: "" for d in pending}
    executor = _executor(batches_per_task=2)
    turns = TurnTaking(ahead=6, staged=True, prepare_limit_s=120.0)
    plan = ReplayPlan(tuple(pending), 1, scripts, ties, tmp_path, tmp_path)
    work = executor.work(plan, RecordedReplay(LLAMA3 / "live.json"), print, time.monotonic, True, turns)
    assert [len(t.plan.fusions) for t in work.tasks] == [2, 2]
    assert [sorted(t.plan.scripts) for t in work.tasks] == [
        [d.index for d in pending[:2]],
        [d.index for d in pending[2:]],
    ]
    assert all(t.turns == turns for t in work.tasks)
    seen: dict[str, object] = {}

    class StandIn:
        def __init__(self, *args):
            seen.update(start_ahead=args[5], turns=args[6])
            self.failures, self.processes = {}, []

        def run(self) -> None:
            pass

    monkeypatch.setattr(slurm, "Workers", StandIn)
    slurm.run_task(work.tasks[0])
    assert seen["turns"] == turns


@pytest.mark.parametrize("served", [True, False])
def test_a_task_reports_whether_its_nodes_server_forked_its_replays(monkeypatch, tmp_path: Path, served) -> None:
    """Each task's node starts a fork server of its own: the task says whether it served (its replay
    falls back to fresh processes where it could not), and the run says "forked" only where every
    task's did (no Slurm needed: one task is run here, its workers stood in for)."""
    pytest.importorskip("submitit")
    from fusiondiff.roundtrip import slurm
    from fusiondiff.roundtrip.plan import distinct_fusions
    from fusiondiff.roundtrip.records import ReplayPlan

    class ForkingReplay:
        """What the workers see of ChildReplays: a replay that can start ahead, forked until told not."""

        forked = True

        def __call__(self, scripts, output, device):  # type: ignore[no-untyped-def]
            raise AssertionError("the workers are stood in for")

        start = __call__

    class StandIn:
        def __init__(self, *args):
            self.failures, self.processes = {}, []

        def run(self) -> None:
            replay.forked = served  # as ChildReplays does when its server cannot serve

    pending = distinct_fusions(load_capture(LLAMA3 / "live.json"))[:2]
    plan = ReplayPlan(
        tuple(pending),
        1,
        {d.index: tmp_path / f"{d.stem}.py" for d in pending},
        {d.index: "" for d in pending},
        tmp_path,
        tmp_path,
    )
    replay = ForkingReplay()
    work = _executor().work(plan, replay, print, time.monotonic, True, slurm.DEFAULT_TURNS)
    monkeypatch.setattr(slurm, "Workers", StandIn)
    outcome = slurm.run_task(dataclasses.replace(work.tasks[0], replay=replay))
    assert outcome.forked is served

    class Job:
        """The submitting side reads each task's outcome from the JSON the task wrote, never from submitit."""

        job_id = "1_0"

        def result(self):
            raise AssertionError("the submitting process never unpickles a task's result")

    forked_elsewhere = dataclasses.replace(outcome, forked=True)
    work.outcomes.clear()
    # as if the plan had been cut in two tasks, each of these fusions
    work.tasks = [dataclasses.replace(work.tasks[0], outcome=tmp_path / f"outcome{i}.json") for i in range(2)]
    slurm.write_outcome(tmp_path / "outcome0.json", forked_elsewhere)
    slurm.write_outcome(tmp_path / "outcome1.json", outcome)
    work._collect(0, Job())
    work._collect(1, Job())
    assert work.forked is served
    # without prestart nothing is started ahead, so nothing is forked, whatever the replay says
    assert slurm.run_task(dataclasses.replace(work.tasks[0], replay=replay, prestart=False)).forked is False
