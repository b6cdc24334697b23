"""Block-level captures crafted from the recorded H200 seed capture (tests/data/blocks/seed), for
the battery's third round (issue #40): the CTA arrays changed and the file's sha256 set to match,
so only what the change means is refused, never the file's checksum."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

SEED = Path(__file__).resolve().parent / "data" / "blocks" / "seed"
LIVE = json.loads((SEED / "live.json").read_text())

Arrays = dict[str, np.ndarray]


def arrays() -> Arrays:
    from fusiondiff.io.timelines import decode

    return decode((SEED / "live.timeline.safetensors").read_bytes(), "seed")


def write(folder: Path, data: dict[str, Any], found: Arrays | None, name: str = "cap") -> Path:
    """``data`` as ``folder/name.json``, its timeline file beside it holding ``found`` (the seed's
    arrays when None), the capture naming it and its sha256."""
    from fusiondiff.io.timelines import encode, sha256_of

    raw = encode(arrays() if found is None else found)
    timeline_name = f"{name}.timeline.safetensors"
    (folder / timeline_name).write_bytes(raw)
    for fusion in data["fusions"]:
        if fusion.get("sm_timeline") and fusion["sm_timeline"].get("file"):
            fusion["sm_timeline"]["file"] = timeline_name
            fusion["sm_timeline"]["sha256"] = sha256_of(raw)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def crafted(
    change_data: Callable[[dict[str, Any]], None] | None = None,
    change_arrays: Callable[[Arrays], None] | None = None,
) -> Callable[[Path, Path], None]:
    """A battery ``setup``: ``{tmp}/blk_other.json`` is the seed capture (with its timeline file),
    ``{tmp}/blk.json`` the same changed by ``change_data`` and its arrays by ``change_arrays``."""

    def setup(tmp: Path, cap: Path) -> None:
        data = copy.deepcopy(LIVE)
        found = arrays()
        if change_data:
            change_data(data)
        if change_arrays:
            change_arrays(found)
        write(tmp, data, found, "blk")
        write(tmp, copy.deepcopy(LIVE), None, "blk_other")

    return setup


def kernel0(data: dict[str, Any]) -> dict[str, Any]:
    fusion = next(f for f in data["fusions"] if f.get("sm_timeline"))
    return fusion["sm_timeline"]["kernels"][0]


def grid_of_kernel0(grid: list[int] | None) -> Callable[[dict[str, Any]], None]:
    """The grid recorded for the launch of the kernel whose timeline is first set to ``grid``."""

    def change(data: dict[str, Any]) -> None:
        fusion = next(f for f in data["fusions"] if f.get("sm_timeline"))
        order = fusion["sm_timeline"]["kernels"][0]["order"]
        next(k for k in fusion["kernels"] if k["order"] == order)["launch"]["grid"] = grid

    return change


def sm_relabelled(sm: int) -> Callable[[Arrays], None]:
    """Every CTA of SM 0 moved to SM ``sm``: the statistics stay those the capture holds."""

    def change(found: Arrays) -> None:
        for key in [k for k in found if k.endswith(".sm") or k.endswith(".sm_end")]:
            a = found[key].copy()
            a[a == 0] = sm
            found[key] = a

    return change


def nan_stats(data: dict[str, Any]) -> None:
    for name in ("span_ns", "tail_ns", "cta_p50_ns", "cta_p99_ns"):
        kernel0(data)["runs"][0][name] = None  # NaN: the record allows it (NaNFloat)


def large_sm_capture(folder: Path, sms: int, name: str = "cap") -> Path:
    """The seed capture recorded, as it were, on a GPU of ``sms`` SMs, its CTAs spread over all of them."""
    data = copy.deepcopy(LIVE)
    data["environment"]["sm_count"] = sms
    found = arrays()
    for key in [k for k in found if k.endswith(".sm")]:
        ctas = found[key].shape[1]
        found[key] = (np.arange(ctas, dtype=np.int64) * max(1, sms // ctas) % sms).reshape(1, ctas)
        end = key[: -len(".sm")] + ".sm_end"
        if end in found:
            found[end] = found[key].copy()
    _restate(data, found)
    return write(folder, data, found, name)


def _restate(data: dict[str, Any], found: Arrays) -> None:
    """Each measured kernel's statistics recomputed from its (changed) arrays, as the recorder would."""
    from fusiondiff.records.block_stats import run_stats
    from fusiondiff.records.codec import to_jsonable

    for fusion in data["fusions"]:
        for kernel in (fusion.get("sm_timeline") or {}).get("kernels", []):
            prefix = kernel.get("arrays")
            if not prefix or f"{prefix}.sm" not in found:
                continue
            end = found.get(f"{prefix}.sm_end")
            kernel["runs"] = [
                to_jsonable(
                    run_stats(
                        found[f"{prefix}.start_ns"][r],
                        found[f"{prefix}.end_ns"][r],
                        found[f"{prefix}.sm"][r],
                        None if end is None else end[r],
                    )
                )
                for r in range(found[f"{prefix}.sm"].shape[0])
            ]
