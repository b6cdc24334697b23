"""The round trip without a GPU: the replay is a recorded H200 replay of each fusion (pythia's
training step, tests/data/fidelity/pythia), handed out per script by a fake replay function."""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time
from pathlib import Path

import pytest

from fusiondiff import roundtrip as rt
from fusiondiff.io.store import load_capture, save_capture
from fusiondiff.records.errors import ReplayError
from fusiondiff.records.model import Capture
from fusiondiff.replay import stages

PYTHIA = Path(__file__).parent.parent / "data" / "fidelity" / "pythia"


class FakeReplay:
    """Writes, for each script, the recorded replay of the live fusion its repro was written for
    (found by the live record's trace and name). Records every call: (device, script stems)."""

    def __init__(
        self, live: Capture, delay_s: float = 0.0, fail: set[str] = frozenset(), drop_in_batch: set[str] = frozenset()
    ):
        self.live = live
        self.recorded = load_capture(PYTHIA / "replay.json")
        self.calls: list[tuple[str | None, tuple[str, ...]]] = []
        self.lock = threading.Lock()
        self.delay_s = delay_s
        self.fail = fail
        self.drop_in_batch = drop_in_batch

    def __call__(self, scripts, output: Path, device):
        stems = tuple(Path(s).stem for s in scripts)
        with self.lock:
            self.calls.append((device, stems))
        time.sleep(self.delay_s)
        if any(s in self.fail for s in stems):
            raise ReplayError("the replay process died (killed by signal 9) before reporting")
        fusions = []
        for stem in stems:
            if len(stems) > 1 and stem in self.drop_in_batch:
                continue  # as after a lost CUDA context: the rest of the batch did not run
            f = self.live.fusions[int(stem.split("_", 1)[0])]
            recorded = next(r for r in self.recorded.fusions if r.name.startswith(f"{f.trace}_{f.name}:"))
            name = "fusion0" if len(stems) == 1 else f"{stem}:fusion0"
            fusions.append(dataclasses.replace(recorded, name=name))
        save_capture(dataclasses.replace(self.recorded, fusions=tuple(fusions), source=" ".join(scripts)), output)

    @property
    def scripts_run(self) -> list[str]:
        return [s for _, stems in self.calls for s in stems]


@pytest.fixture
def live(tmp_path: Path) -> Path:
    """pythia's live step (12 records; nvFusion6 and nvFusion9 of its backward are one fusion) plus
    a second record of its first fusion under another name, as a repeated layer: 13, 11 distinct."""
    capture = load_capture(PYTHIA / "live.json")
    repeated = dataclasses.replace(capture.fusions[0], name="nvFusion99", call_count=2)
    path = tmp_path / "live.json"
    save_capture(dataclasses.replace(capture, fusions=(*capture.fusions, repeated)), path)
    return path


def test_distinct_fusions_once_each(live: Path) -> None:
    distinct = rt.distinct_fusions(load_capture(live))
    assert len(distinct) == 11
    assert distinct[0].members == (0, 12)
    assert next(d for d in distinct if d.index == 6).members == (6, 9)
    assert [d.index for d in distinct] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11]
    assert len({d.stem for d in distinct}) == 11


def test_round_trip_writes_merged_replay_diff_and_summary(live: Path, tmp_path: Path) -> None:
    out = tmp_path / "rt"
    fake = FakeReplay(load_capture(live))
    lines: list[str] = []
    result = rt.roundtrip(live, out, replay=fake, devices=[None], progress=lines.append)
    assert sorted(fake.scripts_run) == sorted(d.stem for d in result.distinct)  # each distinct fusion once
    assert all(len(stems) == 1 for _, stems in fake.calls)  # isolation: a process per fusion
    assert len(list((out / "scripts").glob("*.py"))) == 11
    assert len(list((out / "replays").glob("*.json"))) == 11
    merged = load_capture(out / "replay.json")
    assert merged.kind == "replay" and len(merged.fusions) == 11
    record = json.loads((out / "diff.json").read_text())
    assert len(record["diff"]["pairs"]) == 11
    # every live record has a row; the repeated one is compared with its distinct fusion's replay
    assert len(result.rows) == 13
    repeated = next(r for r in result.rows if r.index == 12)
    first = next(r for r in result.rows if r.index == 0)
    assert repeated.replayed_as == 0 and repeated.note == "replay of #0"
    assert repeated.replay_median_ns == first.replay_median_ns
    # the recorded round trip is all SAME: nothing unexplained, exit 0
    assert {r.verdict for r in result.rows} == {"SAME"}
    assert result.exit_code == 0
    # totals: median x calls over every record, live and replayed
    capture = load_capture(live)
    assert result.live_total_ns == pytest.approx(sum(f.timing.median_ns * f.call_count for f in capture.fusions))
    live_ns, replay_ns, count = result.compared_totals_ns
    assert count == 13
    assert replay_ns == pytest.approx(sum(r.replay_median_ns * r.call_count for r in result.rows))
    text = rt.render_summary(result)
    assert "isolation: a fresh process per fusion" in text
    assert "13 live fusion record(s), 11 distinct" in text
    assert any("11/11 done" in line for line in lines)
    assert lines[-1].startswith("fusiondiff roundtrip: [" + "#" * 20 + "] 11/11 done")
    assert any("[" + "#" * 9 + "." * 11 + "] 5/11 done" in line for line in lines)
    assert next(r for r in result.rows if r.index == 9).note == "replay of #6"
    assert any("left" in line for line in lines[1:-1])  # an ETA while work remains


