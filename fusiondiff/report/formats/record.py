"""The exported diff record: one JSON file that holds a diff and everything needed to render it again.

``fusiondiff report A B --format json -o diff.json`` writes it; ``fusiondiff report diff.json
--format html`` renders it later, on another machine, without the captures ("capture once,
render many"). Layout (``DIFF_RECORD_VERSION`` 4)::

    {
      "schema_version": 4,               # of this layout; bumped when a field changes meaning
      "record": "fusiondiff diff",       # what the file is
      "fusiondiff_version": "0.1.0",     # that wrote it
      "verdict": "B is 1.40x faster: ...",  # the kernel question's verdict line (report.questions.kernel_line)
      "same_speed": false,               # DiffResult.same_speed
      "properties_identical": false,     # DiffResult.properties_identical
      "comparable": false,               # DiffResult.comparable: both of the above
      "exit_code": 1,                    # DiffResult.exit_code(): the kernel question's gate alone
      "questions": {                     # the three questions, each apart (records.gates.QUESTIONS)
        "kernel": {"verdict": "...",     # its verdict line
                   "ledger": "...",      # its ledger in words (DiffResult.ledgers holds the numbers)
                   "judged": true,       # DiffResult.judged(question): false, not measured enough
                   "passes": false,      # DiffResult.passes(question)
                   "exit_code": 1,       # DiffResult.exit_code(gates=(question,))
                   "findings": [1, 2]},  # ranks of its findings
        "host": {...}, "fidelity": {...}
      },
      "sides": {                         # how reports name each side
        "A": {"label": "A (live)",
              "path": "offset/live.json"},  # capture file, relative to the captures' folder
        "B": {...}
      },
      "diff": {...},                     # fusiondiff.diff.records.DiffResult: pairs, unmatched,
                                         # changes, findings, ledgers, host_times, warnings,
                                         # against_peaks (each kernel against the two GPUs'
                                         # measured peaks, its bytes; empty unless both measured one)
                                         # (times in ns; NaN as null)
      "captures": {
        "A": {...},                      # capture A whole (fusiondiff.records.model.Capture)
        "B": {"~": {...}}                # capture B as its differences from A (report.record_delta):
      }                                  # what both share is written once, in A
    }

Each figure is written once: a side's kind, source, environment, protocol and samples are in its
capture; the medians, verdicts and findings in ``diff``; a kernel's bytes and share of the peak are
derived from the captures (``fusiondiff show --format json``, the reports) and, for the kernels a
diff sets against both peaks, in ``diff.against_peaks``. The record is written without indentation.

Every time is in nanoseconds and every size in bytes, as in the capture records; words and units
are the renderers' business: a finding holds its evidence as data (``Finding.data``), worded when
it is rendered (:mod:`fusiondiff.report.words.wording`); its ``title`` and ``evidence`` are those words,
written beside the data for readers of the JSON (rendering the record words the data again).
A field added to the diff without changing another's meaning leaves the version as it is: an
older fusiondiff reads the record and passes the field by (``against_peaks``), and a record
without it reads as empty. Older records are read too. Schema 3 held both captures whole, and
beside them each side's environment and protocol, every sample again (``samples``) and each
kernel's bytes (``traffic``); those copies are passed by. Schema 2 records (before the questions
were apart): their findings are given the question the causal model gives their rule, and they
have no ledgers. Schema 1 records (before findings were data): their findings' sentences are
rendered as they are, and whether B is a round trip's merged replay is read from capture B.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from fusiondiff.diff.causes import node
from fusiondiff.diff.records import DiffResult
from fusiondiff.records.codec import capture_from_jsonable, decode, plain_data
from fusiondiff.records.collector import collector_paused
from fusiondiff.records.errors import CaptureFormatError, ReportError
from fusiondiff.records.model import Capture, FusionRecord
from fusiondiff.records.notes import from_roundtrip
from fusiondiff.records.streamed import batched, encode_chunks, shell
from fusiondiff.report.formats.diff_text import json_safe, verdict_line
from fusiondiff.report.formats.record_delta import apply, delta
from fusiondiff.report.interface import DiffReport
from fusiondiff.report.words.questions import questions_json
from fusiondiff.report.words.wording import worded

DIFF_RECORD_VERSION = 4
"""Version of the diff record's layout (independent of the capture schema). 2: findings carry
their evidence as data (``Finding.data``), and ``DiffResult.b_from_roundtrip``; 3: the questions
apart; 4: capture B as its differences from A, no figure written twice."""
DELTA_SINCE = 4
"""The first layout whose capture B is a delta against capture A."""

RECORD_NAME = "fusiondiff diff"
KERNELS_COMPARED_WHOLE = 64
"""A fusion of more kernels than this is compared with its counterpart kernel by kernel when the
record is made (:func:`_fusion_delta`): a fusion of 100,000 kernels is never held whole as data."""


def build_diff_record(report: DiffReport) -> dict[str, Any]:
    """The diff record of ``report`` as data (what :func:`encode_diff_record` writes, parsed; NaN
    is None), its layout in the module docstring."""
    return msgspec.json.decode(encode_diff_record(report))


def _head(report: DiffReport) -> dict[str, Any]:
    """The record's fields before ``diff`` and ``captures``, in their order."""
    from fusiondiff.records.version import __version__

    result = report.result
    return {
        "schema_version": DIFF_RECORD_VERSION,
        "record": RECORD_NAME,
        "fusiondiff_version": __version__,
        "verdict": verdict_line(result),
        "same_speed": result.same_speed,
        "properties_identical": result.properties_identical,
        "comparable": result.comparable,
        "exit_code": result.exit_code(),
        "questions": json_safe(questions_json(result)),
        "sides": {
            "A": {"label": result.label_a, "path": report.path_a},
            "B": {"label": result.label_b, "path": report.path_b},
        },
    }


