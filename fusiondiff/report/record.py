"""The exported diff record: one JSON file that holds a diff and everything needed to render it again.

``fusiondiff report A B --format json -o diff.json`` writes it; ``fusiondiff report diff.json
--format html`` renders it later, on another machine, without the captures ("capture once,
render many"). Layout (``DIFF_RECORD_VERSION`` 3)::

    {
      "schema_version": 3,               # of this layout; bumped when a field changes meaning
      "record": "fusiondiff diff",       # what the file is
      "fusiondiff_version": "0.1.0",     # that wrote it
      "verdict": "B is 1.40x faster: ...",  # the kernel question's verdict line (report.questions.kernel_line)
      "same_speed": false,               # DiffResult.same_speed
      "properties_identical": false,     # DiffResult.properties_identical
      "comparable": false,               # DiffResult.comparable: both of the above
      "exit_code": 1,                    # DiffResult.exit_code(): the kernel question's gate alone
      "questions": {                     # the three questions, each apart (diff.causes.QUESTIONS)
        "kernel": {"verdict": "...",     # its verdict line
                   "ledger": "...",      # its ledger in words (DiffResult.ledgers holds the numbers)
                   "judged": true,       # DiffResult.judged(question): false, not measured enough
                   "passes": false,      # DiffResult.passes(question)
                   "exit_code": 1,       # DiffResult.exit_code(gates=(question,))
                   "findings": [1, 2]},  # ranks of its findings
        "host": {...}, "fidelity": {...}
      },
      "sides": {                         # both captures, side by side
        "A": {"label": "A (live)",       # how reports name the side
              "path": "offset/live.json",# capture file, relative to the captures' folder
              "kind": "live",            # live | replay
              "source": "...",           # what ran (Capture.source)
              "capture_schema_version": 1,
              "environment": {...},      # fusiondiff.records.environment.Environment
              "protocol": {...}},        # fusiondiff.records.model.TimingProtocol
        "B": {...}
      },
      "diff": {...},                     # fusiondiff.diff.records.DiffResult: pairs, unmatched,
                                         # changes, findings, ledgers, host_times, warnings,
                                         # against_peaks (each kernel against the two GPUs'
                                         # measured peaks; empty unless both measured one)
                                         # (times in ns; NaN as null)
      "samples": [                       # raw per-sample device durations, ns
        {"fusion": "nvFusion0 [forward]",# FusionPair.label
         "kernel": null,                 # null: the fusion (sum of its kernels per sample);
                                         # else the normalized kernel name
         "a_ns": [...], "b_ns": [...]}   # empty on the side that lacks the kernel
      ],
      "traffic": {"A": {...}, "B": {...}},  # how far each kernel is from its GPU's limit (issue #43):
                                         # the measured peak, the datasheet's, and each kernel's bytes,
                                         # GB/s, share of the peak, nvFuser's own figures
                                         # (report.traffic_data.view_data); derived, not read back
      "captures": {"A": {...}, "B": {...}}  # both whole capture records (fusiondiff.records.model.Capture)
    }

Every time is in nanoseconds and every size in bytes, as in the capture records; words and units
are the renderers' business: a finding holds its evidence as data (``Finding.data``), worded when
it is rendered (:mod:`fusiondiff.report.wording`); its ``title`` and ``evidence`` are those words,
written beside the data for readers of the JSON (rendering the record words the data again).
A field added to the diff without changing another's meaning leaves the version as it is: an
older fusiondiff reads the record and passes the field by (``against_peaks``, issue #43), and a
record without it reads as empty. Schema 2 records (before the questions were apart) are read too: their findings are given the
question the causal model gives their rule, and they have no ledgers. Schema 1 records (before
findings were data) are read too: their findings' sentences are rendered
as they are, and whether B is a round trip's merged replay is read from capture B. ``captures`` repeats what ``sides`` and ``samples`` hold in a form
for readers of the JSON: it is what a later ``fusiondiff report diff.json`` renders from.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fusiondiff.diff.causes import node
from fusiondiff.diff.records import DiffResult
from fusiondiff.records.codec import capture_from_jsonable, decode, to_jsonable
from fusiondiff.records.errors import CaptureFormatError, ReportError
from fusiondiff.records.model import Capture
from fusiondiff.records.notes import from_roundtrip
from fusiondiff.report.diff_text import indented_json, json_safe, questions_json, verdict_line
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.traffic_data import view_data
from fusiondiff.report.wording import worded

DIFF_RECORD_VERSION = 3
"""Version of the diff record's layout (independent of the capture schema). 2: findings carry
their evidence as data (``Finding.data``), and ``DiffResult.b_from_roundtrip``."""

RECORD_NAME = "fusiondiff diff"


def _samples(report: DiffReport) -> list[dict[str, Any]]:
    rows = []
    for pair in report.result.pairs:
        fa, fb = report.fusion_a(pair), report.fusion_b(pair)
        rows.append(
            {
                "fusion": pair.label,
                "kernel": None,
                "a_ns": list(fa.timing.samples_ns),
                "b_ns": list(fb.timing.samples_ns),
            }
        )
        for kernel in pair.kernels:
            ka, kb = report.kernel_records(pair, kernel)
            rows.append(
                {
                    "fusion": pair.label,
                    "kernel": kernel.normalized_name,
                    "a_ns": list(ka.timing.samples_ns),
                    "b_ns": list(kb.timing.samples_ns),
                }
            )
        for only in pair.unmatched_kernels:
            record = next(k for k in (fa if only.side == "A" else fb).kernels if k.order == only.order)
            samples = list(record.timing.samples_ns)
            rows.append(
                {
                    "fusion": pair.label,
                    "kernel": only.normalized_name,
                    "a_ns": samples if only.side == "A" else [],
                    "b_ns": samples if only.side == "B" else [],
                }
            )
    return rows


def build_diff_record(report: DiffReport) -> dict[str, Any]:
    """The diff record of ``report`` as JSON-ready data (see the module docstring for the layout)."""
    from fusiondiff.records.version import __version__

    result = report.result
    sides = {}
    for side, capture, label, path in (
        ("A", report.a, result.label_a, report.path_a),
        ("B", report.b, result.label_b, report.path_b),
    ):
        sides[side] = {
            "label": label,
            "path": path,
            "kind": capture.kind,
            "source": capture.source,
            "capture_schema_version": capture.schema_version,
            "environment": to_jsonable(capture.environment),
            "protocol": to_jsonable(capture.protocol),
        }
    return json_safe(
        {
            "schema_version": DIFF_RECORD_VERSION,
            "record": RECORD_NAME,
            "fusiondiff_version": __version__,
            "verdict": verdict_line(result),
            "same_speed": result.same_speed,
            "properties_identical": result.properties_identical,
            "comparable": result.comparable,
            "exit_code": result.exit_code(),
            "questions": questions_json(result),
            "sides": sides,
            "diff": to_jsonable(worded(result)),
            "samples": _samples(report),
            "traffic": {"A": view_data(report.a), "B": view_data(report.b)},
            "captures": {"A": to_jsonable(report.a), "B": to_jsonable(report.b)},
        }
    )


def dumps_diff_record(report: DiffReport) -> str:
    return indented_json(build_diff_record(report))


def is_diff_record(data: Any) -> bool:
    return isinstance(data, dict) and data.get("record") == RECORD_NAME


def report_from_record(data: Any, origin: str = "diff record") -> DiffReport:
    """Rebuild the :class:`DiffReport` a diff record was written from. A record travels like a
    capture, so every part is checked before anything renders it: the layout, each field's type
    (the captures as any capture is), and every reference of the diff into the captures (a pair's
    positions and keys, each kernel's launch order and name); an error is one line naming the field."""
    if not is_diff_record(data):
        raise ReportError(f'{origin} is not a fusiondiff diff record (no "record": "{RECORD_NAME}")')
    version = data.get("schema_version")
    if type(version) is not int or version > DIFF_RECORD_VERSION or version < 1:
        raise ReportError(
            f"{origin} has diff record schema {version!r:.40}; this fusiondiff reads 1 to {DIFF_RECORD_VERSION}: "
            "upgrade fusiondiff, or diff the two captures again"
        )
    for name in ("diff", "captures"):
        if name not in data:
            raise ReportError(
                f"{origin}: the diff record lacks {name!r}; write it again with `fusiondiff report A B --format json`"
            )
    captures = _object(data["captures"], f"{origin}.captures")
    sides = _object(data.get("sides", {}), f"{origin}.sides")
    try:
        result = decode(data["diff"], DiffResult, f"{origin}.diff")
        a, b = (_capture(captures, side, origin) for side in ("A", "B"))
    except CaptureFormatError as exc:
        raise ReportError(str(exc)) from None
    _check_references(result, a, b, f"{origin}.diff")
    if "b_from_roundtrip" not in data["diff"]:  # a schema 1 record
        result = dataclasses.replace(result, b_from_roundtrip=from_roundtrip(b))
    if version < 3:  # before the questions were apart: each finding on its rule's question
        findings = tuple(dataclasses.replace(f, question=node(f.rule).question) for f in result.findings)
        result = dataclasses.replace(result, findings=findings)
    paths = []
    for side in ("A", "B"):
        where = f"{origin}.sides.{side}"
        path = _object(sides.get(side, {}), where).get("path")
        if path is not None and not isinstance(path, str):
            raise ReportError(f"{where}.path: expected a path or null, found {path!r:.40}")
        paths.append(path)
    return DiffReport(result, a, b, paths[0], paths[1])


_MAX_VALUE_DEPTH = 16
"""Deepest nesting of a recorded value a property change can hold (a shape in a list is 2)."""


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ReportError(f"{where}: expected an object, found {type(value).__name__}")
    return value


def _capture(captures: dict[str, Any], side: str, origin: str) -> Capture:
    if side not in captures:
        raise ReportError(
            f"{origin}.captures: no capture {side!r}; write it again with `fusiondiff report A B -o diff.json`"
        )
    return capture_from_jsonable(captures[side], f"{origin}.captures.{side}")


def _check_references(result: DiffResult, a: Capture, b: Capture, where: str) -> None:
    """Every fusion and kernel the diff names is the one in the captures (or a ReportError)."""
    for i, pair in enumerate(result.pairs):
        at = f"{where}.pairs[{i}]"
        fusions = []
        for side, capture, index, key in (("a", a, pair.index_a, pair.key_a), ("b", b, pair.index_b, pair.key_b)):
            if not 0 <= index < len(capture.fusions):
                raise ReportError(
                    f"{at}.index_{side}: {index} is not a fusion of capture {side.upper()} (it holds {len(capture.fusions)})"
                )
            if capture.fusions[index].key != key:
                raise ReportError(f"{at}.key_{side}: {key!r:.60} is not the key of the fusion at index_{side} {index}")
            fusions.append(capture.fusions[index])
        launched = [{(k.order, k.name) for k in f.kernels} for f in fusions]
        for j, kernel in enumerate(pair.kernels):
            for side, order, name, have in (
                ("a", kernel.order_a, kernel.name_a, launched[0]),
                ("b", kernel.order_b, kernel.name_b, launched[1]),
            ):
                if (order, name) not in have:
                    raise ReportError(
                        f"{at}.kernels[{j}]: kernel {name!r:.60} (order {order}) is not a kernel of that fusion in {side.upper()}"
                    )
        for j, only in enumerate(pair.unmatched_kernels):
            have = launched[0 if only.side == "A" else 1]
            if only.order not in {order for order, _ in have}:
                raise ReportError(f"{at}.unmatched_kernels[{j}]: no kernel of order {only.order} on side {only.side}")
        for j, change in enumerate(pair.changes):
            _check_depth(change.a, f"{at}.changes[{j}].a")
            _check_depth(change.b, f"{at}.changes[{j}].b")
    for i, unmatched in enumerate(result.unmatched):
        capture = a if unmatched.side == "A" else b
        if unmatched.key not in {f.key for f in capture.fusions}:
            raise ReportError(f"{where}.unmatched[{i}].key: {unmatched.key!r:.60} is not a fusion of {unmatched.side}")
    for i, change in enumerate(result.changes):
        _check_depth(change.a, f"{where}.changes[{i}].a")
        _check_depth(change.b, f"{where}.changes[{i}].b")


def _check_depth(value: Any, where: str) -> None:
    level = [value]
    for _ in range(_MAX_VALUE_DEPTH + 1):
        level = [
            child
            for item in level
            if isinstance(item, (list, dict))
            for child in (item.values() if isinstance(item, dict) else item)
        ]
        if not level:
            return
    raise ReportError(f"{where}: nested deeper than {_MAX_VALUE_DEPTH} levels, which no recorded value is")
