"""The environment variables that change how CUDA and PyTorch run a call (Environment.runtime_env,
records.environment.RUNTIME_VARIABLES): recorded, compared, and named as a root cause of the kernel
and host questions (the ``runtime_env`` node) where one that changes a call's time differs.

The recordings in tests/data were made before these variables were read (``runtime_env`` None):
the pairs here are copies of a recording with the variables set in the test, and, where a gap is
needed, B's samples slowed by 20 %; each says so."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fusiondiff.diff.causes import GRAPH
from fusiondiff.diff.core import diff
from fusiondiff.io.store import load_capture, write_capture
from fusiondiff.recording.environment import runtime_variables
from fusiondiff.records.environment import RUNTIME_VARIABLES
from fusiondiff.records.model import Capture
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.views.content import environment_rows
from fusiondiff.report.words import wording

DATA = Path(__file__).resolve().parents[1] / "data"
SEED = DATA / "seed" / "live_forward.json"


def _with_env(capture: Capture, runtime_env: dict[str, str] | None, slower: float = 1.0) -> Capture:
    """``capture`` with ``runtime_env`` recorded and its samples (fusions' and kernels') times ``slower``."""

    def scaled(timing):
        return dataclasses.replace(timing, samples_ns=tuple(s * slower for s in timing.samples_ns))

    fusions = tuple(
        dataclasses.replace(
            f,
            timing=scaled(f.timing),
            kernels=tuple(dataclasses.replace(k, timing=scaled(k.timing)) for k in f.kernels),
        )
        for f in capture.fusions
    )
    environment = dataclasses.replace(capture.environment, runtime_env=runtime_env)
    return dataclasses.replace(capture, environment=environment, fusions=fusions)


def test_only_the_listed_variables_are_read(monkeypatch):
    for name in ("CUDA_LAUNCH_BLOCKING", "OMP_NUM_THREADS", "CUDA_VISIBLE_DEVICES", "NVFUSER_DISABLE"):
        monkeypatch.setenv(name, "1")
    for variable in RUNTIME_VARIABLES[1:]:
        monkeypatch.delenv(variable.name, raising=False)
    assert runtime_variables() == {"CUDA_LAUNCH_BLOCKING": "1"}


def test_a_capture_written_before_reads_as_not_recorded_and_a_new_one_round_trips(tmp_path):
    old = load_capture(SEED)
    assert old.environment.runtime_env is None
    path = tmp_path / "new.json"
    write_capture(_with_env(old, {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}), path)
    assert load_capture(path).environment.runtime_env == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def test_not_recorded_is_never_a_difference():
    old = load_capture(SEED)
    result = diff(old, _with_env(old, {}))
    assert not [c for c in result.changes if c.category == "runtime_env"]
    assert "runtime_env" not in {f.rule for f in result.findings}
    row = next(
        r for r in environment_rows(DiffReport(result, old, _with_env(old, {}))) if r.name.startswith("CUDA and")
    )
    assert (row.a, row.differs) == ("not recorded", False)
    # neither recorded: no row at all (reports of older captures unchanged)
    assert not [r for r in environment_rows(DiffReport(diff(old, old), old, old)) if r.name.startswith("CUDA and")]


@pytest.mark.parametrize("name", ["PYTORCH_NO_CUDA_MEMORY_CACHING", "CUDA_LAUNCH_BLOCKING"])
def test_a_variable_that_differs_is_the_root_cause_of_the_gap(name):
    """The seed forward (H200) against a copy whose process set ``name`` and whose samples are 20 %
    slower: the variable is named first and takes the kernel gap; it is a root of the host ledger too."""
    seed = load_capture(SEED)
    result = diff(_with_env(seed, {}), _with_env(seed, {name: "1"}, slower=1.2))
    first = result.findings[0]
    assert first.rule == "runtime_env" and first.role == "setup"
    assert [e.causes for e in result.ledger("kernel").entries] == [("runtime_env",)]
    assert first.explained_ns == pytest.approx(result.ledger("kernel").gap_ns)
    assert GRAPH["runtime_env"].host and GRAPH["runtime_env"].question == "kernel"
    assert [(e.field, e.a, e.b) for e in first.data] == [(f"runtime_env.{name}", None, "1")]
    assert name in wording.title(first)
    assert any(line.startswith(f"{name}: unset in A, 1 in B") for line in wording.evidence_lines(first))
    assert not result.properties_identical and result.exit_code(strict=True) == 1


def test_a_variable_that_changes_only_the_first_call_is_shown_not_named():
    # CUDA_MODULE_LOADING: when modules load, the first call only, which no sample holds
    seed = load_capture(SEED)
    a, b = _with_env(seed, {}), _with_env(seed, {"CUDA_MODULE_LOADING": "EAGER"})
    result = diff(a, b)
    assert "runtime_env" not in {f.rule for f in result.findings}
    assert [c.path for c in result.changes if c.category == "runtime_env"] == ["runtime_env.CUDA_MODULE_LOADING"]
    row = next(r for r in environment_rows(DiffReport(result, a, b)) if r.name.startswith("CUDA and"))
    assert row.differs and row.b == "CUDA_MODULE_LOADING=EAGER"
