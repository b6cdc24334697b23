"""Replay processes forked from a server that imported torch and nvFuser once
(``roundtrip --processes forked``, replay/fork_server.py), on this machine: the child runs the real
replay child's code as a fresh process would and reports the same way; it leads its own session, is
stopped at its timeout and by cancel, carries the run's token; scripts with their own NVFUSER_*
settings start fresh; a server whose imports initialized CUDA refuses to serve."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fusiondiff.recording.device_watch import TOKEN_ENV
from fusiondiff.records.errors import ReplayError
from fusiondiff.replay import fork_server, runner
from fusiondiff.roundtrip.replays import FORK_SERVER_LOG, ChildReplays

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork and /proc: Linux")


@pytest.fixture
def server(tmp_path):
    server = fork_server.ForkServer(log_file=tmp_path / "server.log")
    assert server.wait_ready(60) is None
    yield server
    server.close()


def _script(tmp_path: Path, text: str = "x = 1\n", name: str = "s.py") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _started_and_gated(tmp_path: Path, script: str, server, name: str = "r"):
    """A replay started ahead (gated at its imports), once it waits at its gate: its pid, its
    parent's pid and its session."""
    pending = runner.start_replay([script], output=str(tmp_path / f"{name}.json"), fork_server=server, gate="imports")
    child = pending._child
    deadline = time.monotonic() + 60
    while child.stage() != "imported" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert child.stage() == "imported"
    pid = child._proc.pid
    parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return pending, pid, parent, os.getsid(pid)


def test_a_forked_replay_reports_as_a_fresh_one_does(tmp_path, server):
    script = _script(tmp_path)
    messages = {}
    for how, chosen in (("forked", server), ("fresh", None)):
        pending, pid, parent, session = _started_and_gated(tmp_path, script, chosen, how)
        assert session == pid  # its own session: the parent stops its whole group
        assert parent == (server._proc.pid if how == "forked" else os.getpid())
        with pytest.raises(ReplayError) as failed:
            pending.run()  # the same replay child's code, failing the same way where torch is missing
        messages[how] = str(failed.value)
    assert messages["forked"] == messages["fresh"]


def test_a_forked_child_is_stopped_at_its_timeout_and_reports_it(tmp_path, server):
    pending, *_ = _started_and_gated(tmp_path, _script(tmp_path), server)
    started = time.monotonic()
    outcome = pending._child.wait(0.5, lambda m: None)  # never let go: it waits at its gate
    assert outcome.status == "timeout" and time.monotonic() - started < 30


def test_cancel_kills_a_gated_forked_child_and_the_server_reports_its_end(tmp_path, server):
    pending, pid, *_ = _started_and_gated(tmp_path, _script(tmp_path), server)
    pending.cancel()
    assert pending._child._proc.returncode is not None and pending._child._proc.returncode < 0
    assert not fork_server._alive(pid)


def test_scripts_with_their_own_nvfuser_settings_start_fresh(tmp_path, server):
    script = _script(tmp_path, 'import os\nos.environ["NVFUSER_DISABLE"] = "parallel_compile"\n')
    pending, _, parent, _ = _started_and_gated(tmp_path, script, server)
    assert parent == os.getpid()
    pending.cancel()
    assert server.can_serve({}) and not server.can_serve({"NVFUSER_DISABLE": "parallel_compile"})


