"""The outputs written as they are made (the diff record, the Perfetto trace) are the very bytes
of the whole at once, and a fusion of many kernels is encoded and compared kernel by kernel.

The captures of many kernels are built here (``tests/synthetic.py``), derived, not recorded; the
recorded pair is read from ``tests/data``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import msgspec
import pytest

from fusiondiff.diff.core import diff
from fusiondiff.front.api import open_report
from fusiondiff.io.files import write_chunks
from fusiondiff.records import streamed
from fusiondiff.records.codec import plain_data
from fusiondiff.records.errors import OutputError
from fusiondiff.records.streamed import batched, encode_chunks
from fusiondiff.report.formats import perfetto
from fusiondiff.report.formats.perfetto import build_trace, render_perfetto, trace_chunks
from fusiondiff.report.formats.record import KERNELS_COMPARED_WHOLE as SPLICE_ITEMS
from fusiondiff.report.formats.record import _capture_delta, encode_diff_record, record_chunks, report_from_record
from fusiondiff.report.formats.record_delta import delta
from fusiondiff.report.formats.text_json import JsonRenderer
from fusiondiff.report.interface import DiffReport

import synthetic as syn

DATA = Path(__file__).resolve().parents[1] / "data"


def _many(count: int, renamed_every: int, kind: str = "live", extra: int = 0):
    kernels = [
        syn.kernel("reduction" if renamed_every and g % renamed_every == 1 else "pointwise", g, order=g, n=3, seed=g)
        for g in range(count + extra)
    ]
    return syn.capture([syn.fusion(kernels=kernels), syn.fusion("nvFusion1")], kind=kind)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def many_report() -> DiffReport:
    """A fusion of more kernels than are encoded at once, B's every third renamed and three more."""
    a = _many(3 * SPLICE_ITEMS, 0)
    b = _many(3 * SPLICE_ITEMS, 3, kind="replay", extra=3)
    return DiffReport(diff(a, b), a, b, "a.json", "b.json")


def test_a_record_in_pieces_is_msgspecs_bytes(many_report):
    pieces = list(encode_chunks(many_report.a))
    assert len(pieces) > 3 * SPLICE_ITEMS  # kernel by kernel, not at once
    assert b"".join(pieces) == msgspec.json.encode(many_report.a)
    assert b"".join(encode_chunks(many_report.result)) == msgspec.json.encode(many_report.result)
    assert b"".join(batched(pieces, 1000)) == msgspec.json.encode(many_report.a)
    assert all(len(piece) >= 1000 for piece in list(batched(pieces, 1000))[:-1])


def test_capture_b_compared_kernel_by_kernel_is_the_whole_delta(many_report):
    whole = delta(plain_data(many_report.a), plain_data(many_report.b))
    assert _capture_delta(many_report.a, many_report.b) == whole
    kernels = whole["~"]["fusions"]["[~]"]["0"]["~"]["kernels"]
    assert kernels["len"] == 3 * SPLICE_ITEMS + 3 and len(kernels["[~]"]) == SPLICE_ITEMS + 3
    # and the other way: B has fewer kernels, and B with none at all
    fewer = _capture_delta(many_report.b, many_report.a)
    assert fewer == delta(plain_data(many_report.b), plain_data(many_report.a))
    none = syn.capture([syn.fusion(kernels=[]), syn.fusion("nvFusion1")])
    assert _capture_delta(many_report.a, none) == delta(plain_data(many_report.a), plain_data(none))


def test_the_record_in_pieces_reads_back_as_the_report(many_report):
    record = encode_diff_record(many_report)
    assert record == b"".join(record_chunks(many_report)) and record.endswith(b"}}\n")
    assert len(list(record_chunks(many_report))) >= 1
    back = report_from_record(json.loads(record))
    assert (back.a, back.b) == (many_report.a, many_report.b)
    assert encode_diff_record(back) == record  # the diff too, as the record holds it (worded)
    assert "".join(JsonRenderer().chunks(many_report)) == record.decode()