def record_chunks(report: DiffReport) -> Iterator[bytes]:
    """The diff record as compact UTF-8 JSON, in pieces of about a megabyte that join to it
    (:mod:`fusiondiff.records.streamed`): the diff and capture A are encoded part by part as they
    are written, and of capture B only its differences from A are ever held."""
    head = msgspec.json.encode(_head(report))
    with collector_paused():  # the delta of a whole session is millions of objects (records.collector)
        capture_b = msgspec.json.encode(_capture_delta(report.a, report.b))
    parts = (
        [head[:-1], b',"diff":'],
        encode_chunks(worded(report.result)),
        [b',"captures":{"A":'],
        encode_chunks(report.a),
        [b',"B":', capture_b, b"}}\n"],
    )
    yield from batched(chunk for part in parts for chunk in part)


def _capture_delta(a: Capture, b: Capture) -> dict[str, Any]:
    """Capture B as its delta against capture A (what :func:`delta` of their data gives), made
    fusion by fusion, and kernel by kernel in a fusion of many: neither side's data is ever whole
    at once (at 10,000 fusions, a fifth of the command's memory). Where a side has no fusion, the
    two are compared whole."""
    if not b.fusions or not a.fusions:
        return delta(plain_data(a), plain_data(b))
    change = delta(plain_data(shell(a, fusions=())), plain_data(shell(b, fusions=())))
    change["~"].pop("fusions", None)
    items = _items_delta(a.fusions, b.fusions, _fusion_delta)
    if items is not None:
        change["~"]["fusions"] = items
    return change


def _items_delta(
    a: tuple[Any, ...], b: tuple[Any, ...], item_delta: Callable[[Any, Any], dict[str, Any] | None]
) -> dict[str, Any] | None:
    """The delta of two lists of records (``b`` not empty), each position's by ``item_delta``
    (None where equal); None where the lists are equal."""
    items = {}
    for i, record in enumerate(b):
        if i >= len(a):
            items[str(i)] = {"=": plain_data(record)}
        else:
            change = item_delta(a[i], record)
            if change is not None:
                items[str(i)] = change
    if len(b) != len(a):
        return {"[~]": items, "len": len(b)}
    return {"[~]": items} if items else None


def _record_delta(a: Any, b: Any) -> dict[str, Any] | None:
    data_a, data_b = plain_data(a), plain_data(b)
    return None if data_a == data_b else delta(data_a, data_b)


def _fusion_delta(a: FusionRecord, b: FusionRecord) -> dict[str, Any] | None:
    """Fusion B's delta against fusion A, None where equal; a fusion of many kernels is compared
    kernel by kernel (its kernels' delta placed where :func:`delta` places it)."""
    if len(a.kernels) <= KERNELS_COMPARED_WHOLE and len(b.kernels) <= KERNELS_COMPARED_WHOLE:
        return _record_delta(a, b)
    data_b = plain_data(shell(b, kernels=()))
    change = delta(plain_data(shell(a, kernels=())), data_b)
    if b.kernels:
        kernels = _items_delta(a.kernels, b.kernels, _record_delta)
    else:
        kernels = {"=": plain_data(b.kernels)}
    if kernels is not None:
        changed = change["~"]
        change["~"] = {k: kernels if k == "kernels" else changed[k] for k in data_b if k == "kernels" or k in changed}
    return None if change == {"~": {}} else change


def dumps_diff_record(report: DiffReport) -> str:
    """The diff record as JSON text, compact: a record of a whole session is read by programs."""
    return encode_diff_record(report).decode()


def encode_diff_record(report: DiffReport) -> bytes:
    """The diff record as UTF-8 JSON bytes (:func:`dumps_diff_record`'s text, for a file)."""
    return b"".join(record_chunks(report))


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
        a, b = _captures(captures, version, origin)
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


def _captures(captures: dict[str, Any], version: int, origin: str) -> tuple[Capture, Capture]:
    """Both captures of a record: each whole, or (from :data:`DELTA_SINCE`) B as its delta against A."""
    for side in ("A", "B"):
        if side not in captures:
            raise ReportError(
                f"{origin}.captures: no capture {side!r}; write it again with `fusiondiff report A B -o diff.json`"
            )
    a = capture_from_jsonable(captures["A"], f"{origin}.captures.A")
    b = captures["B"]
    if version >= DELTA_SINCE:
        b = apply(captures["A"], b, f"{origin}.captures.B")
    return a, capture_from_jsonable(b, f"{origin}.captures.B")


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