def test_rerun_resumes_and_replays_only_what_is_missing_or_broken(live: Path, tmp_path: Path) -> None:
    out = tmp_path / "rt"
    capture = load_capture(live)
    rt.roundtrip(live, out, replay=FakeReplay(capture), devices=[None])
    again = FakeReplay(capture)
    result = rt.roundtrip(live, out, replay=again, devices=[None])
    assert again.calls == [] and result.resumed == 11 and result.replayed_now == 0
    replays = sorted((out / "replays").glob("*.json"))
    replays[3].unlink()
    replays[5].write_text("{ half a file")
    third = FakeReplay(capture)
    result = rt.roundtrip(live, out, replay=third, devices=[None])
    assert sorted(third.scripts_run) == sorted([replays[3].stem, replays[5].stem])
    assert result.resumed == 9 and result.replayed_now == 2
    assert len(load_capture(out / "replay.json").fusions) == 11


def test_batches_of_n_scripts_per_process(live: Path, tmp_path: Path) -> None:
    fake = FakeReplay(load_capture(live))
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None], batch=5)
    assert [len(stems) for _, stems in fake.calls] == [5, 5, 1]
    assert "isolation: a fresh process per batch of 5 fusions" in rt.render_summary(result)
    assert len(load_capture(tmp_path / "rt" / "replay.json").fusions) == 11
    # per-fusion replays, whatever the batch: a rerun with another batch size resumes from them
    again = FakeReplay(load_capture(live))
    rt.roundtrip(live, tmp_path / "rt", replay=again, devices=[None], batch=1)
    assert again.calls == []


def test_what_a_batch_left_is_retried_alone(live: Path, tmp_path: Path) -> None:
    stems = [d.stem for d in rt.distinct_fusions(load_capture(live))]
    fake = FakeReplay(load_capture(live), drop_in_batch={stems[1]})
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None], batch=4)
    assert fake.calls[-1][1] == (stems[1],)
    assert not result.not_replayed and len(load_capture(tmp_path / "rt" / "replay.json").fusions) == 11


def test_a_failed_replay_is_named_and_fails_the_run(live: Path, tmp_path: Path) -> None:
    stems = [d.stem for d in rt.distinct_fusions(load_capture(live))]
    fake = FakeReplay(load_capture(live), fail={stems[2]})
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None])
    assert set(result.not_replayed) == {2}
    row = next(r for r in result.rows if r.index == 2)
    assert row.verdict == "NOT REPLAYED" and "killed by signal 9" in row.note and math.isnan(row.replay_median_ns)
    assert result.exit_code == 1
    # the next run tries it again
    again = FakeReplay(load_capture(live))
    assert rt.roundtrip(live, tmp_path / "rt", replay=again, devices=[None]).exit_code == 0
    assert again.scripts_run == [stems[2]]


def test_one_worker_per_gpu_each_script_once(live: Path, tmp_path: Path) -> None:
    fake = FakeReplay(load_capture(live), delay_s=0.05)
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=["0", "1"])
    assert {device for device, _ in fake.calls} == {"0", "1"}
    assert sorted(fake.scripts_run) == sorted(d.stem for d in result.distinct)
    assert "2 worker(s) on GPU 0, 1" in rt.render_summary(result)


