"""Issue #40's cases of the battery (the third round): what was added since the second round.

``slurm``: ``roundtrip --executor slurm`` checks its Slurm parameters before anything is written
(a line break in ``--partition`` would be a shell line of the batch script) and needs Slurm's
commands (no ``srun``: one line, not submitit's traceback).

``writes``: nothing the round trip writes under DIR goes through a link (``DIR/summary.txt``,
``DIR/slurm``), and nothing outside DIR changes (the harness's snapshot).

``hangs``: a FIFO where a capture's saved inputs belong, a capture of a million empty gzip
members: bounded, one line or a clean result.

``blocks``: block-level records crafted from the recorded seed capture (tests/blocks_crafted.py):
a CTA on an SM past the GPU's count (2**33 once made ``report`` allocate 64 GiB), a timeline of 0
CTAs, of more CTAs than its kernel's recorded grid launches, of no runs and no refusal, NaN
statistics; in every report format.
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Callable
from pathlib import Path

from battery import Case, Run, fifo
from battery_scripts import PROGRESS, ROUNDTRIP
from blocks_crafted import crafted, grid_of_kernel0, kernel0, nan_stats, sm_relabelled

SLURM = "roundtrip {cap} -o {tmp}/rt --executor slurm"
PARTITION_ERR = r"--partition .* is not a Slurm partition name"
FORMATS = {"text": "txt", "md": "md", "html": "html", "perfetto": "perfetto.json", "json": "json"}


def report(fmt: str) -> str:
    return f"report {{tmp}}/blk_other.json {{tmp}}/blk.json --format {fmt} -o {{tmp}}/out.{FORMATS[fmt]}"


def said(pattern: str) -> Callable[[Run], None]:
    """The round trip's error (its lines share the progress prefix) says ``pattern``, in one line."""

    def check(run: Run) -> None:
        errors = [line for line in run.stderr.splitlines() if line.startswith("fusiondiff roundtrip: error: ")]
        assert len(errors) == 1 and re.search(pattern, errors[0]), run.stderr

    return check


def both_checks(*checks: Callable[[Run], None]) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        for one in checks:
            one(run)

    return check


def nothing_under(name: str) -> Callable[[Run], None]:
    """Nothing was written under ``{tmp}/name`` (the command refused before writing)."""

    def check(run: Run) -> None:
        folder = run.tmp / name
        assert not folder.exists() or not any(p.is_file() for p in folder.rglob("*")), list(folder.rglob("*"))

    return check


def untouched(name: str, text: str) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        assert (run.tmp / name).read_text() == text

    return check


def valid_json(name: str) -> Callable[[Run], None]:
    def check(run: Run) -> None:
        import json

        json.loads((run.tmp / name).read_text())  # strict: no NaN

    return check


def planted_link(at: str, target: str = "elsewhere.txt", content: str = "kept\n") -> Callable[[Path, Path], None]:
    def setup(tmp: Path, cap: Path) -> None:
        (tmp / target).write_text(content)
        (tmp / at).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(tmp / target, tmp / at)

    return setup


def planted_folder_link(at: str) -> Callable[[Path, Path], None]:
    def setup(tmp: Path, cap: Path) -> None:
        (tmp / "outside").mkdir()
        (tmp / at).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(tmp / "outside", tmp / at)

    return setup


def gzip_members(empty: int, tail: bytes | None = None) -> Callable[[object], bytes]:
    """The capture gzipped, followed by ``empty`` empty gzip members (and ``tail``)."""

    def mutate(data: object) -> bytes:
        import json

        member = gzip.compress(b"", mtime=0)
        return gzip.compress(json.dumps(data).encode(), mtime=0) + member * empty + (tail or b"")

    return mutate


BAD_PARTITIONS = {
    "a line break": "gpu\n#SBATCH --wrap=touch_PWNED",
    "a carriage return": "gpu\r#SBATCH",
    "a space": "gpu batch",
    "a semicolon": "gpu;touch PWNED",
    "a dollar": "$(touch PWNED)",
    "a backtick": "`id`",
    "a quote": "gpu'x",
    "an equals sign": "gpu=x",
    "empty": "",
    "a NUL-like escape": "gpu\\x00",
    "a trailing comma": "gpu,",
    "too long": "p" * 200,
}

