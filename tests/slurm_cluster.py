"""A real Slurm cluster of one node on localhost, for the round trip's Slurm tests: Debian's
``slurmctld``, ``slurmd`` and ``munged``, each started with its own configuration, key, socket, state
and logs under a temporary folder (nothing in /etc or /run is used or changed), and stopped at the
end. It needs root (slurmd runs the jobs as their user); :func:`unavailable` says why it cannot start."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "sinfo")
PARTITION = "fusiondiff"


def unavailable() -> str | None:
    """Why the cluster cannot start here, or None."""
    missing = [name for name in (*DAEMONS, *CLIENTS) if _which(name) is None]
    if missing:
        return (
            f"Slurm or munge is not installed ({', '.join(missing)} missing; "
            "apt-get install slurmctld slurmd slurm-client munge)"
        )
    if os.geteuid() != 0:
        return "the one-node Slurm cluster is started as root (slurmd runs jobs as their user), and this is not root"
    return None


def _which(name: str) -> str | None:
    return shutil.which(name, path=os.environ.get("PATH", "") + os.pathsep + "/usr/sbin")


def _path(name: str) -> str:
    found = _which(name)
    assert found is not None, name
    return found


def _free_ports(count: int) -> list[int]:
    sockets = []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def slurm_conf(folder: Path, munge_socket: Path) -> str:
    ctld_port, d_port = _free_ports(2)
    return f"""\
ClusterName=fusiondiff
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName={PARTITION} Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


@contextlib.contextmanager
def one_node_cluster(folder: Path, timeout_s: float = 60.0) -> Iterator[dict[str, str]]:
    """Start munged, slurmctld and slurmd for one node on localhost under ``folder``; yield the
    environment a client needs (``SLURM_CONF``); stop them all at the end. Raises RuntimeError,
    with the daemons' logs, when the node is not idle within ``timeout_s``."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    for name in ("state", "spool", "munge"):
        (folder / name).mkdir(exist_ok=True)
        os.chmod(folder / name, 0o700)
    munge = folder / "munge"
    key = munge / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o600)
    munge_socket = munge / "munge.socket"
    conf = folder / "slurm.conf"
    conf.write_text(slurm_conf(folder, munge_socket))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    started: list[subprocess.Popen[bytes]] = []

    def start(*command: str) -> None:
        log = open(folder / f"{Path(command[0]).name}.out", "ab")  # noqa: SIM115 - closed with the process
        started.append(subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))

    try:
        start(
            _path("munged"),
            "--foreground",
            "--force",
            f"--key-file={key}",
            f"--socket={munge_socket}",
            f"--pid-file={munge}/munged.pid",
            f"--log-file={munge}/munged.log",
            f"--seed-file={munge}/munged.seed",
        )
        _wait(lambda: munge_socket.exists(), timeout_s, "munged's socket", folder)
        start(_path("slurmctld"), "-D", "-i", "-f", str(conf))
        start(_path("slurmd"), "-D", "-N", "localhost", "-f", str(conf))
        _wait(lambda: _node_state(env) == "idle", timeout_s, "the node idle in sinfo", folder)
        yield {"SLURM_CONF": str(conf)}
    finally:
        for process in reversed(started):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(started):
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5)


def _node_state(env: dict[str, str]) -> str:
    done = subprocess.run(
        [_path("sinfo"), "-h", "-N", "-o", "%t"], env=env, capture_output=True, text=True, timeout=10, check=False
    )
    return done.stdout.strip()


def _wait(ready: Callable[[], bool], timeout_s: float, what: str, folder: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.5)
    logs = "\n".join(
        f"--- {path.name}\n{path.read_text(errors='replace')[-2000:]}"
        for path in sorted([*folder.glob("*.log"), *folder.glob("*.out"), *folder.glob("munge/*.log")])
    )
    raise RuntimeError(f"no {what} after {timeout_s:g} s\n{logs}")