def test_more_gpus_than_work_starts_no_idle_worker(live: Path, tmp_path: Path) -> None:
    fake = FakeReplay(load_capture(live))
    rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[str(i) for i in range(8)], batch=12)
    assert len(fake.calls) == 1


def test_visible_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert rt.visible_devices() == ["2", "3"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,-1,2")
    assert rt.visible_devices() == ["1"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert rt.visible_devices() == [None]


def test_the_child_sees_only_its_gpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen = {}

    def fake_replay_scripts(scripts, **kwargs):
        seen.update(kwargs)

    import fusiondiff.replay.runner as runner
    from fusiondiff.recording import live_side

    monkeypatch.setattr(runner, "replay_scripts", fake_replay_scripts)
    monkeypatch.setattr(live_side, "require", lambda command, needs=(): None)  # torch and nvFuser: faked too
    rt.replay_in_child(token="t")(["a.py"], tmp_path / "x.json", "1")
    assert seen["child_env"] == {"CUDA_VISIBLE_DEVICES": "1", "FUSIONDIFF_ROUNDTRIP_RUN": "t"}


def test_refuses_a_replay_capture(tmp_path: Path) -> None:
    from fusiondiff.records.errors import FusionDiffError

    with pytest.raises(FusionDiffError, match="starts from a live one"):
        rt.roundtrip(PYTHIA / "replay.json", tmp_path / "rt", replay=FakeReplay(load_capture(PYTHIA / "live.json")))


def test_cli_roundtrip(
    live: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fusiondiff.front.cli import main

    fake = FakeReplay(load_capture(live))
    monkeypatch.setattr(rt.run, "replay_in_child", lambda *args, **kwargs: fake)
    monkeypatch.setattr(rt.run, "visible_devices", lambda: [None])
    code = main(["roundtrip", str(live), "-o", str(tmp_path / "rt"), "--batch", "6", "--top", "3"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "a fresh process per batch of 6 fusions" in out
    assert "... 10 more fusion(s) not shown" in out
    assert "fusiondiff roundtrip: [####################] 11/11 done" in err


def test_ctrl_c_keeps_what_finished_and_a_rerun_resumes(live: Path, tmp_path: Path) -> None:
    capture = load_capture(live)
    fake = FakeReplay(capture)

    def interrupted_on_the_third(scripts, output, device):
        if len(fake.calls) == 2:
            raise KeyboardInterrupt  # reaches the main thread as Ctrl-C would
        fake(scripts, output, device)

    result = rt.roundtrip(live, tmp_path / "rt", replay=interrupted_on_the_third, devices=[None])
    assert result.interrupted and result.replayed_now == 2
    assert len(load_capture(tmp_path / "rt" / "replay.json").fusions) == 2
    assert "interrupted: rerun to resume" in rt.render_summary(result)
    again = FakeReplay(capture)
    result = rt.roundtrip(live, tmp_path / "rt", replay=again, devices=[None])
    assert result.resumed == 2 and len(again.calls) == 9 and not result.interrupted


class StartingReplay(FakeReplay):
    """A FakeReplay that can also start a replay ahead of its turn, as the real one does: logs
    ("start", stem) when started, ("run", stem) and ("end", stem) around its turn, ("cancel", stem)."""

    def __init__(self, live: Capture, **kwargs):
        super().__init__(live, **kwargs)
        self.events: list[tuple[str, str]] = []

    def _log(self, what: str, scripts) -> None:
        with self.lock:
            self.events += [(what, Path(s).stem) for s in scripts]

    def start(self, scripts, output: Path, device):
        self._log("start", scripts)
        replay = self

        class Pending:
            def run(self, timeout_s=None):
                replay._log("run", scripts)
                replay(scripts, output, device)
                replay._log("end", scripts)

            def cancel(self):
                replay._log("cancel", scripts)

        return Pending()


def test_each_replay_process_starts_while_the_one_before_it_runs(live: Path, tmp_path: Path) -> None:
    fake = StartingReplay(load_capture(live))
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None])
    assert result.replayed_now == 11 and result.exit_code == 0
    stems = [d.stem for d in result.distinct]
    # each was started before the replay ahead of it ran, and ran after that one ended: one replay
    # at a time on the GPU
    assert fake.scripts_run == stems
    assert [s for what, s in fake.events if what == "start"] == stems
    for before, after in zip(stems, stems[1:]):
        assert fake.events.index(("start", after)) < fake.events.index(("run", before))
        assert fake.events.index(("end", before)) < fake.events.index(("run", after))
    assert not [e for e in fake.events if e[0] == "cancel"]


def test_two_workers_start_ahead_and_without_prestart_every_process_starts_in_its_turn(
    live: Path, tmp_path: Path
) -> None:
    fake = StartingReplay(load_capture(live), delay_s=0.05)
    result = rt.roundtrip(live, tmp_path / "a", replay=fake, devices=["0", "1"], ahead=1, prepare="imports")
    assert result.replayed_now == 11 and result.started_ahead
    assert sorted(fake.scripts_run) == sorted(d.stem for d in result.distinct)
    assert {device for device, _ in fake.calls} == {"0", "1"}
    assert len([e for e in fake.events if e[0] == "start"]) == 11
    assert "each process started (imports only) while the one before it ran" in rt.render_summary(result)

    fake = StartingReplay(load_capture(live))
    result = rt.roundtrip(live, tmp_path / "b", replay=fake, devices=["0", "1"], prestart=False)
    assert result.replayed_now == 11 and not result.started_ahead
    assert not [e for e in fake.events if e[0] == "start"]
    assert "started (imports only)" not in rt.render_summary(result)


def test_ctrl_c_cancels_the_replay_started_ahead_and_a_rerun_does_it(live: Path, tmp_path: Path) -> None:
    class InterruptedOnTheThird(StartingReplay):
        def __call__(self, scripts, output, device):
            if len(self.calls) == 2:
                raise KeyboardInterrupt  # reaches the main thread as Ctrl-C would
            super().__call__(scripts, output, device)

    capture = load_capture(live)
    fake = InterruptedOnTheThird(capture)
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None], ahead=1)
    assert result.interrupted and result.replayed_now == 2
    cancelled = [s for what, s in fake.events if what == "cancel"]
    assert len(cancelled) == 1, fake.events  # the fourth, started while the third ran
    again = FakeReplay(capture)
    result = rt.roundtrip(live, tmp_path / "rt", replay=again, devices=[None])
    assert result.replayed_now == 9 and cancelled[0] in again.scripts_run


class StagedReplay(FakeReplay):
    """A FakeReplay whose processes started ahead take their turns as the real child gated at the
    GPU does (replay/stages.py): each "imports" for ``import_s``, prepares on the GPU for
    ``prepare_s`` once told, samples for ``sample_s`` on go, then writes. Every phase that touches
    the GPU is logged with its device and wall-clock ends: (what, stem, device, start, end)."""

    def __init__(
        self, live: Capture, import_s=0.05, prepare_s=0.05, sample_s=0.02, compile_s=None, exit_s=0.0, **kwargs
    ):
        super().__init__(live, **kwargs)
        self.import_s, self.prepare_s, self.sample_s, self.exit_s = import_s, prepare_s, sample_s, exit_s
        self.compile_s = compile_s
        """Set: gated at the context, each prepares in a thread (the profiler's start-up), compiles
        for this long on go beside it, then holds its samples until both are done and it is told
        sample (``--prepare-ahead context``)."""
        self.windows: list[tuple[str, str, str | None, float, float]] = []
        self.started: list[str] = []
        self.start_times: dict[str, float] = {}
        self.run_timeouts: list[float | None] = []
        self.cancelled: list[str] = []
        self.alive = 0
        self.most_alive: dict[str | None, int] = {}
        self._alive_on: dict[str | None, int] = {}

    def _window(self, what, stem, device, seconds):
        start = time.monotonic()
        time.sleep(seconds)
        with self.lock:
            self.windows.append((what, stem, device, start, time.monotonic()))

    def start(self, scripts, output: Path, device):
        replay, stem = self, Path(scripts[0]).stem
        with self.lock:
            self.started.append(stem)
            self.start_times[stem] = time.monotonic()
            self._alive_on[device] = self._alive_on.get(device, 0) + 1
            self.most_alive[device] = max(self.most_alive.get(device, 0), self._alive_on[device])

        class Child:
            def __init__(self):
                self.cond = threading.Condition()
                self.sent: set[str] = set()
                self.state = stages.STARTING
                self.done = threading.Event()
                self.cancelled = False
                threading.Thread(target=self.life, daemon=True).start()

            def _wait(self, words):
                with self.cond:
                    self.cond.wait_for(lambda: self.cancelled or bool(self.sent & words))
                    return not self.cancelled

            def _set(self, state):
                with self.cond:
                    self.state = state

            def life(self):
                time.sleep(replay.import_s)
                self._set(stages.IMPORTED)
                if not self._wait({"prepare", "go"}):
                    return
                if replay.compile_s is None:
                    replay._window("prepare", stem, device, replay.prepare_s)
                    self._set(stages.PREPARED)
                    if not self._wait({"go"}):
                        return
                else:  # gated at the context: its compile may run beside its profiler's start-up
                    preparing = threading.Thread(target=self.prepare_in_thread, daemon=True)
                    preparing.start()
                    if not self._wait({"go"}):
                        return
                    replay._window("compile", stem, device, replay.compile_s)
                    preparing.join()
                    self._set(stages.COMPILED)
                    if not self._wait({"sample"}):
                        return
                replay._window("samples", stem, device, replay.sample_s)
                self._set(stages.TIMED)
                try:
                    replay(scripts, output, device)
                except ReplayError:
                    pass
                replay._window("exit", stem, device, replay.exit_s)  # its CUDA context goes with it
                self._set(stages.ENDED)
                with replay.lock:
                    replay._alive_on[device] -= 1
                self.done.set()

            def prepare_in_thread(self):
                replay._window("prepare", stem, device, replay.prepare_s)
                self._set(stages.PREPARED)

            def _send(self, word):
                with self.cond:
                    self.sent.add(word)
                    self.cond.notify_all()

            def prepare(self):
                self._send("prepare")

            def go(self):
                self._send("go")
                if replay.compile_s is not None:
                    self._send("sample")

            def start_turn(self):
                if replay.compile_s is not None:
                    self._send("go")

            def sample(self):
                self.go()

            def stage(self):
                with self.cond:
                    if self.state in (stages.TIMED, stages.ENDED):
                        return self.state
                    if "go" in self.sent and (replay.compile_s is None or "sample" in self.sent):
                        return stages.TIMING
                    if self.state == stages.COMPILED:
                        return stages.COMPILED
                    if "go" in self.sent:
                        return stages.COMPILING
                    if self.state == stages.PREPARED:
                        return stages.PREPARED
                    if "prepare" in self.sent:
                        return stages.PREPARING
                    return self.state

            def run(self, timeout_s=None):
                replay.run_timeouts.append(timeout_s)
                self.go()
                if not self.done.wait(30 if timeout_s is None else timeout_s):
                    self.cancel()
                    raise ReplayError(f"stopped at its timeout, {timeout_s:.2f} s")

            def cancel(self):
                with self.cond:
                    self.cancelled = True
                    self.cond.notify_all()
                with replay.lock:
                    replay.cancelled.append(stem)
                    replay._alive_on[device] -= 1

        return Child()


def _overlapping(windows, device):
    """Pairs of GPU windows on ``device`` where one is a replay's samples and the other anything
    another replay did on the GPU at the same time."""
    mine = [w for w in windows if w[2] == device]
    return [
        (a[:2], b[:2])
        for a in mine
        for b in mine
        if a[0] == "samples" and b is not a and b[1] != a[1] and b[3] < a[4] and a[3] < b[4]
    ]


@pytest.mark.parametrize(("ahead", "prepare"), [(1, "gpu"), (3, "gpu"), (4, "gpu"), (6, "context")])
def test_spares_prepare_on_the_gpu_together_but_never_while_one_samples(
    live: Path, tmp_path: Path, ahead, prepare
) -> None:
    fake = StagedReplay(load_capture(live))
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None], ahead=ahead, prepare=prepare)
    assert result.replayed_now == 11 and result.exit_code == 0 and result.ahead == ahead
    stems = [d.stem for d in result.distinct]
    assert fake.scripts_run == stems and fake.started == stems and not fake.cancelled
    assert fake.most_alive[None] <= ahead + 1  # the one timing and K spares
    assert not _overlapping(fake.windows, None)
    samples = [w for w in fake.windows if w[0] == "samples"]
    assert [w[1] for w in samples] == stems  # in queue order, one at a time
    if ahead > 1:  # preparations overlap one another: that is where the time is saved
        prepares = [w for w in fake.windows if w[0] == "prepare"]
        assert any(a[3] < b[4] and b[3] < a[4] for a in prepares for b in prepares if a is not b)
    prepared = "(imports, CUDA context, compile, profiler)" if prepare == "gpu" else "(imports, CUDA context, profiler)"
    assert f"prepared {prepared}" in rt.render_summary(result)


