"""Every ordered pair of captures of the same program in tests/data, diffed, with the exit codes of
the gates: the false alarms a user meets who runs the same program twice.

The pairs are the repeated replays of one fusion in ``tests/data/roundtrip_modes``: each round trip
mode replayed a session's distinct fusions in separate processes, so two replays of one record,
in two modes (or two runs of one mode) of one session, are the same repro script run in two
processes. A folder of such a session holds its modes' folders, each with ``logs/NNNN_*.json``.
Then ``tests/data/h100/noise``: one training step captured live in five processes and replayed
five times (44 host samples a record), every ordered pair of the live captures and of the replays.

    python benchmarks/aa_pairs.py [--list]

prints, per gate (the default one, ``--gate host``, ``--strict``), how many ordered pairs exit
with each code; ``--list`` also prints each failing pair and its host verdicts.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ROOT / "tests" / "data" / "roundtrip_modes"
NOISE = ROOT / "tests" / "data" / "h100" / "noise"

GATES: dict[str, dict[str, object]] = {
    "default": {},
    "--gate host": {"gates": ("host",)},
    "--strict": {"strict": True},
}


def replay_groups(root: Path = MODES) -> dict[str, list[Path]]:
    """The replays of each record, by session and file name (``stablelm/0006_backward_nvFusion6.json``):
    only groups of two or more."""
    groups: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(root.rglob("logs/*.json")):
        if path.name.endswith(".phases.json"):
            continue
        session = path.parent.parent.parent.name
        groups[f"{session}/{path.name}"].append(path)
    return {key: paths for key, paths in groups.items() if len(paths) > 1}


def ordered_pairs(groups: dict[str, list[Path]]) -> list[tuple[Path, Path]]:
    """Every ordered pair of two replays of one record."""
    return [pair for paths in groups.values() for pair in itertools.permutations(paths, 2)]


def noise_pairs(root: Path = NOISE) -> list[tuple[Path, Path]]:
    """Every ordered pair of the live captures of one program, and of its replays."""
    return [
        pair for kind in ("live", "replay") for pair in itertools.permutations(sorted(root.glob(f"{kind}_*.json")), 2)
    ]


def count(pairs: list[tuple[Path, Path]], listed: bool = False) -> dict[str, Counter[int]]:
    """How many of ``pairs`` exit with each code under each gate; ``listed``: print each failure."""
    from fusiondiff.diff.core import diff
    from fusiondiff.io.store import load_capture

    captures = {path: load_capture(path) for pair in pairs for path in pair}
    codes: dict[str, Counter[int]] = {gate: Counter() for gate in GATES}
    for path_a, path_b in pairs:
        result = diff(captures[path_a], captures[path_b])
        failed = []
        for gate, options in GATES.items():
            code = result.exit_code(**options)  # type: ignore[arg-type]
            codes[gate][code] += 1
            if code:
                failed.append(f"{gate}={code}")
        if listed and failed:
            hosts = [
                f"{p.host.verdict} {p.host.median_a_ns:.0f}->{p.host.median_b_ns:.0f}" for p in result.pairs if p.host
            ]
            print(f"{path_a.relative_to(ROOT)} {path_b.relative_to(ROOT)}: {' '.join(failed)}; host {hosts}")
    return codes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print each pair that fails a gate")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    for name, pairs in (("replays of one record", ordered_pairs(replay_groups())), ("h100/noise", noise_pairs())):
        codes = count(pairs, args.list)
        print(f"{name}: {len(pairs)} ordered pairs")
        for gate, counter in codes.items():
            print(f"  {gate}: " + ", ".join(f"exit {code}: {n}" for code, n in sorted(counter.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
