"""Issue #24's cases of the battery for the diff-record reader and text no encoder takes.

``record``: ``report DIFF.json`` reads a diff record as a capture is read (bounded, numbers and
nesting checked) and refuses, in one line naming the field, every reference of the diff into its
captures that points nowhere or elsewhere.

``surrogate``: a lone surrogate (``\\ud800``) in any text of a file is replaced by U+FFFD on load,
the same way for captures and diff records, so every output can be encoded and every JSON output
is strict JSON.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any

from battery import DIFF, RECORDED, SHOW, Case, Run, put, script_safe, shows, sparse, whole
from battery_reports import KERNEL, REPORT_MD

REPORT_RECORD = "report {cap} --format md"
SURROGATE = "nv\ud800x"


def _record_of_recording() -> dict[str, Any]:
    from fusiondiff.front.api import open_report
    from fusiondiff.report.formats.record import dumps_diff_record

    return json.loads(dumps_diff_record(open_report([RECORDED, RECORDED])))


RECORD = _record_of_recording()
"""The diff record of the recording against itself, as ``report A B -o diff.json`` writes it."""


def record(*changes: tuple[str, Any]) -> Callable[[Any], bytes]:
    """The file is the diff record, with each (dotted path, value) set."""

    def mutate(data: Any) -> bytes:
        out = json.loads(json.dumps(RECORD))
        for path, value in changes:
            keys = [int(k) if k.lstrip("-").isdigit() else k for k in path.split(".")]
            parent = out
            for key in keys[:-1]:
                parent = parent[key]
            parent[keys[-1]] = value
        return json.dumps(out).encode()

    return mutate


def record_text(old: str, new: str) -> Callable[[Any], bytes]:
    """The diff record's JSON text with ``old`` replaced once by ``new``."""
    text = json.dumps(RECORD)
    assert old in text
    return whole(text.replace(old, new, 1))


def strict_json(where: str | None = None) -> Callable[[Run], None]:
    """The JSON on stdout (or in ``where``) holds no lone surrogate, escaped or as a character, and
    the replacement instead: escaped (``json.dumps``) or as the character itself (the diff record,
    written by msgspec as UTF-8)."""

    def check(run: Run) -> None:
        text = run.stdout if where is None else (run.tmp / where).read_text(encoding="utf-8")
        assert not re.search(r"\\u[dD][89a-fA-F]", text)
        assert not any(0xD800 <= ord(c) <= 0xDFFF for c in text)
        assert "\\ufffd" in text or "\ufffd" in text
        json.loads(text)

    return check