def test_two_gpus_each_keep_their_spares_and_sample_one_at_a_time(live: Path, tmp_path: Path) -> None:
    fake = StagedReplay(load_capture(live))
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=["0", "1"], ahead=2, prepare="gpu")
    assert result.replayed_now == 11 and sorted(fake.scripts_run) == sorted(d.stem for d in result.distinct)
    for device in ("0", "1"):
        assert not _overlapping(fake.windows, device) and fake.most_alive[device] <= 3


def test_gated_at_the_context_a_turn_compiles_beside_the_others_preparations_and_samples_alone(
    live: Path, tmp_path: Path
) -> None:
    fake = StagedReplay(load_capture(live), prepare_s=0.2, compile_s=0.2)
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None], ahead=3, prepare="context")
    assert result.replayed_now == 11 and result.exit_code == 0
    stems = [d.stem for d in result.distinct]
    assert fake.scripts_run == stems and not fake.cancelled
    # no other process compiles or prepares while one samples
    assert not _overlapping(fake.windows, None)
    assert [w[1] for w in fake.windows if w[0] == "samples"] == stems
    # a turn's compile runs while spares started since prepare: the time this gate saves
    compiles = [w for w in fake.windows if w[0] == "compile"]
    prepares = [w for w in fake.windows if w[0] == "prepare"]
    assert len(compiles) == 11
    assert any(c[1] != p[1] and p[3] < c[4] and c[3] < p[4] for c in compiles for p in prepares)
    # and each sample starts after every preparation that overlapped its compile has ended
    for c in compiles:
        sample = next(w for w in fake.windows if w[0] == "samples" and w[1] == c[1])
        assert all(p[4] <= sample[3] for p in prepares if p[3] < c[4] and c[3] < p[4])