SLURM_CASES = [
    *[
        Case("slurm", f"--partition with {what}", SLURM + " --partition {p}", None, 2, PARTITION_ERR)
        for what, value in BAD_PARTITIONS.items()
        for _ in [None]
    ],
    Case("slurm", "--time-limit of 0", SLURM + " --time-limit 0", None, 2, r"--time-limit"),
    Case("slurm", "--time-limit past a year", SLURM + " --time-limit 99999999", None, 2, r"--time-limit takes"),
    Case(
        "slurm", "--gpus-per-task past any node", SLURM + " --gpus-per-task 100000", None, 2, r"--gpus-per-task takes"
    ),
    Case("slurm", "--batches-per-task of 0", SLURM + " --batches-per-task 0", None, 2, r"--batches-per-task"),
    Case(
        "slurm",
        "no srun, sbatch nor squeue on PATH",
        SLURM,
        None,
        2,
        None,
        check=said(r"--executor slurm needs Slurm's commands on PATH; not found: sbatch, srun"),
        env={"PATH": os.path.dirname(os.path.realpath(os.sys.executable))},  # type: ignore[attr-defined]
        progress=PROGRESS,
    ),
]
# the partition goes through shlex: each bad value is quoted into the command line
SLURM_CASES = [
    Case(c.group, c.name, c.command.replace("{p}", _quoted), c.mutate, c.code, c.stderr, env=c.env, progress=c.progress)
    if "{p}" in c.command
    else c
    for c, _quoted in zip(
        SLURM_CASES,
        ["'" + v.replace("'", "'\"'\"'").replace("{", "{{").replace("}", "}}") + "'" for v in BAD_PARTITIONS.values()]
        + [""] * 10,
    )
]

WRITE_CASES = [
    Case(
        "writes",
        "DIR/summary.txt a link to a file outside",
        ROUNDTRIP,
        None,
        2,
        None,
        setup=planted_link("rt/summary.txt"),
        check=both_checks(
            said(r"summary\.txt is a symbolic link .*never through a link"), untouched("elsewhere.txt", "kept\n")
        ),
        progress=PROGRESS,
    ),
    Case(
        "writes",
        "DIR/summary.txt a FIFO",
        ROUNDTRIP,
        None,
        2,
        None,
        setup=lambda tmp, cap: ((tmp / "rt").mkdir(), os.mkfifo(tmp / "rt" / "summary.txt")),
        check=said(r"summary\.txt is not a regular file"),
        progress=PROGRESS,
    ),
    Case(
        "writes",
        "DIR/summary.txt a folder",
        ROUNDTRIP,
        None,
        2,
        None,
        setup=lambda tmp, cap: (tmp / "rt" / "summary.txt").mkdir(parents=True),
        check=said(r"summary\.txt is not a regular file"),
        progress=PROGRESS,
    ),
    Case(
        "writes",
        "DIR/slurm a link to a folder outside",
        SLURM + " --partition gpu",
        None,
        2,
        None,
        setup=planted_folder_link("rt/slurm"),
        check=both_checks(said(r"slurm is a symbolic link|not found: sbatch"), nothing_under("outside")),
        progress=PROGRESS,
    ),
    Case(
        "writes",
        "DIR/replay.json a link to a file outside",
        ROUNDTRIP,
        None,
        2,
        None,
        setup=planted_link("rt/replay.json"),
        check=both_checks(said(r"replay\.json is a symbolic link"), untouched("elsewhere.txt", "kept\n")),
        progress=PROGRESS,
    ),
    Case(
        "writes",
        "DIR/diff.json a link to a file outside",
        ROUNDTRIP,
        None,
        2,
        None,
        setup=planted_link("rt/diff.json"),
        check=both_checks(said(r"diff\.json is a symbolic link"), untouched("elsewhere.txt", "kept\n")),
        progress=PROGRESS,
    ),
]

HANG_CASES = [
    Case(
        "hangs",
        "repro: a FIFO where the saved inputs belong",
        "repro {cap} -o {tmp}/r.py",
        None,
        0,
        r"^wrote",
        setup=fifo("cap.tensors.safetensors"),
        progress="fusiondiff repro: warning: cap.tensors.safetensors is not a safetensors file (it is not a regular file",
    ),
    Case(
        "hangs",
        "roundtrip: a FIFO where the saved inputs belong",
        ROUNDTRIP,
        None,
        2,
        None,
        setup=fifo("cap.tensors.safetensors"),
        progress=PROGRESS,
    ),
    Case("hangs", "a capture then a million empty gzip members", "show {cap}", gzip_members(1_000_000), 2, r"gzip"),
    Case("hangs", "a capture then 65 empty gzip members", "show {cap}", gzip_members(65), 2, r"more than 64 gzip"),
    Case(
        "hangs",
        "a capture then one empty gzip member (cat a.gz b.gz)",
        "show {cap} --top 1",
        gzip_members(1),
        0,
        None,
        check=lambda run: None if run.stdout else (_ for _ in ()).throw(AssertionError("nothing shown")),
    ),
    Case(
        "hangs",
        "a FIFO as the capture",
        "show {tmp}/pipe.json",
        None,
        2,
        r"not a regular file",
        setup=fifo("pipe.json"),
    ),
    Case(
        "hangs",
        "a FIFO as the timeline file",
        report("text"),
        None,
        2,
        r"not a regular file",
        setup=lambda tmp, cap: (
            crafted()(tmp, cap),
            os.unlink(tmp / "blk.timeline.safetensors"),
            fifo("blk.timeline.safetensors")(tmp, cap),
        ),
    ),
]

