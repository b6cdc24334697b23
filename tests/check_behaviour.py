"""Behaviour check: the same verdicts, rankings and exit codes from two checkouts of fusiondiff.

Every recorded capture pair under ``tests/data/`` is diffed through the real command line
(``fusiondiff diff A B --json RECORD``, and ``fusiondiff report A B --format md``), every capture
is shown (text and ``--format json``), every folder of per-rank captures is ranked
(``fusiondiff ranks``), and two recordings by different timers are reconciled (``fusiondiff
timers``). A pair is a live capture and a replay of one folder; a folder of captures of one kind
(ranks, timers) pairs them in name order. Gzipped captures are unpacked first. Both checkouts read
the same copy of tests/data, in the same folder, so paths print alike.

    python3 tests/check_behaviour.py --base OTHER_CHECKOUT [--keep DIR]

runs every case with ``OTHER_CHECKOUT``'s fusiondiff (``PYTHONPATH``), then with this checkout's,
and compares them: exit codes, the verdict line, the fusion pairs' verdicts, the findings in rank
order (rule, role, fusions, time explained) and ``same_speed``/``properties_identical``, then
every other byte of stdout, stderr and the diff records (``fusiondiff_version`` aside). It exits
0 when verdicts, rankings and exit codes agree, 1 otherwise; other differences are listed either
way. ``--record CHECKOUT --out FILE`` and ``--compare A B`` do the two halves apart.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


def _kind(path: Path) -> str | None:
    """The capture's ``kind`` (``live``, ``replay``), or None for a file that is no capture."""
    try:
        data = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or "schema_version" not in data or "fusions" not in data:
        return None
    return str(data.get("kind"))


def unpack(work: Path) -> list[Path]:
    """A copy of tests/data in ``work`` (the files beside the captures too: tensors, timelines),
    gzipped captures unpacked; the captures' paths relative to ``work``."""
    shutil.copytree(DATA, work, dirs_exist_ok=True)
    found = []
    for path in sorted(work.rglob("*.json*")):
        if path.name.endswith(".json.gz"):
            target = path.with_name(path.name.removesuffix(".gz"))
            target.write_bytes(gzip.decompress(path.read_bytes()))
        elif path.suffix == ".json":
            target = path
        else:
            continue
        if _kind(target) is not None:
            found.append(target.relative_to(work))
    return found


def cases(work: Path, captures: list[Path]) -> dict[str, list[str]]:
    """Case name -> the command line's arguments (paths relative to ``work``)."""
    out: dict[str, list[str]] = {}
    by_folder: dict[Path, list[Path]] = {}
    for capture in captures:
        by_folder.setdefault(capture.parent, []).append(capture)
        out[f"show {capture}"] = ["show", str(capture)]
        out[f"show json {capture}"] = ["show", str(capture), "--format", "json"]
    for folder, inside in sorted(by_folder.items()):
        kinds = {c: _kind(work / c) for c in inside}
        pairs = [(a, b) for a in inside for b in inside if kinds[a] == "live" and kinds[b] == "replay"]
        if not pairs:
            pairs = list(zip(inside, inside[1:]))
        for a, b in pairs:
            record = "records/" + f"{a}__{b.name}".replace("/", "_")
            out[f"diff {a} {b}"] = ["diff", str(a), str(b), "--json", record]
            out[f"report md {a} {b}"] = ["report", str(a), str(b), "--format", "md"]
        if any(".rank" in c.name for c in inside):
            out[f"ranks {folder}"] = ["ranks", str(folder)]
        methods = {_method(work / c) for c in inside}
        if len(methods) > 1 and len(inside) == 2:
            out[f"timers {inside[0]} {inside[1]}"] = ["timers", str(inside[0]), str(inside[1])]
    return out


def _method(path: Path) -> str:
    return str(json.loads(path.read_text()).get("protocol", {}).get("method"))