def test_gated_at_the_context_the_next_turn_compiles_while_the_last_process_exits_and_samples_after_it(
    live: Path, tmp_path: Path
) -> None:
    fake = StagedReplay(load_capture(live), prepare_s=0.2, compile_s=0.1, exit_s=0.15)
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None], ahead=3, prepare="context")
    assert result.replayed_now == 11 and result.exit_code == 0
    stems = [d.stem for d in result.distinct]
    assert [w[1] for w in fake.windows if w[0] == "samples"] == stems
    # nothing of another process (its exit included) overlaps a replay's samples
    assert not _overlapping(fake.windows, None)
    window = {(w[0], w[1]): w for w in fake.windows}
    # each turn's compile began while the process before it was still exiting
    for before, after in zip(stems, stems[1:]):
        compile_, exit_ = window["compile", after], window["exit", before]
        assert compile_[3] < exit_[4], (before, after)
    # the first turn did not wait for its own profiler's start-up before compiling
    first_compile, first_prepare = window["compile", stems[0]], window["prepare", stems[0]]
    assert first_compile[3] < first_prepare[4]


def _contexts_beside_samples(windows) -> list[tuple[str, str]]:
    """(replay sampling, other replay) where the other's CUDA context (from the start of its
    preparation to the end of its exit) existed during the first's samples."""
    first = {}
    for what, stem, _, start, _end in windows:
        if what == "prepare":
            first[stem] = min(first.get(stem, start), start)
    gone = {stem: end for what, stem, _, start, end in windows if what == "exit"}
    samples = [(stem, start, end) for what, stem, _, start, end in windows if what == "samples"]
    return [
        (stem, other)
        for stem, start, end in samples
        for other in first
        if other != stem and first[other] < end and start < gone.get(other, float("inf"))
    ]