BLOCK_CASES = [
    *[
        Case(
            "blocks",
            f"a CTA on SM {label} in {fmt}",
            report(fmt),
            None,
            2,
            rf"a CTA on SM {sm}, past the 132 SMs the capture's GPU has",
            setup=crafted(change_arrays=sm_relabelled(sm)),
        )
        for label, sm in (("2**33", 2**33), ("10**6", 10**6), ("132 (one past the last)", 132))
        for fmt in FORMATS
    ],
    Case(
        "blocks",
        "a CTA on SM 5000 where the capture names no SM count",
        report("html"),
        None,
        2,
        r"a CTA on SM 5000, past the 4096 SMs any GPU has",
        setup=crafted(
            change_data=lambda d: d["environment"].__setitem__("sm_count", None), change_arrays=sm_relabelled(5000)
        ),
    ),
    *[
        Case(
            "blocks",
            f"a timeline of 4096 CTAs from a grid of {label} in {fmt}",
            report(fmt),
            None,
            2,
            rf"blk\.json\.fusions\[\d+\]: kernel 0's timeline counts 4096 CTAs, past the {launched} its grid "
            + re.escape(str(grid))
            + " launches$",
            setup=crafted(change_data=grid_of_kernel0(grid)),
        )
        for label, grid, launched in (("2048", [2048, 1, 1], 2048), ("64x8x7", [64, 8, 7], 3584))
        for fmt in FORMATS
    ],
    Case(
        "blocks",
        "show of a timeline of more CTAs than its grid",
        "show {tmp}/blk.json",
        None,
        2,
        r"kernel 0's timeline counts 4096 CTAs, past the 1 its grid \[1, 1, 1\] launches$",
        setup=crafted(change_data=grid_of_kernel0([1, 1, 1])),
    ),
    *[
        Case(
            "blocks",
            f"a timeline of 4096 CTAs from a grid {label}",
            report("text"),
            None,
            0,
            r"^wrote",
            setup=crafted(change_data=grid_of_kernel0(grid)),
        )
        for label, grid in (("of 64x8x8 (as many)", [64, 8, 8]), ("not reported", None))
    ],
    *[
        Case(
            "blocks",
            f"a kernel timeline of no runs and no refusal in {fmt}",
            report(fmt),
            None,
            0,
            r"^wrote",
            setup=crafted(change_data=lambda d: kernel0(d).__setitem__("runs", [])),
        )
        for fmt in FORMATS
    ],
    *[
        Case(
            "blocks",
            f"a timeline of 0 CTAs in {fmt}",
            report(fmt),
            None,
            2,
            r"a measured kernel ran at least one CTA; this one says 0",
            setup=crafted(change_data=lambda d: kernel0(d)["runs"][0].__setitem__("ctas", 0)),
        )
        for fmt in ("text", "html", "perfetto")
    ],
    *[
        Case(
            "blocks",
            f"null (NaN) block statistics, arrays absent, in {fmt}",
            report(fmt),
            None,
            0,
            r"^wrote",
            setup=lambda tmp, cap: (
                crafted(change_data=nan_stats)(tmp, cap),
                os.unlink(tmp / "blk.timeline.safetensors"),
            ),
            check=valid_json(f"out.{FORMATS[fmt]}") if fmt in ("perfetto", "json") else None,
        )
        for fmt in FORMATS
    ],
    Case(
        "blocks",
        "null (NaN) block statistics beside arrays that say otherwise",
        report("perfetto"),
        None,
        2,
        r"arrays do not give the statistics the capture holds",
        setup=crafted(change_data=nan_stats),
    ),
]

THIRD_ROUND_CASES = [*SLURM_CASES, *WRITE_CASES, *HANG_CASES, *BLOCK_CASES]
THIRD_ROUND_CLASSES = {"slurm", "writes", "hangs", "blocks"}
