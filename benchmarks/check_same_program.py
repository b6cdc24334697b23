"""False alarms, symmetry and self-diffs over the repository's recordings.

Three checks, each over the captures under ``tests/data`` (gzipped ones read as they are):

- **same program** (``--same``): every ordered pair of captures of one program recorded in
  separate processes, diffed under the default gate, ``--gate host`` and ``--strict``. The groups
  are the round trip's per-fusion replay logs (``roundtrip_modes/**/sessions/<session>/<mode>/logs``:
  one fusion replayed in one process per mode), the zoo's controls (the same fusion live and
  replayed, each in a fresh process, on the H100 and on the H200) and the H100's training step
  live in 5 processes and replayed in 5 (``h100/noise``: every capture against every other). Every
  failing gate is a false alarm: nothing differs but the process.
- **swapped** (``--swap``): every pair of the behaviour table (``tests/check_behaviour.py``), diffed
  both ways round: the exit codes under every gate must agree and the fusion verdicts mirror
  (FASTER against SLOWER), with the same findings' rules.
- **self** (``--self``): every capture against itself: no gate fails (exit 0, or 3 where the
  capture itself measured nothing for the question, such as host time), no FASTER or SLOWER, no
  finding.

    python benchmarks/check_same_program.py [--same] [--swap] [--self]

prints a count per check and each case that breaks it; it exits 1 when one does. A same-program
pair failing ``--gate host`` (exit 1) is counted and listed but does not make it exit 1: the host
question's test is judged on samples (``fusiondiff/diff/stats.py``), apart from kernel time. A host
question not judged (exit 3: fewer than 20 host samples a side) is counted apart, not listed.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import itertools
import json
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
DEMO = ROOT / "fusiondiff" / "data" / "demo"
"""The demo's captures, diffed as the recorded ones are."""
GATES = {"default": (), "host": ("host",), "strict": ("fidelity",)}
"""The gates checked, as ``DiffResult.exit_code`` takes them."""
MIRROR = {"FASTER": "SLOWER", "SLOWER": "FASTER"}


class Outcome(NamedTuple):
    """One diff's exit code under each gate, its fusion verdicts and its findings' rules."""

    exits: dict[str, int]
    verdicts: tuple[str, ...]
    rules: tuple[str, ...]


def captures() -> list[Path]:
    """Every capture file under tests/data and of the demo (JSON or gzipped JSON with ``schema_version``)."""
    found = []
    for path in sorted(DATA.rglob("*.json*")) + sorted(DEMO.glob("*.json")):
        if not path.name.endswith((".json", ".json.gz")) or path.name.endswith(".phases.json"):
            continue
        if _kind(path) is not None:
            found.append(path)
    return found


@functools.cache
def _kind(path: Path) -> str | None:
    """The capture's ``kind`` (``live``, ``replay``), or None for a file that is no capture."""
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or "schema_version" not in data or "fusions" not in data:
        return None
    return str(data.get("kind"))


def same_program_groups() -> dict[str, list[Path]]:
    """Captures of one program, each recorded in its own process, grouped."""
    groups: dict[str, list[Path]] = defaultdict(list)
    for path in DATA.glob("roundtrip_modes/**/sessions/*/*/logs/*.json"):
        if path.name.endswith(".phases.json"):
            continue
        session = path.parent.parent.parent
        groups[f"{session.relative_to(DATA)}:{path.name}"].append(path)
    for folder in ("h100/zoo/control", "zoo/control", "h100/noise"):
        groups[folder] = sorted((DATA / folder).glob("*.json"))
    return {name: sorted(paths) for name, paths in sorted(groups.items()) if len(paths) > 1}


def behaviour_pairs() -> list[tuple[Path, Path]]:
    """The behaviour table's diff pairs: live against replay in one folder, or neighbours in name order."""
    by_folder: dict[Path, list[Path]] = defaultdict(list)
    for path in captures():
        by_folder[path.parent].append(path)
    pairs = []
    for inside in by_folder.values():
        kinds = {c: _kind(c) for c in inside}
        found = [(a, b) for a in inside for b in inside if kinds[a] == "live" and kinds[b] == "replay"]
        pairs.extend(found or zip(inside, inside[1:]))
    return pairs