def test_handover_starts_a_turn_as_the_one_before_has_sampled_with_no_context_beside_samples(
    live: Path, tmp_path: Path
) -> None:
    fake = StagedReplay(load_capture(live), prepare_s=0.05, compile_s=0.1, exit_s=0.15)
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None], ahead=1, prepare="handover")
    assert result.replayed_now == 11 and result.exit_code == 0 and result.prepared_ahead == "handover"
    stems = [d.stem for d in result.distinct]
    assert [w[1] for w in fake.windows if w[0] == "samples"] == stems and not fake.cancelled
    assert not _overlapping(fake.windows, None)
    # unlike the context mode's spares, no process holds a context while another samples
    assert _contexts_beside_samples(fake.windows) == []
    window = {(w[0], w[1]): w for w in fake.windows}
    for before, after in zip(stems, stems[1:]):
        # its context and compile began once the one before had sampled, while that one still exited
        assert window["samples", before][4] <= window["prepare", after][3] < window["exit", before][4]
        assert window["compile", after][3] < window["exit", before][4]
        # and its samples after that exit
        assert window["exit", before][4] <= window["samples", after][3]
    summary = rt.render_summary(result)
    assert "each began its turn (CUDA context, compile) as the one before it had taken its samples" in summary


def test_the_context_modes_spares_hold_contexts_beside_samples(live: Path, tmp_path: Path) -> None:
    """What handover avoids, seen by the same check: spares prepared ahead wait with their contexts."""
    fake = StagedReplay(load_capture(live), prepare_s=0.05, compile_s=0.1, exit_s=0.05)
    rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None], ahead=3, prepare="context")
    assert _contexts_beside_samples(fake.windows)


