"""The multi-GPU checks of issues #16 and #17 on one host with two GPUs, with the command line only:

1. capture under DDP + thunderfx, under FSDP2 + thunderfx, and under DDP with rank 1's inputs
   planted at storage offset 1 (``torchrun --nproc-per-node 2 -m fusiondiff capture ...``);
2. ``fusiondiff ranks`` on each session;
3. ``fusiondiff roundtrip`` of the planted session's rank files (every visible GPU);
4. with ``--more``: the earlier attempt's order (``thunderfx(DDP(model))`` with Dynamo's
   DDPOptimizer on) and Thunder's own ``thunder.distributed.ddp`` and ``fsdp``.

``--steps`` picks the sessions (and their order): ``--steps thunder_fsdp,ddp --no-roundtrip``.

Prints, per step, the exit code, the fusion records per rank and the verdicts; writes every
capture, log and output under OUT, and ``OUT/summary.json``. Each step has a timeout, cut to
what the run's ``--budget`` (540 s) has left, so the whole run stays under 9 minutes (the device's
limit per command is 10). NVLink multicast stays off: the NCCL_NVLS_ENABLE,
TORCH_SYMM_MEM_DISABLE_MULTICAST and NVSHMEM_DISABLE_NVLS the environment sets are kept, set to
off where unset, and a run where one is set otherwise is refused.

    python3 repro/multigpu/check_multigpu.py OUT [--steps ddp,fsdp,planted] [--more] [--no-roundtrip] [--nproc 2] [--budget 540]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
CAPTURE_TIMEOUT_S = 130
RANKS_TIMEOUT_S = 20
ROUNDTRIP_TIMEOUT_S = 140
SESSIONS: dict[str, tuple[str, list[str]]] = {
    "ddp": ("train_ddp.py", []),
    "fsdp": ("train_fsdp.py", []),
    "planted": ("train_ddp.py", ["--plant-offset-rank", "1"]),
    "ddp_first": ("train_ddp.py", ["--order", "ddp-first", "--optimize-ddp"]),
    "thunder_ddp": ("train_thunder_dist.py", ["--mode", "ddp"]),
    "thunder_fsdp": ("train_thunder_dist.py", ["--mode", "fsdp"]),
}
"""Each session: its script in this folder and its arguments."""
MORE = ("ddp_first", "thunder_ddp", "thunder_fsdp")
DEADLINE = [float("inf")]
"""When the whole run must be over (``--budget``): each step's timeout is cut to what is left."""


def environment() -> dict[str, str]:
    env = dict(os.environ)
    for name, off in MULTICAST_OFF.items():
        if env.get(name, off) != off:
            sys.exit(f"{name}={env[name]}: NVLink multicast must stay off on this host; refusing to run")
        env.setdefault(name, off)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def run(command: list[str], log: Path, timeout_s: int, env: dict[str, str]) -> tuple[int, float]:
    """Run ``command`` with its output in ``log``; (exit code, seconds). 124 after the timeout,
    which is cut to the time the run's budget has left (125: no time left, not started)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    timeout_s = int(min(timeout_s, DEADLINE[0] - time.perf_counter()))
    if timeout_s < 10:
        with open(log, "a") as out:
            out.write(f"$ {' '.join(command)}\n[not run: the run's --budget is spent]\n")
        return 125, 0.0
    started = time.perf_counter()
    with open(log, "a") as out:
        out.write(f"$ {' '.join(command)}\n")
        out.flush()
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True
        )
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 15)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
            code = 124
        took = time.perf_counter() - started
        out.write(f"[exit {code}, {took:.1f} s]\n")
    return code, took


def rank_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("live.rank*.json"))


def describe_ranks(folder: Path) -> list[dict]:
    """Per rank file: fusion records, kernels, communication warnings and collectives, device and backend."""
    found = []
    for path in rank_files(folder):
        data = json.loads(path.read_text())
        env = data.get("environment", {})
        fusions = data.get("fusions", [])
        found.append(
            {
                "file": path.name,
                "rank": env.get("rank"),
                "fusions": len(fusions),
                "kernels": sum(len(f.get("kernels", [])) for f in fusions),
                "calls": sum(f.get("call_count", 1) for f in fusions),
                "device": env.get("cuda_device_index"),
                "backend": env.get("distributed_backend"),
                "communication_warnings": sum(
                    1 for f in fusions for w in f.get("warnings", []) if w.startswith("communication kernels")
                ),
                # the session's collectives, recorded apart from the fusions across the capture block
                "collectives": {
                    k["name"]: {"calls": k["calls"], "total_us": round(k["total_ns"] / 1000, 2)}
                    for k in data.get("communication", [])
                },
                "collectives_not_recorded": [
                    w for w in data.get("warnings", []) if w.startswith("communication kernels not recorded")
                ],
                "offset_inputs": sorted(
                    {f"{f['name']}[{f.get('trace')}]" for f in fusions for t in f["inputs"] if t.get("storage_offset")}
                ),
            }
        )
    return found


def interesting(log: Path) -> list[str]:
    """The lines of a capture's log that say what happened: diagnostics, errors, what was written."""
    keep = ("thunderfx:", "thunder.distributed", "split:", "planted", "wrote ", "Error", "error:", "Signal", "SIGSEGV")
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    return [line for line in lines if any(k in line for k in keep)][:40]