class Differ:
    """Diffs captures in this process, each file read once."""

    def __init__(self) -> None:
        self._loaded: dict[Path, object] = {}

    def outcome(self, a: Path, b: Path) -> Outcome:
        """The diff of ``a`` against ``b``: exits under every gate, verdicts, findings' rules."""
        from fusiondiff.diff.core import diff

        result = diff(self._load(a), self._load(b))  # type: ignore[arg-type]
        return Outcome(
            {name: result.exit_code(gates=gates) for name, gates in GATES.items()},
            tuple(p.timing.verdict for p in result.pairs),
            tuple(sorted(f.rule for f in result.findings)),
        )

    def _load(self, path: Path) -> object:
        from fusiondiff.io.store import load_capture

        if path not in self._loaded:
            self._loaded[path] = load_capture(path)
        return self._loaded[path]


def same_program_alarms(differ: Differ) -> Iterator[tuple[str, Path, Path, str]]:
    """Every ordered pair of a same-program group, and each gate that failed on it (``ok`` if none)."""
    for name, paths in same_program_groups().items():
        for a, b in itertools.permutations(paths, 2):
            exits = differ.outcome(a, b).exits
            failed = [gate for gate, code in exits.items() if code != 0]
            yield name, a, b, ",".join(f"{g}={exits[g]}" for g in failed) or "ok"


def swapped_breaks(differ: Differ) -> Iterator[tuple[Path, Path, str]]:
    """Every behaviour-table pair whose two orders disagree, and how."""
    for a, b in behaviour_pairs():
        ab, ba = differ.outcome(a, b), differ.outcome(b, a)
        mirrored = tuple(MIRROR.get(v, v) for v in ba.verdicts)
        if ab.exits != ba.exits:
            yield a, b, f"exit codes {ab.exits} against {ba.exits}"
        if sorted(ab.verdicts) != sorted(mirrored):
            yield a, b, f"verdicts {ab.verdicts} against mirrored {mirrored}"
        if ab.rules != ba.rules:
            yield a, b, f"findings {ab.rules} against {ba.rules}"


def self_breaks(differ: Differ) -> Iterator[tuple[Path, str]]:
    """Every capture whose diff against itself is not clean, and how."""
    for path in captures():
        found = differ.outcome(path, path)
        if any(code not in (0, 3) for code in found.exits.values()):
            yield path, f"exit codes {found.exits}"
        if any(v in ("FASTER", "SLOWER") for v in found.verdicts):
            yield path, f"verdicts {found.verdicts}"
        if found.rules:
            yield path, f"findings {found.rules}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("same", "swap", "self"):
        parser.add_argument(f"--{name}", action="store_true", help=f"run the {name} check (default: all)")
    args = parser.parse_args()
    every = not (args.same or args.swap or args.self)
    differ, broken = Differ(), 0
    if every or args.same:
        runs = list(same_program_alarms(differ))
        fails = {g: sum(1 for *_, f in runs if f"{g}=1" in f.split(",")) for g in GATES}
        unjudged = {g: sum(1 for *_, f in runs if f"{g}=3" in f.split(",")) for g in GATES}
        counts = "; ".join(f"{g}: {fails[g]} fail, {unjudged[g]} not judged (exit 3)" for g in GATES)
        print(f"same program: {len(runs)} ordered pairs; {counts}")
        for name, a, b, failed in runs:
            if failed not in ("ok", "host=3"):  # a host question not judged is counted above, not listed
                print(f"  ! {name}: {a.relative_to(ROOT)} {b.relative_to(ROOT)}: {failed}")
        broken += sum(fails[g] + unjudged[g] for g in ("default", "strict"))
    if every or args.swap:
        swaps = list(swapped_breaks(differ))
        print(f"swapped: {len(behaviour_pairs())} pairs, {len({(a, b) for a, b, _ in swaps})} disagree")
        for a, b, why in swaps:
            print(f"  ! {a.relative_to(ROOT)} {b.relative_to(ROOT)}: {why}")
        broken += len(swaps)
    if every or args.self:
        selfs = list(self_breaks(differ))
        print(f"self: {len(captures())} captures, {len({p for p, _ in selfs})} not clean against themselves")
        for path, why in selfs:
            print(f"  ! {path.relative_to(ROOT)}: {why}")
        broken += len(selfs)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
