"""Probe for the block-level timelines (issue #26), run once on the H200 before the design settled.

Questions, each answered in OUT/probe.json:
1. Does a clone of a fusion's executor cache (``FusionExecutorCache(fd.fec.fusion())``) compile the
   same kernels, under which names (also when the session's runtime was its second, ``r1``)?
2. Is ``NVFUSER_EXTERNAL_SRC`` read at every compile when set in-process after nvFuser started,
   and does one file holding every kernel of a fusion, repeated at every index, serve all
   segments (parallel compile included)?
3. What do ptxas' register/spill lines look like with ``warn_register_spill``, and where do they go?
4. %globaltimer resolution, cycles per ns, overhead of the probe per kernel.
5. Warp-specialized normalization (``ws_normalization``): early returns, warps_ended per CTA.
The full sources nvFuser gave are kept under OUT/sources for the CPU tests.

Usage: python3 repro/blocks/probe.py OUT
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch
from nvfuser_direct import DataType, FusionDefinition

try:
    from fusiondiff.replay.timeline_probe import HEADER_WORDS, RECORD_WORDS, Buffer, instrument, kernel_names
except ImportError:
    # the probe ran (2026-12-01) against the first record layout, four words per CTA, which was
    # never committed: fusiondiff's probe now writes per-warp words (instrument.record_words)
    raise SystemExit(
        "probe.py: this is the record of the probe run on 2026-12-01 against a first record layout that "
        "fusiondiff no longer has (its output is tests/data/blocks/probe/); it does not run against this "
        "fusiondiff: record block timelines with `fusiondiff capture --sm-timeline`"
    ) from None
from fusiondiff.recording.kineto import KinetoSource
from fusiondiff.recording.nvfuser_adapter import ir_constants
from fusiondiff.recording.timing import kernel_records, measure
from fusiondiff.records.model import TimingProtocol
from fusiondiff.replay.rebuild import faithful_definition
from fusiondiff.replay.script_safety import check_definition

OUT = Path(sys.argv[1])
(OUT / "sources").mkdir(parents=True, exist_ok=True)
RESULT: dict = {}


@contextlib.contextmanager
def captured_fds():
    """What the C++ side writes to stdout and stderr inside the block."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    tmp = tempfile.TemporaryFile(mode="w+b")
    os.dup2(tmp.fileno(), 1)
    os.dup2(tmp.fileno(), 2)
    box: dict = {}
    try:
        yield box
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
        tmp.seek(0)
        box["text"] = tmp.read().decode(errors="replace")


