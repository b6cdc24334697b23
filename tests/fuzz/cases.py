"""The fuzz harness's cases: hostile mutations of the recorded files under ``tests/data`` (captures,
the diff record of a recorded pair, block-level timelines, repro folders, Thunder-style script
folders), generated from a seed, each with the commands it is fed to.

A :class:`Case` is plain data (what :func:`generate` drew) and its ``repr`` is Python that builds
it again, so a failing case printed by the harness can be pasted into ``test_regressions.py`` and
kept. Derived, never recorded: each case's files are written into its own folder by
:func:`materialise` from the recordings, which stay untouched.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data"
SEEDS = {
    "offset": (DATA / "offset" / "live.json", DATA / "offset" / "replay_fusiondiff.json"),
    "backward": (DATA / "seed" / "live_backward.json", DATA / "seed" / "live_backward.json"),
    "constants": (
        DATA / "zoo" / "constant_precision" / "live.json",
        DATA / "zoo" / "constant_precision" / "replay.json",
    ),
    "blocks": (DATA / "blocks" / "seed" / "live.json", DATA / "blocks" / "seed" / "replay.json"),
    "cli": (DATA / "cli" / "live.json", DATA / "cli" / "replay_ours.json"),
}
"""Recorded pairs a case starts from: (the side mutated, the other side)."""

COMMANDS = {
    "show": "show {cap}",
    "diff": "diff {other} {cap}",
    "diff-json": "diff {cap} {other} --json out/d.json",
    "text": "report {other} {cap} --format text",
    "md": "report {other} {cap} -o out/r.md",
    "html": "report {other} {cap} -o out/r.html",
    "json": "report {other} {cap} -o out/r.json",
    "perfetto": "report {other} {cap} --format perfetto --sm-tracks -o out/r.perfetto.json",
    "repro": "repro {cap} -o out",
    "timers": "timers {other} {cap}",
    "ranks": "ranks {other} {cap}",
}
"""Every command and output format a capture is fed to (``out/`` is the folder it is told to write)."""
RECORD_COMMANDS = {
    "record-text": "report {cap} --format text",
    "record-md": "report {cap} --format md",
    "record-html": "report {cap} -o out/r.html",
    "record-json": "report {cap} -o out/r.json",
    "record-perfetto": "report {cap} --format perfetto -o out/r.perfetto.json",
}
"""Every output format a diff record is fed to."""
FOLDER_COMMANDS = {
    "repro-folder": "repro {cap} -o out",
    "replay-folder": "replay scripts/a.py scripts/b.py -o out/replay.json",
    "capture-script": "capture scripts/a.py -o out/live.json",
    "roundtrip-folder": "roundtrip {cap} -o out",
    "sm-timeline-folder": "sm-timeline {cap} -o out/t.json",
}
"""Commands that write into a folder holding planted links, FIFOs and folders."""

NUMBERS = [0, -1, -0.0, 1e-320, 1e308, -1e308, 1.7e308, 2**53 + 1, 2**63, 2**64 + 1, 10**39, -(10**39), 0.5]
TYPES: list[Any] = [None, True, "x", [], {}, [1, 2], {"a": 1}, 3.5]
CHARACTERS = ["x", "\x1b[31m", "\x00", "\u202e", "\ud800", "\n", "\u00e9", "\t", "%s{}"]
DEEP_MARK = "\u2063deep\u2063"
"""Stands for lists nested ``n`` deep until the data is written (:func:`dumps`): too deep for json."""
PLANTS = ["link-file", "link-folder", "fifo", "folder", "link-dangling"]


@dataclass(frozen=True)
class Case:
    """One generated case: which recording, what was changed in it, what was planted, what runs."""

    kind: str
    """``capture``, ``record``, ``timeline``, ``folder`` or ``gzip``."""
    seed: str
    """A key of :data:`SEEDS`."""
    mutations: tuple[tuple[str, str, Any], ...]
    """(dotted path, how, argument): see :func:`mutate`."""
    commands: tuple[str, ...]
    """Keys of the command tables."""
    plants: tuple[tuple[str, str], ...] = ()
    """(a name the command will write, what is planted there)."""


def paths(data: Any, prefix: str = "", depth: int = 0) -> Iterator[str]:
    """Every dotted path of ``data`` (lists cut to their first three items, so long sample lists
    do not crowd out the rest)."""
    if depth > 12:
        return
    if isinstance(data, dict):
        items: list[tuple[Any, Any]] = list(data.items())
    elif isinstance(data, list):
        items = list(enumerate(data[:3]))
    else:
        return
    for key, value in items:
        path = f"{prefix}.{key}" if prefix else str(key)
        yield path
        yield from paths(value, path, depth + 1)


def _walk(data: Any, path: str) -> tuple[Any, Any]:
    """The container holding ``path``'s value, and its key there: a list's index, or a dict's
    key as written (a dict may have digit keys, as a diff record's list deltas do)."""
    keys = path.split(".")
    for key in keys[:-1]:
        data = data[_key(data, key)]
    return data, _key(data, keys[-1])


def _key(container: Any, key: str) -> Any:
    return int(key) if isinstance(container, list) else key


def _get(data: Any, path: str) -> Any:
    parent, key = _walk(data, path)
    return parent[key]


def value_of(how: str, arg: Any, old: Any, data: Any) -> Any:
    """The value a mutation puts in place of ``old``."""
    if how == "set":
        return arg
    if how == "text":
        char, count = arg
        return (old if isinstance(old, str) else "") + char * count
    if how == "deep":
        return f"{DEEP_MARK}{arg}{DEEP_MARK}"
    if how == "wide":
        if isinstance(old, list) and old:
            return [copy.deepcopy(old[i % len(old)]) for i in range(arg)]
        if isinstance(old, dict):
            return {**old, **{f"k{i}": i for i in range(arg)}}
        return [old] * arg
    if how == "copy":
        return copy.deepcopy(_get(data, arg))
    if how == "definition":
        return hostile_definition(*arg)
    if how == "scale":
        return old * arg if isinstance(old, (int, float)) and not isinstance(old, bool) else old
    raise ValueError(how)


def dumps(data: Any) -> bytes:
    """``data`` as JSON bytes, each deep-nesting mark written as the nested lists it stands for, and
    lone surrogates kept (written as their escapes)."""
    text = json.dumps(data)
    mark = json.dumps(DEEP_MARK)[1:-1]
    parts = text.split(f'"{mark}')
    out = [parts[0]]
    for part in parts[1:]:
        depth, rest = part.split(f'{mark}"', 1)
        out.append("[" * int(depth) + "0" + "]" * int(depth) + rest)
    return "".join(out).encode("utf-8")


def mutate(data: Any, mutations: tuple[tuple[str, str, Any], ...]) -> Any:
    """``data`` with each mutation applied in order; a path that no longer exists is skipped (an
    earlier mutation may have replaced what held it)."""
    for path, how, arg in mutations:
        try:
            parent, key = _walk(data, path)
            if how == "drop":
                del parent[key]
            else:
                parent[key] = value_of(how, arg, parent[key], data)
        except (KeyError, IndexError, TypeError):
            continue
    return data


def _definition_mutation(rng: random.Random) -> tuple[str, str, Any]:
    """A definition text made hostile (:func:`hostile_definition`)."""
    form = rng.choice(sorted(DEFINITIONS))
    return ("fusions.0.definition", "definition", (form, rng.choice(DEFINITIONS[form])))


DEFINITIONS = {
    "unary-minus-gather": [1_000, 30_000, 300_000],
    "gather": [1],
    "constants": [1_000, 20_000],
    "parentheses": [100, 5_000],
    "long-literal": [5_000, 500_000],
}
"""Hostile definitions by form, with the sizes drawn."""


def hostile_definition(form: str, size: int) -> str:
    """A definition that nests a gather's dimension in ``size`` unary minus, gathers, defines
    ``size`` constants, nests ``size`` parentheses or holds a literal of ``size`` digits."""
    head = (
        "def nvfuser_fusion(fd : FusionDefinition) -> None :\n"
        "    tv0 = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)\n"
        "    tv1 = fd.define_tensor(shape=[4], contiguity=[True], dtype=DataType.Int, is_cpu=False)\n"
    )
    if form == "unary-minus-gather":
        return head + f"    tv2 = fd.ops.index_select(tv0, tv1, dim={'-' * size}1)\n    fd.add_output(tv2)\n"
    if form == "gather":
        return head + "    tv2 = fd.ops.gather(tv0, tv1, dim=0)\n    fd.add_output(tv2)\n"
    if form == "constants":
        lines = "".join(
            f"    c{i} = fd.define_scalar({1.0 + i / 3:.17g}, dtype=DataType.Double)\n" for i in range(size)
        )
        return head + lines + "    fd.add_output(tv0)\n"
    if form == "parentheses":
        return head + "    tv2 = fd.ops.add(tv0, " + "(" * size + "1.0" + ")" * size + ")\n    fd.add_output(tv2)\n"
    return head + "    tv2 = fd.ops.mul(tv0, " + "9" * size + ".0)\n    fd.add_output(tv2)\n"


def _kept_type_mutation(rng: random.Random, path: str, old: Any) -> tuple[str, str, Any]:
    """A change that keeps the value's type, so the readers accept it and the views meet it: a number
    made extreme, a text made long or hostile, a list made long."""
    if isinstance(old, bool) or old is None:
        return (path, "set", rng.choice(NUMBERS))
    if isinstance(old, int):
        return (path, "set", rng.choice([0, 1, 2**31, 2**53 + 1, 2**62, 10**18, 10**39]))
    if isinstance(old, float):
        return (path, "set", rng.choice([0.0, 1e-320, 1e-9, 1e12, 1e300, 1.7e308]))
    if isinstance(old, str):
        return (path, "text", (rng.choice(CHARACTERS), rng.choice([1, 1_000, 200_000, 2_000_000])))
    if isinstance(old, list):
        return (path, "wide", rng.choice([2, 1_000, 20_000]))
    return (path, "wide", rng.choice([2, 100]))


def _random_mutation(rng: random.Random, all_paths: list[str], data: Any = None) -> tuple[str, str, Any]:
    path = rng.choice(all_paths)
    if data is not None and rng.random() < 0.6:
        return _kept_type_mutation(rng, path, _get(data, path))
    how = rng.choice(["set", "set", "type", "text", "deep", "wide", "drop", "copy", "scale"])
    if how == "set":
        return (path, "set", rng.choice(NUMBERS))
    if how == "type":
        return (path, "set", rng.choice(TYPES))
    if how == "text":
        return (path, "text", (rng.choice(CHARACTERS), rng.choice([1, 100, 100_000, 2_000_000])))
    if how == "deep":
        return (path, "deep", rng.choice([50, 5_000, 200_000]))
    if how == "wide":
        return (path, "wide", rng.choice([2, 1_000, 30_000]))
    if how == "copy":
        return (path, "copy", rng.choice(all_paths))
    if how == "scale":
        return (path, "scale", rng.choice([-1, 0, 1e300, 10**30]))
    return (path, "drop", None)


@cache
def seed_data(seed: str) -> Any:
    return json.loads(SEEDS[seed][0].read_text())


@cache
def seed_paths(seed: str) -> list[str]:
    return list(paths(seed_data(seed)))


def generate(seed: int, index: int) -> Case:
    """Case number ``index`` of the run seeded ``seed`` (the same pair, the same case)."""
    rng = random.Random(f"{seed}:{index}")
    kind = rng.choices(["capture", "record", "timeline", "folder", "gzip"], weights=[10, 2, 2, 2, 1])[0]
    if kind == "timeline":
        seed_name = "blocks"
    else:
        seed_name = rng.choice(sorted(SEEDS))
    count = rng.choice([1, 1, 2, 3])
    mutations: list[tuple[str, str, Any]] = []
    for _ in range(count):
        if kind == "capture" and rng.random() < 0.15:
            mutations.append(_definition_mutation(rng))
        elif kind == "timeline":
            mutations.append(_timeline_mutation(rng))
        elif kind == "record":
            mutations.append(("record", "", None))
        else:
            mutations.append(_random_mutation(rng, seed_paths(seed_name), seed_data(seed_name)))
    if kind == "record":
        record_paths = list(paths(record_data(seed_name)))
        mutations = [_random_mutation(rng, record_paths, record_data(seed_name)) for _ in range(count)]
    table = {"capture": COMMANDS, "gzip": COMMANDS, "timeline": COMMANDS, "record": RECORD_COMMANDS}.get(
        kind, FOLDER_COMMANDS
    )
    commands = tuple(rng.sample(sorted(table), k=min(3, len(table))))
    plants: tuple[tuple[str, str], ...] = ()
    if kind == "folder":
        plants = tuple((name, rng.choice(PLANTS)) for name in _plant_names(rng))
    return Case(kind, seed_name, tuple(mutations), commands, plants)


def _timeline_mutation(rng: random.Random) -> tuple[str, str, Any]:
    """A change to the CTA arrays (their statistics restated to match, as a recorder would)."""
    how = rng.choice(["zero", "same", "huge", "one-sm", "negative-span"])
    return ("arrays", how, None)


def _plant_names(rng: random.Random) -> list[str]:
    names = ["out/script_fusion0.py", "out/replay.json", "out/d.json", "out/summary.txt", "out/live.json", "out/t.json"]
    return rng.sample(names, k=rng.choice([1, 2]))


@cache
def record_data(seed: str) -> Any:
    """The diff record of the seed's recorded pair, as ``report A B -o diff.json`` writes it."""
    from fusiondiff.front.api import open_report
    from fusiondiff.report.formats.record import dumps_diff_record

    a, b = SEEDS[seed]
    return json.loads(dumps_diff_record(open_report([b, a])))


def _arrays_mutated(how: str, found: dict[str, Any]) -> None:
    import numpy as np

    for key in sorted(found):
        array = found[key]
        if how == "zero" and (key.endswith(".start_ns") or key.endswith(".end_ns")):
            found[key] = np.zeros_like(array)
        elif how == "same" and key.endswith(".end_ns"):
            found[key] = found[key[: -len("end_ns")] + "start_ns"].copy()
        elif how == "huge" and key.endswith(".end_ns"):
            found[key] = array + 2**40
        elif how == "one-sm" and (key.endswith(".sm") or key.endswith(".sm_end")):
            found[key] = np.zeros_like(array)
        elif how == "negative-span" and key.endswith(".start_ns"):
            found[key] = array - 2**31


def materialise(case: Case, folder: Path) -> tuple[Path, Path, int]:
    """Write the case's files into ``folder``: the mutated file, the other side, planted things.
    Returns (the mutated file, the other side, the input's size in bytes)."""
    import blocks_crafted

    a, b = SEEDS[case.seed]
    (folder / "out").mkdir()
    other = folder / "other.json"
    if case.kind == "timeline":
        data = copy.deepcopy(seed_data(case.seed))
        found = blocks_crafted.arrays()
        for _, how, _ in case.mutations:
            _arrays_mutated(how, found)
        blocks_crafted._restate(data, found)
        cap = blocks_crafted.write(folder, data, found, "cap")
        blocks_crafted.write(folder, copy.deepcopy(blocks_crafted.LIVE), None, "other")
    elif case.kind == "record":
        cap = folder / "cap.json"
        cap.write_bytes(dumps(mutate(copy.deepcopy(record_data(case.seed)), case.mutations)))
        other.write_bytes(b.read_bytes())
    else:
        data = mutate(copy.deepcopy(seed_data(case.seed)), case.mutations)
        text = dumps(data)
        cap = folder / ("cap.json.gz" if case.kind == "gzip" else "cap.json")
        cap.write_bytes(gzip.compress(text, mtime=0) if case.kind == "gzip" else text)
        other.write_bytes(b.read_bytes())
    if case.kind == "folder":
        _scripts(folder / "scripts")
        for name, what in case.plants:
            _plant(folder, name, what)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    return cap, other, size


def _scripts(folder: Path) -> None:
    """A Thunder-style script folder: two scripts, one a legacy nvFuser repro, one hostile text."""
    folder.mkdir()
    legacy = sorted((DATA / "legacy_scripts").glob("*.py"))
    (folder / "a.py").write_bytes(legacy[0].read_bytes())
    (folder / "b.py").write_text("import os\nos.system('echo PWNED')\n" + "x = (" * 50 + "1" + ")" * 50 + "\n")


def _plant(folder: Path, name: str, what: str) -> None:
    """Plant ``what`` at ``folder/name``: a link to a precious file or folder, a FIFO, a folder."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    precious = folder / "precious"
    precious.mkdir(exist_ok=True)
    (precious / "keep.txt").write_text("precious\n")
    if what == "link-file":
        path.symlink_to(precious / "keep.txt")
    elif what == "link-folder":
        path.symlink_to(precious, target_is_directory=True)
    elif what == "link-dangling":
        path.symlink_to(precious / "not-there")
    elif what == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()


def argv_of(case: Case, key: str, cap: Path, other: Path) -> list[str]:
    table = {**COMMANDS, **RECORD_COMMANDS, **FOLDER_COMMANDS}
    return [part.format(cap=cap.name, other=other.name) for part in table[key].split()]