def capture(name: str, script: str, script_args: list[str], out: Path, env: dict[str, str], nproc: int) -> dict:
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "capture.log"
    command = [
        sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc),
        "-m", "fusiondiff", "capture", str(HERE / script), "-o", str(folder / "live.json"), "--", *script_args,
    ]  # fmt: skip
    code, took = run(command, log, CAPTURE_TIMEOUT_S, env)
    ranks = describe_ranks(folder)
    print(f"\n== {name}: capture exit {code} in {took:.0f} s; {len(ranks)} rank file(s) (log: {log})")
    # exit 0 is not required: the stack has been seen to kill ranks with SIGSEGV at exit, after
    # the capture files were written; the files are what counts
    for r in ranks:
        print(
            f"   {r['file']}: rank {r['rank']}, {r['fusions']} fusion records ({r['calls']} calls, "
            f"{r['kernels']} kernels), cuda:{r['device']}, backend {r['backend']}, "
            f"communication warnings {r['communication_warnings']}, inputs at an offset in {r['offset_inputs'] or 'none'}"
        )
    for r in ranks:
        collectives = ", ".join(f"{n} {c['calls']}x {c['total_us']} us" for n, c in r["collectives"].items())
        print(f"   {r['file']} collectives: {collectives or 'none'}; {'; '.join(r['collectives_not_recorded'])}")
    for line in interesting(log):
        print(f"   | {line[:220]}")
    return {"name": name, "capture_exit": code, "capture_s": round(took, 1), "ranks": ranks}


def fusiondiff_ranks(step: dict, out: Path, env: dict[str, str]) -> None:
    folder = out / step["name"]
    if len(rank_files(folder)) < 2:
        print(f"   ranks: skipped ({len(rank_files(folder))} rank file(s))")
        return
    log = folder / "ranks.txt"
    code, _ = run([sys.executable, "-m", "fusiondiff", "ranks", str(folder)], log, RANKS_TIMEOUT_S, env)
    step["ranks_exit"] = code
    text = log.read_text(errors="replace").splitlines()
    print(f"   fusiondiff ranks: exit {code} ({log})")
    for line in text[1:25]:
        print(f"   > {line}")


def fusiondiff_roundtrip(step: dict, out: Path, env: dict[str, str]) -> None:
    folder = out / step["name"]
    files = rank_files(folder)
    if not files:
        print("   roundtrip: skipped (no rank file)")
        return
    log = folder / "roundtrip.txt"
    command = [sys.executable, "-m", "fusiondiff", "roundtrip", *map(str, files), "-o", str(folder / "roundtrip")]
    code, took = run(command, log, ROUNDTRIP_TIMEOUT_S, env)
    step["roundtrip_exit"], step["roundtrip_s"] = code, round(took, 1)
    text = log.read_text(errors="replace").splitlines()
    print(f"\n== roundtrip of {step['name']}'s rank files: exit {code} in {took:.0f} s ({log})")
    per_rank = next((i for i, t in enumerate(text) if t.startswith("per rank")), None)
    shown = text[1:5] + [t for t in text if "verdicts:" in t]
    shown += text[per_rank : per_rank + 5] if per_rank is not None else []
    for line in shown:
        print(f"   > {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="folder for every capture, log and output")
    parser.add_argument("--nproc", type=int, default=2, help="processes (GPUs) per session (default 2)")
    parser.add_argument(
        "--steps",
        default="ddp,fsdp,planted",
        help=f"sessions to capture, in this order (default ddp,fsdp,planted; known: {', '.join(SESSIONS)})",
    )
    parser.add_argument("--more", action="store_true", help=f"also {', '.join(MORE)}")
    parser.add_argument("--no-roundtrip", action="store_true", help="skip the round trip of the planted session")
    parser.add_argument(
        "--budget", type=float, default=540.0, help="seconds for the whole run; later steps get what is left (540)"
    )
    args = parser.parse_args()
    DEADLINE[0] = time.perf_counter() + args.budget
    env = environment()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    print("NVLink multicast off: " + ", ".join(f"{k}={env[k]}" for k in MULTICAST_OFF))
    started = time.perf_counter()
    chosen = [name.strip() for name in args.steps.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in SESSIONS]
    if unknown:
        parser.error(f"--steps: unknown {', '.join(unknown)} (known: {', '.join(SESSIONS)})")
    if args.more:
        chosen += [name for name in MORE if name not in chosen]
    steps = []
    for name in chosen:  # in the order given: a spent --budget skips the last ones
        script, script_args = SESSIONS[name]
        steps.append(capture(name, script, script_args, out, env, args.nproc))
        print(f"-- fusiondiff ranks of {name}")
        fusiondiff_ranks(steps[-1], out, env)
    planted = next((step for step in steps if step["name"] == "planted"), None)
    if planted is not None and not args.no_roundtrip:
        fusiondiff_roundtrip(planted, out, env)
    (out / "summary.json").write_text(json.dumps(steps, indent=1))
    print(f"\nall steps in {time.perf_counter() - started:.0f} s; summary in {out / 'summary.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
