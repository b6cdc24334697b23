"""The round trip of issue #10, as a new user runs it, with the command line only:

    fusiondiff capture SCRIPT -o live.json --cuda-source
    fusiondiff repro live.json -o repros/
    fusiondiff replay repros/ -o replay.json --cuda-source
    fusiondiff diff live.json replay.json --json diff.json

for litgpt training steps (forward and backward), then the crash case (nvFuser's own repro of an
embedding gather) and a pointwise control. Prints one summary line per case and writes, under
OUTDIR, every capture, log and diff, plus ``summary.json``. Needs a GPU with Thunder, nvFuser, litgpt.

    python3 repro/fidelity/check_round_trip.py OUTDIR [CASE ...]

CASES: llama3 (the seed model), pythia (LayerNorm + GELU), qwen (RMSNorm + SwiGLU, qkv bias),
crash, control. Default: all.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRAINING_STEPS = {
    "llama3": ["--model", "Llama-3-8B", "--layers", "3", "--block", "1024", "--batch", "4"],
    "pythia": ["--model", "pythia-1b", "--layers", "2", "--block", "512", "--batch", "2"],
    "qwen": ["--model", "Qwen2.5-0.5B", "--layers", "2", "--block", "512", "--batch", "2"],
}


def fusiondiff(*args: str, log: Path) -> int:
    """Run the CLI as a user would; its stdout and stderr go to ``log``."""
    started = time.perf_counter()
    with open(log, "a") as out:
        out.write(f"$ fusiondiff {' '.join(args)}\n")
        out.flush()
        code = subprocess.call([sys.executable, "-m", "fusiondiff", *args], stdout=out, stderr=subprocess.STDOUT)
        out.write(f"[exit {code}, {time.perf_counter() - started:.1f} s]\n")
    return code


def summarize(case: str, work: Path, codes: dict[str, int]) -> dict:
    """What the diff says about fidelity: CUDA source, constants, speed verdicts, exit code."""
    summary: dict = {"case": case, "exit_codes": codes}
    diff_path = work / "diff.json"
    if not diff_path.exists():
        return summary
    record = json.loads(diff_path.read_text())
    diff = record["diff"]
    findings = diff["findings"]
    verdicts = [p["timing"]["verdict"] for p in diff["pairs"]]
    live = json.loads((work / "live.json").read_text())
    kernels = sum(len(f["kernels"]) for f in live["fusions"])
    summary.update(
        fusions_live=len(live["fusions"]),
        pairs=len(diff["pairs"]),
        unmatched=len(diff["unmatched"]),
        verdicts={v: verdicts.count(v) for v in sorted(set(verdicts))},
        kernels_live=kernels,
        cuda_source_findings=sum(len(f["kernels"]) for f in findings if f["rule"] == "cuda_source"),
        constant_findings=sum(1 for f in findings if f["rule"] == "constant_precision"),
        findings=[(f["rank"], f["rule"], f["role"], f["title"], round(f["explained_ns"])) for f in findings],
        verdict=record["verdict"],
        diff_exit=record["exit_code"],
        failed=[p["label"] for p in diff["pairs"] if p["failed"]],
    )
    return summary


def round_trip(case: str, script: Path, script_args: list[str], out: Path, *, nvfuser_repro: bool = False) -> dict:
    work = out / case
    work.mkdir(parents=True, exist_ok=True)
    log = work / "commands.log"
    codes = {
        "capture": fusiondiff(
            "capture", "-o", str(work / "live.json"), "--cuda-source", str(script), *script_args, log=log
        )
    }
    if codes["capture"] != 0:
        return {"case": case, "exit_codes": codes}
    if nvfuser_repro:
        # what a bug report carries: nvFuser's own repro_script_for of the live fusion
        live = json.loads((work / "live.json").read_text())
        repros = work / "repros"
        repros.mkdir(exist_ok=True)
        for i, f in enumerate(live["fusions"]):
            (repros / f"nvfuser_repro_{i}.py").write_text(f["repro_script"])
    else:
        codes["repro"] = fusiondiff("repro", str(work / "live.json"), "-o", str(work / "repros"), log=log)
    codes["replay"] = fusiondiff(
        "replay", str(work / "repros"), "-o", str(work / "replay.json"), "--cuda-source", log=log
    )
    if (work / "replay.json").exists():
        codes["diff"] = fusiondiff(
            "diff", str(work / "live.json"), str(work / "replay.json"), "--json", str(work / "diff.json"), log=log
        )
    return summarize(case, work, codes)


def main() -> None:
    out = Path(sys.argv[1])
    cases = sys.argv[2:] or [*TRAINING_STEPS, "crash", "control"]
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for case in cases:
        started = time.perf_counter()
        if case in TRAINING_STEPS:
            summary = round_trip(case, HERE / "train_step.py", ["--", *TRAINING_STEPS[case]], out)
        elif case == "crash":
            summary = round_trip(case, HERE / "embedding_gather.py", [], out, nvfuser_repro=True)
        elif case == "control":
            summary = round_trip(case, HERE / "tanh_gelu.py", [], out)
        else:
            raise SystemExit(f"unknown case {case!r}")
        summary["seconds"] = round(time.perf_counter() - started, 1)
        results.append(summary)
        print(json.dumps(summary), flush=True)
        (out / "summary.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