def rmsnorm(fd):
    t0 = fd.define_tensor(shape=[4, 1024, 4096], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    t1 = fd.define_tensor(shape=[4096], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    t2 = fd.ops.cast(t0, dtype=DataType.Float)
    t3 = fd.ops.cast(t1, dtype=DataType.Float)
    t8 = fd.ops.broadcast_in_dim(t3, shape=[4, 1024, 4096], broadcast_dims=[2])
    t10 = fd.ops.sum(fd.ops.mul(t2, t2), dims=[2], keepdim=False, dtype=DataType.Null)
    t15 = fd.ops.broadcast_in_dim(t10, shape=[4, 1024, 1], broadcast_dims=[0, 1])
    s17 = fd.ops.reciprocal(fd.define_scalar(4096.0, dtype=DataType.Double))
    t21 = fd.ops.rsqrt(fd.ops.add(fd.ops.mul(t15, s17), fd.define_scalar(1e-05, dtype=DataType.Double)))
    t26 = fd.ops.broadcast_in_dim(t21, shape=[4, 1024, 4096], broadcast_dims=[0, 1, 2])
    t29 = fd.ops.cast(fd.ops.mul(fd.ops.mul(t2, t26), t8), dtype=DataType.BFloat16)
    fd.add_output(t21)
    fd.add_output(t29)


def two_reductions(fd):
    t0 = fd.define_tensor(shape=[2048, 8192], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    t1 = fd.ops.sum(t0, dims=[0], keepdim=False, dtype=DataType.Null)
    t2 = fd.ops.sum(t0, dims=[1], keepdim=False, dtype=DataType.Null)
    t3 = fd.ops.exp(t0)
    t4 = fd.ops.sum(t3, dims=[1], keepdim=False, dtype=DataType.Null)
    fd.add_output(t1)
    fd.add_output(t2)
    fd.add_output(t4)


def dependent_reductions(fd):
    t0 = fd.define_tensor(shape=[2048, 8192], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    t1 = fd.ops.sum(t0, dims=[1], keepdim=False, dtype=DataType.Null)
    t2 = fd.ops.broadcast_in_dim(t1, shape=[2048, 8192], broadcast_dims=[0])
    t3 = fd.ops.mul(t0, t2)
    t4 = fd.ops.sum(t3, dims=[0], keepdim=False, dtype=DataType.Null)
    fd.add_output(t4)


FLUSH = torch.empty(2 * 64 * 2**20, dtype=torch.uint8, device="cuda")


def kernel_medians(run):
    """Per kernel: median (ns), grid, block and registers, under fusiondiff's own protocol."""
    protocol = TimingProtocol(warmup=5, samples=30, l2_mode="cold")
    sampled = measure(run, protocol, KinetoSource(lambda: FLUSH[:256].zero_()), FLUSH.zero_, torch.cuda.synchronize)
    kernels, _, _ = kernel_records(sampled)
    return {
        k.name: {
            "median_ns": k.timing.median_ns,
            "grid": k.launch.grid,
            "block": k.launch.block,
            "registers": k.launch.registers_per_thread,
            "smem": k.launch.shared_mem_bytes,
        }
        for k in kernels
    }


def rebuilt(fd):
    """A new FusionDefinition of the same fusion, from nvFuser's print with the exact constants."""
    text = faithful_definition(str(fd), ir_constants(fd)[0]).text
    function = check_definition(text)
    namespace = {"FusionDefinition": FusionDefinition, "DataType": DataType}
    exec(compile(text, "<rebuilt>", "exec"), namespace)
    with FusionDefinition() as new:
        namespace[function](new)
    return new


def case(name, define, inputs, enable=(), first_inputs=None):
    res: dict = {}
    RESULT[name] = res
    if isinstance(define, str):
        namespace = {"FusionDefinition": FusionDefinition, "DataType": DataType}
        exec(compile(define, "<recorded>", "exec"), namespace)
        define = namespace["nvfuser_fusion"]
    with FusionDefinition() as fd:
        define(fd)
    res["fusion_methods"] = [m for m in dir(fd.fusion) if not m.startswith("__")] if name == "rmsnorm" else None
    kw = {"_enable_options": list(enable)} if enable else {}
    if first_inputs is not None:
        fd.execute(first_inputs, **kw)
    ref = fd.execute(inputs, **kw)
    torch.cuda.synchronize()
    full = fd.fec.get_cuda_kernel(inputs, True, 0)
    only = fd.fec.get_cuda_kernel(inputs, False, 0)
    (OUT / "sources" / f"{name}.session.cu").write_text(full)
    res["session_kernels"] = kernel_names(full)
    res["session_full_chars"] = len(full)
    body = only
    res["markers"] = {
        m: body.count(m)
        for m in (
            "cp.async.bulk",
            "mbarrier",
            "return;",
            "exit;",
            "__syncthreads",
            "grid_sync",
            "cluster",
            "setmaxnreg",
        )
    }
    # 1. clone, plain, with ptxas lines asked for
    t = time.perf_counter()
    fd2 = rebuilt(fd)
    with captured_fds() as box:
        out2 = fd2.execute(inputs, _enable_options=[*enable, "warn_register_spill"])
        torch.cuda.synchronize()
    res["clone_compile_s"] = time.perf_counter() - t
    res["clone_plain_log"] = box["text"][-3000:]
    full2 = fd2.fec.get_cuda_kernel(inputs, True, 0)
    (OUT / "sources" / f"{name}.clone.cu").write_text(full2)
    res["clone_kernels"] = kernel_names(full2)
    res["clone_full_equal_session"] = full2 == full
    res["clone_kernel_only_equal"] = fd2.fec.get_cuda_kernel(inputs, False, 0) == only
    res["clone_outputs_equal"] = all(torch.equal(a, b) for a, b in zip(ref, out2))
    # 2. instrument every kernel in one file, repeated at every index
    plain = kernel_medians(lambda: fd2.fec.execute(inputs, **kw))
    res["plain_medians"] = plain
    grids = {k: v["grid"][0] * v["grid"][1] * v["grid"][2] for k, v in plain.items() if v["grid"]}
    buffers = {}
    specs = {}
    for k in res["clone_kernels"]:
        cap = grids.get(k, 65536)
        buf = torch.zeros(HEADER_WORDS + cap * RECORD_WORDS, dtype=torch.int64, device="cuda")
        buffers[k] = buf
        specs[k] = Buffer(buf.data_ptr(), cap)
    text = instrument(full2, specs)
    path = Path(tempfile.mkdtemp()) / "k.cu"
    path.write_text(text)
    (OUT / "sources" / f"{name}.instrumented.cu").write_text(text)
    fd_path = f"/dev/fd/{os.open(path, os.O_RDONLY)}"
    os.environ["NVFUSER_EXTERNAL_SRC"] = ",".join([fd_path] * 4096)
    t = time.perf_counter()
    fd3 = rebuilt(fd)
    try:
        with captured_fds() as box:
            out3 = fd3.execute(inputs, _enable_options=[*enable, "warn_register_spill"])
            torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001
        res["instrumented_error"] = str(exc)[:3000]
        res["instrumented_log"] = box.get("text", "")[-3000:]
        del os.environ["NVFUSER_EXTERNAL_SRC"]
        return
    finally:
        os.environ.pop("NVFUSER_EXTERNAL_SRC", None)
    res["instrumented_compile_s"] = time.perf_counter() - t
    res["instrumented_log"] = box["text"][-4000:]
    res["external_messages"] = box["text"].count("Compiling external CUDA code")
    res["instrumented_outputs_equal"] = all(torch.equal(a, b) for a, b in zip(ref, out3))
    res["instrumented_medians"] = kernel_medians(lambda: fd3.fec.execute(inputs, **kw))
    # 3. one cold run, decode
    for b in buffers.values():
        b.zero_()
    FLUSH.zero_()
    torch.cuda.synchronize()
    fd3.fec.execute(inputs, **kw)
    torch.cuda.synchronize()
    decoded = {}
    for k, b in buffers.items():
        h = b[:HEADER_WORDS].cpu().tolist()
        rec = b[HEADER_WORDS:].view(-1, RECORD_WORDS).cpu()
        torch.save(b.cpu(), OUT / "sources" / f"{name}.{k}.buffer.pt")
        written = rec[:, 0] != 0
        r = rec[written]
        d = {"header": h, "capacity": rec.shape[0], "written": int(written.sum())}
        if r.shape[0]:
            start, end = r[:, 0], r[:, 1]
            t0 = int(start.min())
            dur = (end - start).double()
            cyc = (r[:, 3] - r[:, 2]).double()
            sm = r[:, 4] & 0xFFFFFFFF
            rank = r[:, 4] >> 32
            endsm = r[:, 5] - 1
            starts_sorted = torch.sort(start - t0).values
            diffs = torch.diff(starts_sorted)
            nz = diffs[diffs > 0]
            d.update(
                {
                    "span_ns": int(end.max()) - t0,
                    "cta_ns_median": float(dur.median()),
                    "cta_ns_p99": float(dur.quantile(0.99)),
                    "cycles_per_ns_median": float((cyc / dur.clamp(min=1)).median()),
                    "sms_used": int(torch.unique(sm).numel()),
                    "max_ctas_per_sm": int(torch.bincount(sm).max()),
                    "moved": int((endsm != sm).sum()),
                    "warps_ended_unique": torch.unique(r[:, 6]).tolist()[:10],
                    "rank_unique": torch.unique(rank).tolist()[:10],
                    "cluster_unique_count": int(torch.unique(r[:, 7]).numel()),
                    "start_diff_min_nonzero_ns": int(nz.min()) if nz.numel() else None,
                    "start_ns_mod_32_unique": torch.unique((start - t0) % 32).numel(),
                    "start_ns_mod_1000_unique": torch.unique((start - t0) % 1000).numel(),
                    "end_minus_start_min_ns": int((end - start).min()),
                }
            )
        decoded[k] = d
    res["decoded"] = decoded


def main():
    torch.manual_seed(0)
    x = torch.randn(4, 1024, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    storage = torch.randn(4 * 1024 * 4096 + 1, device="cuda", dtype=torch.bfloat16)
    x_off = storage[1:].view(4, 1024, 4096)
    y = torch.randn(2048, 8192, device="cuda", dtype=torch.float32)
    recorded = json.loads(Path("tests/data/cuda_source/live.json").read_text())["fusions"][0]
    rope = [
        torch.randn(1024, 128, device="cuda"),
        torch.randn(1024, 128, device="cuda"),
        torch.randn(4, 1024, 6144, device="cuda", dtype=torch.bfloat16),
    ]
    cases = [
        ("rmsnorm", rmsnorm, [x, w], (), None),
        ("rmsnorm_offset1_after_aligned", rmsnorm, [x_off, w], (), [x, w]),
        ("two_reductions", two_reductions, [y], (), None),
        ("dependent_reductions", dependent_reductions, [y], (), None),
        ("rope_resize", recorded["definition"], rope, (), None),
        ("rmsnorm_ws", rmsnorm, [x, w], ("ws_normalization",), None),
    ]
    for name, define, inputs, enable, first in cases:
        try:
            case(name, define, inputs, enable, first)
        except Exception:  # noqa: BLE001
            RESULT.setdefault(name, {})["error"] = traceback.format_exc()[-3000:]
        (OUT / "probe.json").write_text(json.dumps(RESULT, indent=1, default=str))
        print(name, "done", flush=True)
    RESULT["env"] = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "sms": torch.cuda.get_device_properties(0).multi_processor_count,
    }
    (OUT / "probe.json").write_text(json.dumps(RESULT, indent=1, default=str))


if __name__ == "__main__":
    main()
