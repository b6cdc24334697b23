"""The report renderers on captures recorded on the H200: Markdown against golden files, HTML and
Perfetto by structure, the diff record by round trip, and ``fusiondiff report`` end to end.

Golden files are compared after replacing every decimal number by ``N`` (times, ratios, versions)
and fusiondiff's version; paths in reports are relative already. To write them again after an
intended change of wording: ``FUSIONDIFF_UPDATE_GOLDEN=1 python3 -m pytest tests/report/test_renderers.py``.
"""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fusiondiff.front.api import open_report
from fusiondiff.front.cli import main
from fusiondiff.records.environment import Environment
from fusiondiff.records.model import LaunchConfig
from fusiondiff.report import FORMATS, ReportError, get_renderer, render
from fusiondiff.report.formats.perfetto import build_trace
from fusiondiff.report.formats.record import DIFF_RECORD_VERSION, build_diff_record, report_from_record
from fusiondiff.report.views.content import unified
from fusiondiff.report.views.occupancy import occupancy
from fusiondiff.report.words.paths import display_paths, scrub_paths

DATA = Path(__file__).parent.parent / "data"
GOLDEN = Path(__file__).parent.parent / "golden"
OFFSET = [DATA / "offset" / "live.json", DATA / "offset" / "replay_nvfuser.json"]
SOURCE = [DATA / "cuda_source" / "live.json", DATA / "cuda_source" / "replay.json"]
SEED = [DATA / "seed" / "live_forward.json", DATA / "seed" / "replay_forward.json"]


def normalised(text: str) -> str:
    return re.sub(r"\d+\.\d+(?:e[-+]\d+)?", "N", text)


@pytest.fixture(scope="module")
def offset_report():
    return open_report(OFFSET)


@pytest.fixture(scope="module")
def source_report():
    return open_report(SOURCE)


@pytest.mark.parametrize(("name", "inputs"), [("offset_nvfuser", OFFSET), ("cuda_source", SOURCE)])
def test_markdown_matches_golden(name: str, inputs: list[Path]) -> None:
    text = normalised(render("md", open_report(inputs)))
    golden = GOLDEN / f"{name}.md"
    if os.environ.get("FUSIONDIFF_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


def test_a_schema_3_record_written_before_is_still_read(offset_report) -> None:
    """``records/offset_schema3.json`` is what ``fusiondiff diff --format json offset/live.json
    offset/replay_nvfuser.json`` wrote (run in tests/data) before capture B became a delta: both
    captures whole, the samples and the bytes again beside them. It holds the diff as it was judged
    then (a Mann-Whitney verdict, before verdicts were judged between processes), and it is read and
    rendered as that diff: the captures are today's, the verdicts and findings the record's."""
    record = json.loads((DATA / "records" / "offset_schema3.json").read_text())
    assert record["schema_version"] == 3 and "samples" in record and "environment" in record["sides"]["A"]
    again = report_from_record(record)
    assert again.a == offset_report.a and again.b == offset_report.b
    assert [p.timing.verdict for p in again.result.pairs] == [p["timing"]["verdict"] for p in record["diff"]["pairs"]]
    assert [f.rule for f in again.result.findings] == [f["rule"] for f in record["diff"]["findings"]]
    for name in ("md", "html", "text"):
        shown = render(name, again)
        assert "Mann-Whitney p=3.0e-11" in shown and all(f.rule in shown for f in again.result.findings)


def test_markdown_has_no_absolute_path_of_the_recording_machine(offset_report) -> None:
    # replay_nvfuser.json says it ran /tmp/rec/scratch/offset_nvfuser_repro.py
    assert "offset_nvfuser_repro.py" in json.dumps(offset_report.b.source)
    text = render("md", offset_report)
    assert "/tmp/" not in text and str(DATA) not in text
    assert "…/offset_nvfuser_repro.py" in text
    assert "offset/live.json" in text


def test_markdown_shows_the_cuda_source_and_definition_diffs(source_report) -> None:
    text = render("md", source_report)
    assert "+  i13 = __to_index(i12);" in text  # the line the round trip adds, name shifts ignored
    assert "dtype=DataType.Index)" in text
    assert text.count("<details>") == text.count("</details>")


class _Tags(HTMLParser):
    VOID = {"meta", "br", "circle", "line", "rect", "hr", "img", "input", "link"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.urls: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):  # noqa: ANN001
        self.tags.append(tag)
        self.urls += [v for k, v in attrs if k in ("src", "href") and v]
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):  # noqa: ANN001
        self.tags.append(tag)
        self.urls += [v for k, v in attrs if k in ("src", "href") and v]

    def handle_endtag(self, tag):  # noqa: ANN001
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()