def test_the_record_of_a_recorded_pair_reads_back_whole():
    report = open_report([DATA / "offset" / "live.json", DATA / "offset" / "replay_fusiondiff.json"])
    record = encode_diff_record(report)
    back = report_from_record(json.loads(record))
    assert (back.a, back.b) == (report.a, report.b) and encode_diff_record(back) == record


@pytest.mark.parametrize("sm_tracks", [False, True])
def test_the_trace_in_pieces_is_the_trace_at_once(sm_tracks):
    report = open_report([DATA / "blocks" / "seed" / "live.json", DATA / "blocks" / "seed" / "replay.json"])
    whole = json.dumps(build_trace(report, sm_tracks), separators=(",", ":"), allow_nan=False) + "\n"
    pieces = list(trace_chunks(report, sm_tracks))
    assert "".join(pieces) == whole == render_perfetto(report, sm_tracks)
    assert len(pieces) >= 3  # the head, the events, the tail with what was left out


def test_a_trace_of_many_events_comes_in_many_pieces(many_report, monkeypatch):
    whole = render_perfetto(many_report, sm_tracks=True)
    monkeypatch.setattr(perfetto, "CHUNK_EVENTS", 50)
    pieces = list(trace_chunks(many_report, sm_tracks=True))
    assert len(pieces) > 3 * SPLICE_ITEMS // 50
    assert "".join(pieces) == whole


def test_pieces_written_as_they_come_are_the_bytes_and_the_gzip_of_them(tmp_path):
    data = [b"x" * 1000, b"y" * 3, b"", b"z" * 70_000]
    write_chunks(tmp_path / "r.json", iter(data))
    write_chunks(tmp_path / "r.json.gz", iter(data))
    assert (tmp_path / "r.json").read_bytes() == b"".join(data)
    assert (tmp_path / "r.json.gz").read_bytes() == gzip.compress(b"".join(data), mtime=0)


def test_a_failure_while_the_pieces_come_leaves_nothing(tmp_path):
    def failing():
        yield b"half"
        raise OSError(28, "No space left on device")

    (tmp_path / "keep.txt").write_text("precious\n")
    (tmp_path / "r.json").symlink_to(tmp_path / "keep.txt")
    with pytest.raises(OutputError, match="link"):
        write_chunks(tmp_path / "r.json", failing())
    with pytest.raises(OutputError, match="No space left"):
        write_chunks(tmp_path / "s.json", failing())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt", "r.json"]
    assert (tmp_path / "keep.txt").read_text() == "precious\n"


@pytest.mark.parametrize("name", ["md", "html"])
def test_the_timing_table_shows_its_first_rows_and_says_how_many_it_left_out(many_report, monkeypatch, name):
    from fusiondiff.report import get_renderer
    from fusiondiff.report.views import content, document

    total = content.timing_row_count(many_report)
    assert total == len(content.timing_rows(many_report)) > 3 * SPLICE_ITEMS
    whole = get_renderer(name).render(many_report)
    assert "left out" not in whole
    for module in (document, content.limits):  # the document builds the table both formats mark up
        monkeypatch.setattr(module, "TIMING_ROWS", 10)
    cut = get_renderer(name).render(many_report)
    assert f"{total - 10} more row(s) of {total} left out (a report shows the first 10)" in cut
    assert len(cut) < len(whole) / 2
    assert whole.count("nvfuser_pointwise_g5") and not cut.count("nvfuser_pointwise_g20")


def test_a_record_of_few_records_is_one_piece_and_the_same_bytes(many_report):
    small = many_report.a.fusions[1]  # the second fusion: a few kernels, under WHOLE_RECORDS
    assert streamed._held(small, streamed.WHOLE_RECORDS) <= streamed.WHOLE_RECORDS
    assert list(encode_chunks(small)) == [msgspec.json.encode(small)]
    big = many_report.a.fusions[0]  # more kernels than that: kernel by kernel
    assert len(list(encode_chunks(big))) > len(big.kernels)
    # the fields searched for records are read from the annotations: lists of records, not names or numbers
    fields = streamed._list_fields(type(big))
    assert {"kernels", "inputs", "outputs"} <= set(fields) and not {"name", "call_count", "warnings"} & set(fields)