RECORDS = [
    Case(
        "record",
        "nesting 100,000 deep",
        REPORT_RECORD,
        record_text(
            '"record": "fusiondiff diff"', '"record": "fusiondiff diff", "deep": ' + "[" * 100000 + "]" * 100000
        ),
        2,
        r"cap\.json is not a fusiondiff diff record \(JSON nested too deeply\)",
    ),
    Case(
        "record",
        "an integer of 5,000 digits",
        REPORT_RECORD,
        record_text('"index_a": 0', '"index_a": ' + "7" * 5000),
        2,
        r"not a fusiondiff diff record \(an integer has 5000 digits\)",
    ),
    Case(
        "record",
        "10**400",
        REPORT_RECORD,
        record_text('"index_a": 0', '"index_a": 1e400'),
        2,
        r"the number 1e400 is too large for a float",
    ),
    Case(
        "record",
        "a file of 4 GiB",
        "report {tmp}/big.json",
        None,
        2,
        r"big\.json is larger than 512 MiB",
        setup=sparse("big.json", 4 * 2**30),
    ),
    Case(
        "record",
        "a FIFO",
        "report {tmp}/pipe.json",
        None,
        2,
        r"pipe\.json is not a regular file",
        setup=lambda tmp, cap: os.mkfifo(tmp / "pipe.json"),
    ),
    Case(
        "record",
        "pair index 99",
        REPORT_RECORD,
        record(("diff.pairs.0.index_a", 99)),
        2,
        r"cap\.json\.diff\.pairs\[0\]\.index_a: 99 is not a fusion of capture A \(it holds 1\)",
    ),
    Case(
        "record",
        "pair index -1",
        REPORT_RECORD,
        record(("diff.pairs.0.index_b", -1)),
        2,
        r"diff\.pairs\[0\]\.index_b: -1 is not a fusion of capture B",
    ),
    Case(
        "record",
        "a pair's key names another fusion",
        REPORT_RECORD,
        record(("diff.pairs.0.key_b", "forward/nvFusion0/000000000000")),
        2,
        r"pairs\[0\]\.key_b: 'forward/nvFusion0/000000000000' is not the key of the fusion at index_b 0",
    ),
    Case(
        "record",
        "a kernel name that points nowhere",
        REPORT_RECORD,
        record(("diff.pairs.0.kernels.0.name_a", "nvfuser_nowhere_f0_c0_r0_g9")),
        2,
        r"pairs\[0\]\.kernels\[0\]: kernel 'nvfuser_nowhere_f0_c0_r0_g9' \(order \d+\) is not a kernel of that fusion in A",
    ),
    Case(
        "record",
        "an unmatched fusion that is not there",
        REPORT_RECORD,
        record(
            (
                "diff.unmatched",
                [{"side": "B", "key": "x/y/z", "name": "y", "trace": None, "median_ns": 1.0, "reason": "r"}],
            )
        ),
        2,
        r"diff\.unmatched\[0\]\.key: 'x/y/z' is not a fusion of B",
    ),
    Case(
        "record",
        "sides of the wrong type",
        REPORT_RECORD,
        record(("sides", ["A", "B"])),
        2,
        r"cap\.json\.sides: expected an object, found list",
    ),
    Case(
        "record",
        "a side's path of the wrong type",
        REPORT_RECORD,
        record(("sides.B.path", {"x": 1})),
        2,
        r"sides\.B\.path: expected a path or null, found \{'x': 1\}",
    ),
    Case(
        "record",
        "pairs of the wrong type",
        REPORT_RECORD,
        record(("diff.pairs", "all")),
        2,
        r"cap\.json\.diff\.pairs: expected a list, found str",
    ),
    Case(
        "record",
        "a capture that is not one",
        REPORT_RECORD,
        record(("captures.A", [])),
        2,
        r"captures\.A is not a fusiondiff capture \(no schema_version\)",
    ),
    Case(
        "record",
        "no captures",
        REPORT_RECORD,
        record(("captures", None)),
        2,
        r"cap\.json\.captures: expected an object, found NoneType",
    ),
    Case(
        "record",
        "an impossible value in a capture",
        REPORT_RECORD,
        record(("captures.A.fusions.0.timing.samples_ns.0", -5.0)),
        2,
        r"captures\.A\.fusions\[0\]\.timing\.samples_ns\[0\]: -5\.0 is not a duration",
    ),
    Case(
        "record",
        "an impossible value in capture B, a delta against A",
        REPORT_RECORD,
        record(("captures.B.~.fusions", {"[~]": {"0": {"~": {"call_count": {"=": -3}}}}})),
        2,
        r"captures\.B\.fusions\[0\]\.call_count: -3",
    ),
    Case("record", "NaN", REPORT_RECORD, record_text('"index_a": 0', '"index_a": NaN'), 2, r"NaN is not a JSON number"),
    Case(
        "record",
        "schema version as text",
        REPORT_RECORD,
        record(("schema_version", "1")),
        2,
        r"has diff record schema '1'; this fusiondiff reads 1 to 4",
    ),
    Case(
        "record",
        "a recorded value nested too deep",
        REPORT_RECORD,
        record(
            (
                "diff.changes",
                [{"path": "p", "a": [[[[[[[[[[[[[[[[[[[0]]]]]]]]]]]]]]]]]]], "b": None, "category": "protocol"}],
            )
        ),
        2,
        r"diff\.changes\[0\]\.a: nested deeper than 16 levels",
    ),
]

SURROGATES = [
    Case(
        "surrogate", "show: replaced on load", SHOW, put("fusions.0.name", SURROGATE), 0, None, check=shows("nv\ufffdx")
    ),
    Case(
        "surrogate",
        "show --format json is strict JSON",
        SHOW + " --format json",
        put("fusions.0.name", SURROGATE),
        0,
        None,
        check=strict_json(),
    ),
    Case(
        "surrogate",
        "report --format md",
        REPORT_MD,
        put("fusions.0.name", SURROGATE),
        0,
        None,
        check=shows("nv\ufffdx"),
    ),
    Case(
        "surrogate",
        "report --format html to a file",
        "report {other} {cap} -o {tmp}/r.html",
        put("fusions.0.name", SURROGATE),
        0,
        r"^wrote .*r\.html \(html\)$",
    ),
    Case(
        "surrogate",
        "diff --json is strict JSON",
        DIFF + " --json {tmp}/d.json",
        put("fusions.0.name", SURROGATE),
        0,
        None,
        check=strict_json("d.json"),
    ),
    Case(
        "surrogate",
        "a dictionary key",
        SHOW + " --format json",
        put("environment.nvfuser_env", {"NVFUSER_\udc80": "v\udfff"}),
        0,
        None,
        check=strict_json(),
    ),
    Case(
        "surrogate",
        "in a diff record",
        REPORT_RECORD,
        record(("captures.A.environment.gpu_name", SURROGATE), ("diff.label_b", SURROGATE)),
        0,
        None,
        check=shows("nv\ufffdx"),
    ),
    Case("surrogate", "timers", "timers {other} {cap}", put("fusions.0.kernels.1.name", KERNEL + "\ud800"), 0, None),
    Case(
        "surrogate",
        "repro",
        "repro {cap} -o {tmp}/r.py",
        put("fusions.0.name", SURROGATE),
        0,
        r"^wrote .*r\.py$",
        check=script_safe("r.py"),
    ),
]

RECORD_CASES = [*RECORDS, *SURROGATES]