def test_prepare_ahead_handover_on_the_command_line() -> None:
    from fusiondiff.front.cli_parser import build_parser

    args = build_parser().parse_args(["roundtrip", "live.json", "-o", "rt", "--prepare-ahead", "handover"])
    assert args.prepare_ahead == "handover"


@pytest.mark.parametrize(
    "prepare", [pytest.param("gpu", id="prepare-gpu"), pytest.param("context", id="prepare-context")]
)
def test_a_worker_keeps_k_spares_importing_while_one_takes_its_turn(live: Path, tmp_path: Path, prepare) -> None:
    """The process that replaces a spare taking its turn starts when that turn starts, not after its
    samples: on the H200 a spare needs 9-11 s to be ready and turns took 0.4-4 s, so starting it one
    turn late left the pipeline empty (llama3's context run, 2026-12-03)."""
    fake = StagedReplay(load_capture(live), sample_s=0.1, compile_s=0.05 if prepare == "context" else None)
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None], ahead=3, prepare=prepare)
    stems = [d.stem for d in result.distinct]
    first_samples = next(w for w in fake.windows if w[0] == "samples")
    assert first_samples[1] == stems[0]
    assert fake.start_times[stems[3]] < first_samples[3]  # the fourth process began before the first's samples
    assert fake.most_alive[None] == 4 and not _overlapping(fake.windows, None)


def test_gated_at_the_context_a_hung_script_holds_its_turn_for_one_timeout_not_one_per_stage(
    live: Path, tmp_path: Path
) -> None:
    fake = StagedReplay(load_capture(live), compile_s=3.0)  # every script outlasts the timeout
    started = time.monotonic()
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None], ahead=2, prepare="context", timeout_s=0.3)
    took = time.monotonic() - started
    assert result.replayed_now == 0 and len(result.not_replayed) == len(result.distinct) == 11
    assert all("stopped at its timeout" in m for m in result.not_replayed.values())
    # each turn's process was let run only for what its turn had left of the one timeout
    assert len(fake.run_timeouts) == 11 and all(t is not None and t <= 0.3 for t in fake.run_timeouts)
    assert took < 11 * 0.3 + 6, took  # one timeout per turn (three before: compile, samples, run)


def test_the_summary_says_the_processes_were_forked_from_one_server(live: Path, tmp_path: Path) -> None:
    fake = StagedReplay(load_capture(live), compile_s=0.01)
    fake.forked = True  # as the real replays say once their server served
    result = rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None], ahead=3, prepare="context", forked=True)
    assert result.forked and result.exit_code == 0
    words = rt.render_summary(result)
    assert "prepared (imports, CUDA context, profiler)" in words
    assert "(forked from one process that imported torch and nvFuser once)" in words
    assert "idle CUDA contexts sat beside each replay's samples" in words  # what a spare's context costs
    default = StagedReplay(load_capture(live), compile_s=0.01)
    default.forked = True
    words = rt.render_summary(rt.roundtrip(live, tmp_path / "default", replay=default, devices=[None]))
    # the default: the imports were the server's, and nothing touched the GPU before a process's turn
    assert (
        "each process forked while the one before ran, from one process that imported torch and nvFuser once" in words
    )
    assert "nothing on the GPU before its turn" in words and "imports only" not in words
    handover = StagedReplay(load_capture(live), compile_s=0.01)
    handover.forked = True
    words = rt.render_summary(
        rt.roundtrip(live, tmp_path / "handover", replay=handover, devices=[None], prepare="handover")
    )
    assert "each process forked while the one before ran" in words and "imports only" not in words
    assert "each began its turn (CUDA context, compile) as the one before it had taken its samples" in words
    fresh = rt.roundtrip(live, tmp_path / "again", replay=StagedReplay(load_capture(live)), devices=[None])
    assert not fresh.forked and "forked" not in rt.render_summary(fresh)
    assert "idle CUDA contexts" not in rt.render_summary(fresh)  # the default: none held beside the samples
    # asked for (the default) but not done: a server that could not serve says so in the summary too
    unserved = StagedReplay(load_capture(live))
    unserved.forked = False
    fell_back = rt.roundtrip(live, tmp_path / "fell", replay=unserved, devices=[None], forked=True)
    assert not fell_back.forked and "forked" not in rt.render_summary(fell_back)


