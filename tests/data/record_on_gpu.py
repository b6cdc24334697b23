"""Records the captures committed under tests/data/ (run on the H200; see each file's environment).

    source .gpu/activate.sh && python3 tests/data/record_on_gpu.py OUTDIR

Writes, under OUTDIR:
- seed/live_forward.json: live capture of the seed model's forward (13 nvFusions, 30 cold samples)
- seed/replay_forward.json: each of those 13 fusions written as a fusiondiff repro and replayed in
  its own fresh process; the 13 replays merged into one file (its source says so)
- seed/live_backward.json: the first backward fusion of a live training-step capture (a subset of
  that capture: its warnings say how many fusions it had)
- seed/replay_legacy_seed.json: the seed issue's legacy repro script replayed
- seed/replay_nvfuser_repro_nvFusion0.json: nvFuser's own repro script of nvFusion0 replayed
- offset/{live,replay_nvfuser,replay_fusiondiff}.json: the seed RMSNorm with its input at storage
  offset 1, recorded, then replayed from nvFuser's repro and from fusiondiff's
and prints the comparison figures quoted in the issue notes.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))


def log(message: str) -> None:
    print(message, flush=True)


def main(outdir: Path) -> None:
    import torch

    from benchmarks.bench_capture import measure_capture, report
    from fusiondiff.errors import FusionDiffError
    from fusiondiff.live import capture
    from fusiondiff.model import Capture, TimingProtocol
    from fusiondiff.options import RecordingOptions
    from fusiondiff.replay.repro import write_repros
    from fusiondiff.replay.runner import replay_script
    from fusiondiff.seed import build_seed_model
    from fusiondiff.store import load_capture, save_capture

    protocol = TimingProtocol(warmup=5, samples=30, l2_mode="cold")
    seed_dir, offset_dir, scratch = outdir / "seed", outdir / "offset", outdir / "scratch"
    for d in (seed_dir, offset_dir, scratch):
        d.mkdir(parents=True, exist_ok=True)

    t = time.perf_counter()
    model, compiled, idx = build_seed_model()
    compiled(idx)
    torch.cuda.synchronize()
    log(f"seed model compiled in {time.perf_counter() - t:.1f} s")
    log("BENCH " + report(measure_capture(compiled, idx)))

    with capture(seed_dir / "live_forward.json", options=RecordingOptions(protocol=protocol), progress=log,
                 source="seed model forward (litgpt Llama-3-8B, n_layer=3, block 1024, batch 4, bf16, thunderfx)") as cap:
        compiled(idx)
    live = cap.capture

    with capture(options=RecordingOptions(protocol=protocol), source="seed model training step (forward + loss.backward())") as train:
        compiled(idx).float().sum().backward()
    model.zero_grad(set_to_none=True)
    backward = [f for f in train.capture.fusions if f.trace == "backward"]
    log(f"training step: {len(train.capture.fusions)} fusions, {len(backward)} backward")
    subset = dataclasses.replace(
        train.capture, fusions=(backward[0],),
        warnings=train.capture.warnings + (f"subset: 1 of the {len(train.capture.fusions)} fusions of this capture kept (the first backward one)",),
    )
    save_capture(subset, seed_dir / "live_backward.json")

    scripts = write_repros(seed_dir / "live_forward.json", scratch / "repros")
    replays = []
    log("fusion      live_us  replay_us  diff_%  same_kernels")
    for fusion, script in zip(live.fusions, sorted(scripts, key=lambda p: int(p.stem.rsplit("nvFusion", 1)[1]))):
        path = replay_script(str(script), output=str(scratch / f"replay_{fusion.name}.json"), options=RecordingOptions(protocol=protocol))
        replay = load_capture(path)
        replays.append(replay)
        r = replay.fusions[0]
        same = [(k.normalized_name, k.launch) for k in fusion.kernels] == [(k.normalized_name, k.launch) for k in r.kernels]
        diff = 100 * (r.timing.median_ns - fusion.timing.median_ns) / fusion.timing.median_ns
        log(f"{fusion.name:<10} {fusion.timing.median_ns / 1e3:8.2f} {r.timing.median_ns / 1e3:9.2f} {diff:+7.2f}  {same}")
    merged = Capture(
        kind="replay", environment=replays[0].environment, protocol=replays[0].protocol,
        fusions=tuple(dataclasses.replace(r.fusions[0], name=f.name) for r, f in zip(replays, live.fusions)),
        source="fusiondiff repro of each seed forward fusion, each replayed in its own fresh process (13 replays merged)",
        warnings=tuple(dict.fromkeys(w for r in replays for w in r.warnings)),
    )
    save_capture(merged, seed_dir / "replay_forward.json")

    replay_script(str(HERE / "seed" / "legacy_repro.py"), output=str(seed_dir / "replay_legacy_seed.json"), options=RecordingOptions(protocol=protocol))
    nvf0 = scratch / "nvfuser_repro_nvFusion0.py"
    nvf0.write_text(live.fusions[0].repro_script or "")
    try:
        replay_script(str(nvf0), output=str(seed_dir / "replay_nvfuser_repro_nvFusion0.json"), options=RecordingOptions(protocol=protocol))
    except FusionDiffError as exc:
        log(f"nvFuser's own repro of nvFusion0 failed to replay: {exc}")

    with capture(offset_dir / "live.json", options=RecordingOptions(protocol=protocol), source="seed RMSNorm, input at storage offset 1") as off:
        import runpy

        runpy.run_path(str(HERE / "offset_rmsnorm.py"), run_name="__main__")
    nvf_script = scratch / "offset_nvfuser_repro.py"
    nvf_script.write_text(off.capture.fusions[0].repro_script or "")
    replay_script(str(nvf_script), output=str(offset_dir / "replay_nvfuser.json"), options=RecordingOptions(protocol=protocol))
    ours = write_repros(offset_dir / "live.json", scratch / "offset_fusiondiff_repro.py")[0]
    replay_script(str(ours), output=str(offset_dir / "replay_fusiondiff.json"), options=RecordingOptions(protocol=protocol))
    for name in ("live", "replay_nvfuser", "replay_fusiondiff"):
        c = load_capture(offset_dir / f"{name}.json")
        f = c.fusions[0]
        log(f"offset {name:<18} {f.timing.median_ns / 1e3:7.2f} us  " + ", ".join(
            f"{k.normalized_name} block {k.launch.block} regs {k.launch.registers_per_thread}" for k in f.kernels))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