def run_case(checkout: Path, work: Path, argv: list[str]) -> dict[str, Any]:
    """One command line run with ``checkout``'s fusiondiff in ``work``."""
    record_path = work / argv[argv.index("--json") + 1] if "--json" in argv else None
    if record_path is not None:
        record_path.parent.mkdir(parents=True, exist_ok=True)
        record_path.unlink(missing_ok=True)
    result = subprocess.run(
        [sys.executable, "-m", "fusiondiff", *argv],
        cwd=work,
        env={**os.environ, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    found: dict[str, Any] = {"argv": argv, "exit": result.returncode, "stdout": result.stdout, "stderr": result.stderr}
    if record_path is not None and record_path.exists():
        record = json.loads(record_path.read_text())
        record.pop("fusiondiff_version", None)
        found["record"] = record
    return found


def record_checkout(checkout: Path, work: Path) -> dict[str, Any]:
    """Every case's run with ``checkout``'s fusiondiff."""
    every = cases(work, unpack(work))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        runs = dict(zip(every, pool.map(lambda argv: run_case(checkout, work, argv), every.values())))
    return {"checkout": str(checkout), "cases": runs}


def essentials(run: dict[str, Any]) -> dict[str, Any]:
    """What must not change: the exit code, and of a diff its verdicts and its ranking."""
    found: dict[str, Any] = {"exit": run["exit"]}
    record = run.get("record")
    if record is not None:
        diff = record["diff"]
        found["verdict"] = record["verdict"]
        found["same_speed"] = record["same_speed"]
        found["properties_identical"] = record["properties_identical"]
        found["exit_code"] = record["exit_code"]
        found["pairs"] = [(p["label"], p["matched_by"], p["timing"]["verdict"]) for p in diff["pairs"]]
        found["unmatched"] = [(u["side"], u["key"]) for u in diff["unmatched"]]
        found["findings"] = [
            (f["rank"], f["rule"], f["role"], f["fusions"], f["explained_ns"]) for f in diff["findings"]
        ]
    if run["argv"][0] in ("ranks", "timers"):
        found["text"] = run["stdout"]  # their verdicts and ranking are their text
    return found


def compare(a: dict[str, Any], b: dict[str, Any]) -> int:
    """Print what differs between two recorded runs; 1 when an essential differs."""
    essential, other = [], []
    names = sorted(set(a["cases"]) | set(b["cases"]))
    for name in names:
        ra, rb = a["cases"].get(name), b["cases"].get(name)
        if ra is None or rb is None:
            essential.append(f"{name}: run by one checkout only")
            continue
        ea, eb = essentials(ra), essentials(rb)
        for key in sorted(set(ea) | set(eb)):
            if ea.get(key) != eb.get(key):
                essential.append(f"{name}: {key}: {ea.get(key)!r} != {eb.get(key)!r}")
        for key in ("stdout", "stderr", "record"):
            if ra.get(key) != rb.get(key):
                other.append(f"{name}: {key} differs")
    diffs = sum(1 for n in names if a["cases"].get(n, {}).get("record") is not None)
    print(f"{len(names)} cases ({diffs} diffs with their JSON records): {a['checkout']} against {b['checkout']}")
    exits: dict[int, int] = {}
    for run in a["cases"].values():
        exits[run["exit"]] = exits.get(run["exit"], 0) + 1
    print("exit codes in the first: " + ", ".join(f"{code}: {n}" for code, n in sorted(exits.items())))
    print(f"verdicts, rankings and exit codes: {'the same' if not essential else f'{len(essential)} differences'}")
    for line in essential:
        print(f"  ! {line}")
    print(f"every other byte of stdout, stderr and the records: {'the same' if not other else f'{len(other)} differ'}")
    for line in other:
        print(f"  ~ {line}")
    return 1 if essential else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="the other checkout: run both and compare")
    parser.add_argument("--record", type=Path, metavar="CHECKOUT", help="only run this checkout's fusiondiff")
    parser.add_argument("--out", type=Path, help="with --record: where the runs go (JSON)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="compare two --record files")
    parser.add_argument("--keep", type=Path, help="keep the runs of --base in this folder")
    parser.add_argument("--work", type=Path, help="the folder the captures are copied to (default: a temporary one)")
    args = parser.parse_args()
    if args.compare:
        a, b = (json.loads(p.read_text()) for p in args.compare)
        return compare(a, b)
    with tempfile.TemporaryDirectory(prefix="fusiondiff-behaviour-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if args.record:
            runs = record_checkout(args.record.resolve(), work)
            (args.out or Path("behaviour.json")).write_text(json.dumps(runs, indent=1))
            return 0
        if args.base is None:
            parser.error("give --base, --record or --compare")
        base = record_checkout(args.base.resolve(), work)
        ours = record_checkout(ROOT, work)
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / "base.json").write_text(json.dumps(base, indent=1))
            (args.keep / "ours.json").write_text(json.dumps(ours, indent=1))
        return compare(base, ours)


if __name__ == "__main__":
    raise SystemExit(main())