@pytest.mark.parametrize("inputs", [OFFSET, SOURCE, SEED], ids=["offset", "cuda_source", "seed"])
def test_html_is_one_self_contained_well_formed_page(inputs: list[Path]) -> None:
    report = open_report(inputs)
    page = render("html", report)
    parser = _Tags()
    parser.feed(page)
    assert parser.errors == [] and parser.stack == []
    assert not [u for u in parser.urls if re.match(r"(?i)(https?:)?//", u)], "nothing is loaded from the network"
    assert "script" not in parser.tags and "link" not in parser.tags and "iframe" not in parser.tags
    assert not re.search(r"(?i)url\(\s*['\"]?https?:", page) and "@import" not in page
    # a distribution plot per matched kernel (a fusion of one kernel shows it once)
    kernels = sum(len(p.kernels) for p in report.result.pairs)
    several = sum(1 for p in report.result.pairs if len(p.kernels) > 1)
    assert page.count("<svg") == kernels + several
    # the answer first: each question's line, labelled, before the title and the sides
    answers = [page.index(f"<strong>{q}:</strong>") for q in ("kernel", "host", "fidelity")]
    assert answers == sorted(answers) and answers[-1] < page.index("<h1>") and "Verdict:" not in page
    assert report.result.label_a in page and report.result.label_b in page
    assert "/tmp/" not in page


def test_html_colours_the_diffs(source_report) -> None:
    page = render("html", source_report)
    assert '<span class="add">+  i13 = __to_index(i12);</span>' in page
    assert 'class="hunk"' in page and 'class="del"' in page


def test_perfetto_trace_structure(offset_report) -> None:
    trace = build_trace(offset_report, sm_tracks=True)  # the SM tracks, asked for (issue #41)
    json.dumps(trace, allow_nan=False)  # strict JSON
    events = trace["traceEvents"]
    assert isinstance(events, list) and events
    meta = [e for e in events if e["ph"] == "M"]
    spans = [e for e in events if e["ph"] == "X"]
    assert {e["name"] for e in meta} <= {
        "process_name",
        "process_sort_index",
        "process_labels",
        "thread_name",
        "thread_sort_index",
    }
    for e in spans:
        assert {"name", "ph", "ts", "dur", "pid", "tid", "args"} <= e.keys()
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0 and e["dur"] > 0
    process_names = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    thread_names = {(e["pid"], e["tid"]) for e in meta if e["name"] == "thread_name"}
    assert {e["pid"] for e in spans} <= process_names.keys()
    assert {(e["pid"], e["tid"]) for e in spans} <= thread_names
    assert process_names[1].startswith("A (live)") and process_names[2].startswith("B (replay)")
    assert "derived" in process_names[3] and "derived" in process_names[4]

    kernels = {e["pid"]: e for e in spans if e["cat"] == "kernel"}
    a, b = kernels[1], kernels[2]
    assert a["ts"] == b["ts"] == 0, "matched fusions start together"
    assert a["args"]["block"] == "512x1x1" and b["args"]["block"] == "128x1x1"
    assert a["args"]["registers_per_thread"] == 31
    assert a["args"]["inputs"][0] == "bfloat16[4, 1024, 4096] offset 1, align 2 B"
    assert a["args"]["derived_occupancy"]["blocks_per_sm"] == 4

    sm_tracks = {(e["pid"], e["tid"]) for e in spans if e["cat"] == "derived"}
    assert len(sm_tracks) == 2 * 132
    assert all(e["args"]["derived"] is True for e in spans if e["cat"] == "derived")
    # every SM's track ends by the kernel's end: the derived view spans the measured median
    a_end = a["ts"] + a["dur"]
    assert max(e["ts"] + e["dur"] for e in spans if e["pid"] == 3) == pytest.approx(a_end, abs=0.0011)
    # on every track, each event ends before the next begins, even after truncation to whole ns
    by_track: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for e in spans:
        by_track.setdefault((e["pid"], e["tid"]), []).append(
            (int(e["ts"] * 1000), int(e["ts"] * 1000) + int(e["dur"] * 1000))
        )
    for track in by_track.values():
        track.sort()
        assert all(end <= start for (_, end), (start, _) in zip(track, track[1:]))