def test_a_server_whose_imports_initialized_cuda_refuses_and_says_why(tmp_path, monkeypatch):
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "torch.py").write_text("class cuda:\n    @staticmethod\n    def is_initialized():\n        return True\n")
    monkeypatch.setenv("PYTHONPATH", f"{fake}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    server = fork_server.ForkServer(log_file=tmp_path / "server.log")
    try:
        assert "initialized CUDA" in (server.wait_ready(60) or "")
        with pytest.raises(ReplayError, match="initialized CUDA"):
            server.spawn("{}", {})
    finally:
        server.close()


@pytest.mark.parametrize("profiler_imports", [True, False])
def test_a_server_for_torch_profiler_replays_imports_the_profilers_first_imports(
    tmp_path, monkeypatch, profiler_imports
):
    fake = tmp_path / "fake"
    (fake / "torch" / "_inductor").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text(
        "class cuda:\n    @staticmethod\n    def is_initialized():\n        return False\n"
    )
    (fake / "torch" / "_inductor" / "__init__.py").write_text("")
    mark = tmp_path / "inductor-imported"
    (fake / "torch" / "_inductor" / "config.py").write_text(f"open({str(mark)!r}, 'w').close()\n")
    monkeypatch.setenv("PYTHONPATH", f"{fake}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    server = fork_server.ForkServer(log_file=tmp_path / "server.log", profiler_imports=profiler_imports)
    try:
        assert server.wait_ready(60) is None
        # what torch.profiler's first window would import in every child (1.4-2.3 s on the H200)
        assert mark.exists() == profiler_imports
    finally:
        server.close()


def test_the_round_trips_replay_forks_from_one_server_with_the_token_and_stops_it(tmp_path):
    script = _script(tmp_path)
    replay = ChildReplays(token="tok-123", gate="imports", forked=True)
    logs = tmp_path / "logs"
    first = replay.start([script], logs / "a.json", "0")
    second = replay.start([script], logs / "b.json", "0")
    try:
        server = replay._server
        assert server is not None and (logs / FORK_SERVER_LOG).exists()
        for pending in (first, second):
            environ = Path(f"/proc/{pending._child._proc.pid}/environ").read_bytes().split(b"\0")
            assert f"{TOKEN_ENV}=tok-123".encode() in environ  # Ctrl-C finds it as it finds a fresh one
        # sent to a Slurm task without this machine's server
        assert pickle.loads(pickle.dumps(replay))._server is None
    finally:
        first.cancel()
        second.cancel()
        replay.close()
    assert replay._server is None and server._proc.returncode == 0
    assert "OS thread(s) after its imports; serving" in (logs / FORK_SERVER_LOG).read_text()


def test_a_child_whose_server_died_is_still_cancelled_and_reported(tmp_path):
    import signal
    import threading

    server = fork_server.ForkServer(log_file=tmp_path / "server.log")
    try:
        pending, pid, *_ = _started_and_gated(tmp_path, _script(tmp_path), server)
        os.kill(server._proc.pid, signal.SIGKILL)
        server._proc.wait()
        done = threading.Event()
        threading.Thread(target=lambda: (pending.cancel(), done.set()), daemon=True).start()
        assert done.wait(20), "cancel waited for a child whose status the dead server could not report"
        assert pending._child._proc.returncode is not None and not fork_server._alive(pid)
    finally:
        server.close()


def test_a_round_trip_whose_server_cannot_serve_says_so_once_and_starts_fresh_processes(tmp_path, monkeypatch, capsys):
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "torch.py").write_text("class cuda:\n    @staticmethod\n    def is_initialized():\n        return True\n")
    monkeypatch.setenv("PYTHONPATH", f"{fake}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    replay = ChildReplays(gate="imports", forked=True)
    started = [replay.start([_script(tmp_path)], tmp_path / "logs" / f"{n}.json", None) for n in "ab"]
    try:
        assert replay._server is None and not replay.forked
        for pending in started:
            parent = int(Path(f"/proc/{pending._child._proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            assert parent == os.getpid()  # fresh, from here
        warned = capsys.readouterr().err
        assert warned.count("no forked replay processes") == 1 and "initialized CUDA" in warned
    finally:
        for pending in started:
            pending.cancel()


def test_a_round_trip_with_forked_processes_runs_each_replay_and_leaves_no_process(tmp_path):
    """The whole path on this machine, where a replay cannot run (no nvFuser): each distinct fusion's
    replay is a forked child that fails as a fresh one would, the server is stopped at the end, and no
    process of the run is left."""
    from fusiondiff import roundtrip as rt
    from fusiondiff.roundtrip.run import _stop_replays

    live = Path(__file__).parent.parent / "data" / "fidelity" / "pythia" / "live.json"
    replay = ChildReplays(token="tok-forked-run", gate="context", forked=True)
    result = rt.roundtrip(live, tmp_path / "rt", replay=replay, devices=[None], ahead=3, prepare="context", forked=True)
    assert result.forked and result.replayed_now == 0 and len(result.not_replayed) == len(result.distinct)
    messages = set(result.not_replayed.values())
    assert len(messages) == 1 and ("torch" in next(iter(messages)) or "nvFuser" in next(iter(messages)))
    assert replay._server is None and "serving" in (tmp_path / "rt" / "logs" / FORK_SERVER_LOG).read_text()
    phases = [p for p in (tmp_path / "rt" / "logs").glob("*.phases.json")]
    assert len(phases) == len(result.distinct)
    marker = f"{TOKEN_ENV}=tok-forked-run".encode()
    left = [
        entry.name
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _environ_has(entry, marker) and fork_server._alive(int(entry.name))
    ]
    assert left == []
    _stop_replays("tok-forked-run")  # nothing to stop


def _environ_has(entry: Path, marker: bytes) -> bool:
    try:
        return marker in (entry / "environ").read_bytes().split(b"\0")
    except OSError:
        return False


def test_ctrl_c_stops_the_server_and_its_children_by_the_runs_token(tmp_path):
    """What the round trip does on Ctrl-C (run._stop_replays): every process carrying the run's token
    goes, the fork server and the children it forked included; closing it afterwards returns."""
    from fusiondiff.roundtrip.run import _stop_replays

    replay = ChildReplays(token="tok-ctrl-c", gate="imports", forked=True)
    started = [replay.start([_script(tmp_path)], tmp_path / "logs" / f"{n}.json", None) for n in "ab"]
    for pending in started:
        deadline = time.monotonic() + 30
        while pending._child.stage() != "imported" and time.monotonic() < deadline:
            time.sleep(0.02)
    server = replay._server
    assert server is not None
    pids = [pending._child._proc.pid for pending in started] + [server._proc.pid]
    _stop_replays("tok-ctrl-c")
    deadline = time.monotonic() + 10
    while any(fork_server._alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(fork_server._alive(pid) for pid in pids)
    began = time.monotonic()
    for pending in started:
        pending.cancel()
    replay.close()
    assert time.monotonic() - began < 10


def test_scripts_that_disagree_on_nvfuser_settings_start_fresh_and_say_so_there(tmp_path, server):
    first = _script(tmp_path, 'import os\nos.environ["NVFUSER_DISABLE"] = "parallel_compile"\n', "a.py")
    second = _script(tmp_path, 'import os\nos.environ["NVFUSER_DISABLE"] = "kernel_reuse"\n', "b.py")
    pending = runner.start_replay([first, second], output=str(tmp_path / "r.json"), fork_server=server)
    assert isinstance(pending._child._proc, subprocess.Popen)  # fresh: the child reports the conflict
    with pytest.raises(ReplayError, match="set NVFUSER_DISABLE differently"):
        pending.run()
