"""Readers of the round trip's runs recorded on the H200 (``tests/data/roundtrip_modes``): a session
folder's ``modes.json``, as ``benchmarks/bench_roundtrip.py --modes`` wrote it, and the phases each
of a mode's replay processes logged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.bench_roundtrip import base_mode, spread

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "roundtrip_modes"


def recorded_modes(session: Path) -> dict:
    """Each mode's figures, by mode name (``reference:2`` for a second run of one)."""
    return json.loads((session / "modes.json").read_text())["modes"]


def recorded_runs(modes: dict, kind: str) -> list[dict]:
    """The figures of every run of ``kind`` (``forked_turn``, ``reference``...) among ``modes``, in order."""
    return [figures for mode, figures in modes.items() if base_mode(mode) == kind]


def recorded_phases(session: Path, mode: str) -> list[dict]:
    """The phases of each of ``mode``'s processes (``MODE:2`` ran into ``MODE_2``), in file order."""
    folder = session / mode.replace(":", "_") / "logs"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.phases.json"))]


def handover_gaps(docs: list[dict]) -> list[float]:
    """From each process's last phase to the next one's CUDA context (``docs``: one GPU's processes'
    phases, in the order they ended): the process's exit and the worker seeing it go."""
    return [
        next(p for p in after["phases"] if p["name"] == "cuda_context")["start"] - before["ended_at"]
        for before, after in zip(docs, docs[1:])
    ]


def check_costs(figures: dict, costs: list[float]) -> None:
    """A run's recorded costs per fusion, and their median and worst, are what ``costs`` (read again
    from its processes or phases) give."""
    assert costs == pytest.approx(figures["costs_s"])
    assert spread(costs)["median_s"] == pytest.approx(figures["median_s"])
    assert spread(costs)["worst_s"] == pytest.approx(figures["worst_s"])