def test_occupancy_of_the_offset_kernels() -> None:
    h200 = Environment(compute_capability="9.0", sm_count=132)
    live = occupancy(
        LaunchConfig(grid=(4096, 1, 1), block=(512, 1, 1), shared_mem_bytes=256, registers_per_thread=31), h200
    )
    replay = occupancy(
        LaunchConfig(grid=(4096, 1, 1), block=(128, 1, 1), shared_mem_bytes=256, registers_per_thread=40), h200
    )
    assert (live.blocks_per_sm, live.limited_by, live.full_waves, live.tail_blocks) == (4, "threads", 7, 400)
    # 40 registers: 1280 per warp, 5120 per block of 4 warps: 12 blocks in 65536 registers
    assert (replay.blocks_per_sm, replay.limited_by) == (12, "registers")
    assert sum(live.tail_blocks_on(sm) for sm in range(132)) == 400
    assert occupancy(LaunchConfig(grid=None, block=None), h200) is None
    unknown = occupancy(LaunchConfig(grid=(1, 1, 1), block=(1024, 1, 1)), Environment(sm_count=10))
    assert unknown.assumed_capability and unknown.capability == "9.0" and unknown.blocks_per_sm == 2
    smem = occupancy(LaunchConfig(grid=(1, 1, 1), block=(32, 1, 1), shared_mem_bytes=100_000), h200)
    assert (smem.blocks_per_sm, smem.limited_by) == (2, "shared memory")


def test_diff_record_has_its_schema_and_renders_the_same_again(tmp_path: Path, offset_report) -> None:
    record = build_diff_record(offset_report)
    assert record["schema_version"] == DIFF_RECORD_VERSION
    assert record["sides"] == {
        "A": {"label": "A (live)", "path": "offset/live.json"},
        "B": {"label": "B (replay)", "path": "offset/replay_nvfuser.json"},
    }
    a, b = record["captures"]["A"], record["captures"]["B"]
    assert a["environment"]["gpu_name"] == "NVIDIA H200" and len(a["fusions"][0]["timing"]["samples_ns"]) == 30
    # B is written as what differs from A: its samples and the time it was recorded, not the
    # fusion's name, its outputs or the GPU both share
    fusion_b = b["~"]["fusions"]["[~]"]["0"]["~"]
    assert len(fusion_b["timing"]["~"]["samples_ns"]["="]) == 30  # a list of numbers that differs: whole
    assert "name" not in fusion_b and "outputs" not in fusion_b
    assert "recorded_at" in b["~"]["environment"]["~"] and "gpu_name" not in b["~"]["environment"]["~"]
    assert "samples" not in record and "traffic" not in record
    assert record["diff"]["findings"][0]["rule"] == "storage_offset"
    path = tmp_path / "diff.json"
    path.write_text(json.dumps(record))
    again = open_report([path])
    assert again.b == offset_report.b and again.a == offset_report.a
    for name in ("md", "html", "text"):
        assert render(name, again) == render(name, offset_report)
    with pytest.raises(ReportError, match="schema"):
        report_from_record({**record, "schema_version": DIFF_RECORD_VERSION + 1})


def test_registry_knows_every_format() -> None:
    assert FORMATS == ("text", "json", "md", "html", "perfetto")
    for name in FORMATS:
        assert get_renderer(name).name == name
    with pytest.raises(ReportError, match="choose one of"):
        get_renderer("pdf")


def test_report_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    md = tmp_path / "r.md"
    # 0 once written, though the runs differ (issue #41); --exit-code gives the diff's 1
    assert main(["report", *map(str, OFFSET), "-o", str(md)]) == 0
    first = md.read_text().splitlines()
    assert [line.split(":**")[0] for line in first[:3]] == ["**kernel", "**host", "**fidelity"]
    assert "## fusiondiff: A (live) vs B (replay)" in first
    record = tmp_path / "diff.json"
    assert main(["report", *map(str, OFFSET), "-o", str(record), "--exit-code"]) == 1
    assert json.loads(record.read_text())["record"] == "fusiondiff diff"
    trace = tmp_path / "trace.json"
    assert main(["report", str(record), "--format", "perfetto", "-o", str(trace)]) == 0
    assert main(["report", str(record), "--format", "perfetto", "-o", str(trace), "--exit-code"]) == 1
    assert "traceEvents" in json.loads(trace.read_text())
    capsys.readouterr()
    assert main(["report", str(record), "--format", "text", "--exit-code"]) == 1
    assert capsys.readouterr().out.startswith("kernel: ")
    assert main(["report", str(OFFSET[0])]) == 2
    assert "not a diff record" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # argparse's choices: usage and one line, exit 2
        main(["report", *map(str, OFFSET), "--format", "pdf"])
    assert refused.value.code == 2 and "invalid choice: 'pdf'" in capsys.readouterr().err


