"""Run every zoo scenario (each in its own process), diff its two sides, and print the table.

python -m repro.zoo.run_zoo OUTDIR        (on a GPU machine with Thunder and nvFuser)
python -m repro.zoo.run_zoo --recorded    (diff the pairs recorded under tests/data/zoo)
python -m repro.zoo.run_zoo --recorded tests/data/h100/zoo    (or those of another folder)
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

SCENARIOS = (
    "misaligned_input",
    "noncontiguous_input",
    "option_live_only",
    "runtime_reuse",
    "embedding_index_values",
    "l2_cold_vs_warm",
    "seed_method",
    "cupti_conflict",
    "wrapper_several_definitions",
    "constant_precision",
    "control",
)
RECORDED = Path(__file__).resolve().parents[2] / "tests" / "data" / "zoo"


@dataclass(frozen=True)
class ZooResult:
    """One scenario's diagnosis, read from the whole output of ``diff``: every finding, on every
    question, and the exit codes."""

    scenario: str
    planted: str | None
    top_finding: str | None
    """The diff's first finding, whatever its question (failures, then kernel time, then host)."""
    findings: tuple[str, ...]
    live_us: float
    replay_us: float
    error: str | None = None
    exit_code: int | None = None
    """``fusiondiff diff``'s exit code under its default gate (kernel time)."""
    questions: tuple[tuple[str, bool], ...] = ()
    """Each question and whether it passes its gate."""
    findings_of: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Each question and the rules of its findings, in rank order."""

    @property
    def correct(self) -> bool:
        """The planted cause is the diff's first finding; for the control, no finding of kernel
        time or fidelity and exit 0: what a side's host is like is reported, never a difference."""
        if self.error:
            return False
        if self.planted:
            return self.top_finding == self.planted
        passes, found = dict(self.questions), dict(self.findings_of)
        quiet = not found.get("kernel") and not found.get("fidelity")
        return self.exit_code == 0 and passes.get("kernel", False) and passes.get("fidelity", False) and quiet


def planted_cause(scenario: str) -> str | None:
    return importlib.import_module(f"repro.zoo.{scenario}").CAUSE


def diagnose(scenario: str, directory: Path) -> ZooResult:
    """Diff a scenario's recorded sides and report what fusiondiff names first."""
    from fusiondiff.diff.causes import QUESTIONS
    from fusiondiff.front.api import diff_files
    from fusiondiff.io.store import load_capture

    result = diff_files(directory / "live.json", directory / "replay.json")
    rules = tuple(f.rule for f in result.findings)
    live, replay = load_capture(directory / "live.json"), load_capture(directory / "replay.json")
    return ZooResult(
        scenario=scenario,
        planted=planted_cause(scenario),
        top_finding=rules[0] if rules else None,
        findings=rules,
        live_us=live.fusions[0].timing.median_ns / 1000,
        replay_us=replay.fusions[0].timing.median_ns / 1000,
        exit_code=result.exit_code(),
        questions=tuple((q, result.passes(q)) for q in QUESTIONS),
        findings_of=tuple((q, tuple(f.rule for f in result.findings_of(q))) for q in QUESTIONS),
    )


def record(scenario: str, outdir: Path, timeout_s: float = 300.0) -> str | None:
    """Record one scenario, each side in a fresh process of its own (``common.SIDES``: the live
    process has exited before its replay starts); returns an error line or None."""
    from repro.zoo.common import SIDES

    for side in SIDES:
        proc = subprocess.run(
            [sys.executable, "-m", f"repro.zoo.{scenario}", str(outdir / scenario), side],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            return f"{side}: " + (" | ".join(tail) or f"exit code {proc.returncode}")
    return None


def run_all(outdir: Path | None, scenarios: tuple[str, ...] = SCENARIOS, recorded: Path = RECORDED) -> list[ZooResult]:
    """Record (when ``outdir`` is given) and diagnose every scenario; without ``outdir``, diagnose
    the pairs recorded under ``recorded``."""
    results = []
    for scenario in scenarios:
        directory = (outdir or recorded) / scenario
        error = record(scenario, outdir) if outdir is not None else None
        if error:
            results.append(ZooResult(scenario, planted_cause(scenario), None, (), float("nan"), float("nan"), error))
            continue
        results.append(diagnose(scenario, directory))
    return results


def render_table(results: list[ZooResult]) -> str:
    lines = [
        f"{'scenario':<28} {'planted cause':<20} {'top finding':<20} {'live us':>9} {'replay us':>10}  ok   "
        "exit  failing questions"
    ]
    for r in results:
        failing = ", ".join(q for q, passes in r.questions if not passes) or "-"
        lines.append(
            f"{r.scenario:<28} {str(r.planted):<20} {str(r.top_finding):<20} {r.live_us:9.2f} {r.replay_us:10.2f}  "
            f"{'yes' if r.correct else 'NO ':<4} {r.exit_code if r.exit_code is not None else '-':>4}  {failing}"
            + (f"  error: {r.error}" if r.error else "")
        )
    lines.append(f"{sum(r.correct for r in results)}/{len(results)} scenarios diagnosed correctly")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--recorded"]:
        results = run_all(None, recorded=Path(argv[1]) if len(argv) > 1 else RECORDED)
    else:
        results = run_all(Path(argv[0]))
    print(render_table(results))
    return 0 if all(r.correct for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