def test_a_spare_prepares_only_once_imported_and_the_head_waits_for_preparations_under_way(
    live: Path, tmp_path: Path
) -> None:
    """Slow preparations, quick samples: a sample never starts inside another replay's preparation."""
    fake = StagedReplay(load_capture(live), import_s=0.01, prepare_s=0.1, sample_s=0.01)
    rt.roundtrip(live, tmp_path / "rt", replay=fake, devices=[None], ahead=4, prepare="gpu")
    assert not _overlapping(fake.windows, None)


def test_ctrl_c_cancels_every_spare_and_a_rerun_replays_them(live: Path, tmp_path: Path) -> None:
    capture = load_capture(live)
    fake = StagedReplay(capture)
    ended: list[str] = []

    class StoppedAfterTheSecond:
        """Ctrl-C right after the second replay ended (raised in the worker, it reaches the main
        thread as Ctrl-C would), while 3 spares are held."""

        def start(self, scripts, output, device):
            child = fake.start(scripts, output, device)
            run = child.run

            def run_then_stop(timeout_s=None):
                run(timeout_s)
                ended.append(Path(scripts[0]).stem)
                if len(ended) == 2:
                    raise KeyboardInterrupt

            child.run = run_then_stop
            return child

        def __call__(self, scripts, output, device):
            raise AssertionError("every replay is started ahead here")

    result = rt.roundtrip(live, tmp_path / "rt", replay=StoppedAfterTheSecond(), devices=[None], ahead=3, prepare="gpu")
    assert result.interrupted and result.replayed_now == 1  # the second ended, its result not kept
    assert len(fake.cancelled) == 3, (fake.started, fake.cancelled)  # every spare held, unused
    assert not (set(fake.cancelled) & set(fake.scripts_run))
    again = FakeReplay(capture)
    result = rt.roundtrip(live, tmp_path / "rt", replay=again, devices=[None], prestart=False)
    assert result.resumed == 1 and result.replayed_now == 10 and not result.interrupted
    assert set(fake.cancelled) <= set(again.scripts_run)


def test_isolation_fusion_is_the_reference_every_process_started_in_its_turn(
    live: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fusiondiff.front import cli

    seen = {}

    def fake_roundtrip(*args, **kwargs):
        seen.update(kwargs)
        raise SystemExit(0)

    monkeypatch.setattr(rt, "roundtrip", fake_roundtrip)
    with pytest.raises(SystemExit):
        cli.main(["roundtrip", str(live), "-o", str(tmp_path / "rt"), "--isolation", "fusion"])
    assert seen["prestart"] is False
    with pytest.raises(SystemExit):
        cli.main(["roundtrip", str(live), "-o", str(tmp_path / "rt"), "--ahead", "2", "--prepare-ahead", "imports"])
    assert seen["prestart"] is True and seen["ahead"] == 2 and seen["prepare"] == "imports"
    with pytest.raises(SystemExit):
        cli.main(["roundtrip", str(live), "-o", str(tmp_path / "rt")])
    assert seen["ahead"] == stages.DEFAULT_AHEAD == 1 and seen["prepare"] == "imports"
    # forked from the run's server unless asked otherwise: no process but the one timing holds a context
    assert seen["forked"] is True is stages.DEFAULT_FORKED
    with pytest.raises(SystemExit):
        cli.main(
            ["roundtrip", str(live), "-o", str(tmp_path / "rt"), "--prepare-ahead", "context", "--processes", "fresh"]
        )
    assert seen["forked"] is False and seen["prepare"] == "context"