def test_paths_are_relative_to_the_captures_folder() -> None:
    assert display_paths(OFFSET) == ["offset/live.json", "offset/replay_nvfuser.json"]
    assert display_paths([SEED[0], OFFSET[0]]) == ["data/seed/live_forward.json", "data/offset/live.json"]
    assert scrub_paths("ran /tmp/rec/scratch/x.py 1 (B/A 0.72x)") == "ran …/x.py 1 (B/A 0.72x)"
    assert scrub_paths("/work/a/tests/data/x.json", [Path("/work/a/tests")]) == "tests/data/x.json"


def test_unified_diff_ignores_shifted_value_names() -> None:
    a = "tv1 = fd.ops.add(tv0, 1)\ntv2 = fd.ops.mul(tv1, tv1)\nfd.add_output(tv2)\n"
    b = "tv1 = fd.ops.add(tv0, 1)\nc5 = fd.ops.cast(c4, dtype=DataType.Index)\ntv3 = fd.ops.mul(tv1, tv1)\nfd.add_output(tv3)\n"
    lines = unified(a, b, "A", "B")
    assert [line for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---"))] == [
        "+c5 = fd.ops.cast(c4, dtype=DataType.Index)"
    ]
    assert unified(a, a.replace("tv", "T"), "A", "B") == ()


def test_notebook_api(offset_report) -> None:
    pytest.importorskip("pandas")
    import fusiondiff.front.notebook as fdn

    capture = fdn.load(OFFSET[0])
    assert "fusion0" in capture._repr_html_()
    assert list(capture.to_dataframe("kernels").registers_per_thread) == [31]
    d = fdn.diff(*OFFSET)
    assert "<strong>kernel:</strong> B is 1.40x faster" in d._repr_html_()
    kernels = d.to_dataframe("kernels")
    assert list(kernels[["block_a", "block_b", "verdict"]].iloc[0]) == ["512x1x1", "128x1x1", "FASTER"]
    assert set(d.to_dataframe("samples").side) == {"A", "B"}
    assert d.to_dataframe("findings").rule.iloc[0] == "storage_offset"
    assert fdn.diff(capture, fdn.load(OFFSET[1])).result.findings == d.result.findings
    with pytest.raises(ReportError):
        d.to_dataframe("nothing")  # type: ignore[arg-type]


def test_report_narrowed_by_top_fusion_and_min_gap(capsys: pytest.CaptureFixture[str]) -> None:
    from fusiondiff.report.views.filters import Selection, select

    seed = open_report(SEED)
    top = select(seed, Selection(top=3))
    gaps = [abs(p.timing.gap_ns) for p in top.result.pairs]
    assert len(gaps) == 3 and gaps == sorted(gaps, reverse=True)
    assert min(gaps) >= max(abs(p.timing.gap_ns) for p in seed.result.pairs if p not in top.result.pairs)
    one = select(seed, Selection(fusion="nvFusion1"))
    assert [p.label for p in one.result.pairs] == ["nvFusion1 [forward] vs nvFusion1"]
    assert [f.fusions for f in one.result.findings] == [("nvFusion1 [forward] vs nvFusion1",)]
    assert "narrowed by --fusion nvFusion1: 1 of 13" in render("md", one)
    assert all(abs(p.timing.gap_ns) >= 500 for p in select(seed, Selection(min_gap_ns=500)).result.pairs)
    assert select(seed, Selection()) is seed
    with pytest.raises(ReportError, match="side A of this diff has no fusion 'nvFusion99'; did you mean nvFusion9"):
        select(seed, Selection(fusion="nvFusion99"))
    # the code of what is shown: same speed
    assert main(["report", *map(str, SEED), "--top", "2", "--format", "text", "--exit-code"]) == 0
    lines = capsys.readouterr().out.splitlines()
    starts = [next(i for i, line in enumerate(lines) if line.startswith(s)) for s in ("fidelity:", "(narrowed", "A (")]
    assert starts == sorted(starts) and lines[starts[1]].startswith("(narrowed by --top 2: 2 of 13")
    assert main(["report", *map(str, SEED), "--top", "2", "--format", "json"]) == 2


def test_show_filters_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(SEED[0]), "--top", "1", "--format", "json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["schema_version"] == 1 and [f["name"] for f in data["fusions"]] == ["nvFusion3"]
    assert "1 of 13 fusion(s) shown" in captured.err
    assert main(["show", str(SEED[0]), "--fusion", "nvFusion0"]) == 0
    assert "nvFusion0 [forward]" in capsys.readouterr().out
    assert main(["show", str(SEED[0]), "--fusion", "nope"]) == 2
