"""What a new user met diffing the recorded captures (issue #23, section 2), each through the real
command line (run in this process, ``tests/inprocess.py``: what it prints and exits with is what is
tested here, not the process): how a plain ``diff`` ranks, how same-definition fusions pair, what
the text says about units, verdicts, long sources and idle clocks."""

from __future__ import annotations

import json
import re
from pathlib import Path

from inprocess import fusiondiff

from fusiondiff.report.formats.record import report_from_record

DATA = Path(__file__).parent.parent / "data"
PLANTED = DATA / "multigpu" / "planted"
GEMMA = DATA / "roundtrip_gemma"


def findings(text: str) -> list[str]:
    """The ranked findings' first lines (``1. [rule, role] title  (explains ...)``)."""
    return re.findall(r"^  \d+\. \[.*$", text, flags=re.MULTILINE)


def test_a_plain_diff_of_two_ranks_ranks_the_planted_offset_first_as_ranks_does():
    """Item 1: rank 1 runs on cuda:1, its own GPU; the device index is where it ran, not a cause."""
    rank0, rank1 = PLANTED / "live.rank0.json", PLANTED / "live.rank1.json"
    plain = fusiondiff("diff", rank0, rank1)
    assert plain.returncode == 1, plain.stderr
    ranked = findings(plain.stdout)
    assert ranked[0].startswith("  1. [storage_offset, cause] Input 0 of nvFusion0 [forward]"), ranked
    assert "explains no measurable time" not in ranked[0]
    assert "device_index" not in plain.stdout and "gpu_or_versions" not in plain.stdout
    ranks = fusiondiff("ranks", rank0, rank1)
    assert "top finding: [storage_offset, cause] Input 0 of nvFusion0 [forward]" in ranks.stdout
    # the same diff: the verdict of rank 1 in `ranks` is the verdict line of the plain diff
    verdict = plain.stdout.split("kernel: ", 1)[1].splitlines()[0]
    assert f"rank 1: {verdict}" in ranks.stdout


LLAMA3 = DATA / "fidelity" / "llama3"


def diff_record(a: Path, b: Path) -> dict:
    import json

    result = fusiondiff("diff", a, b, "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def test_fusions_of_one_definition_pair_with_the_script_written_for_them():
    """Item 2: nvFusion2, 6 and 10 of the llama3 step share a definition and inputs (RMSNorm of three
    layers); each is paired with the replay of its own script, forward_nvFusion<N>.py."""
    record = diff_record(LLAMA3 / "live.json", LLAMA3 / "replay.json")
    pairs = record["diff"]["pairs"]
    assert len(pairs) == 26
    again = report_from_record(record)  # capture B is a delta against A in the record
    for pair in pairs:
        a, b = again.a.fusions[pair["index_a"]], again.b.fusions[pair["index_b"]]
        assert b.name == f"{a.trace}_{a.name}:fusion0", pair["label"]
    assert "same definition as" not in fusiondiff("diff", LLAMA3 / "live.json", LLAMA3 / "replay.json").stdout


def test_fusions_of_one_definition_paired_by_order_say_so(tmp_path):
    """Item 2: where nothing but the graph tells same-definition fusions apart, the label says the
    pairing is by definition. B is the recorded llama3 replay with every fusion renamed ``fusion<i>``
    (a SYNTHETIC change: as a replay of scripts that carry no fusion names would name them)."""
    import json

    data = json.loads((LLAMA3 / "replay.json").read_text())
    for i, f in enumerate(data["fusions"]):
        f["name"] = f"fusion{i}"
    renamed = tmp_path / "replay.json"
    renamed.write_text(json.dumps(data))
    labels = [p["label"] for p in diff_record(LLAMA3 / "live.json", renamed)["diff"]["pairs"]]
    shared = [label for label in labels if label.startswith(("nvFusion2 ", "nvFusion6 ", "nvFusion10 "))]
    assert len(shared) == 3 and all(", same definition as fusion" in label for label in shared), shared
    assert "nvFusion0 [forward] vs fusion13" in labels, "a definition no other fusion has is paired as before"


FSDP = DATA / "multigpu" / "thunder_fsdp"
LONG_NUMBER = re.compile(r"\b\d{5,}\.\d+ ?(?:ns|us|ms|s)\b")
"""A time with five digits or more before its decimal point: 1997893.88 us."""


def test_times_read_in_a_unit_chosen_for_them_and_integers_as_integers():
    """Item 6: communication totals of ``1997893.88 us``; ``56 x 11296.45 us`` meaning calls and a
    total; "median gap -560 ns" beside "explains 0.45 us" and "noise floor of 2209 ns"; an index
    range as ``[131, 128243]`` in one finding and ``[131.0, 128243.0]`` in the next."""
    show = fusiondiff("show", FSDP / "live.rank0.json").stdout
    assert "    name                                           calls  median us     total ms" in show
    assert "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL      56      146.6      1997.89" in show
    # a sentence wrapped to 100 columns (issue #41): read with its line breaks as spaces
    assert "fusions 597.1 us (53 record(s), median x calls, summed), communication 2.01 s" in " ".join(show.split())
    ranks = fusiondiff("ranks", FSDP).stdout
    table = ranks.split("communication kernels per rank", 1)[1]
    assert not re.search(r"\d x \d", table), "calls and totals are two columns, not a product"
    # wrapped to 100 columns: read with its line breaks as spaces
    assert "rank 0 calls rank 0 total ms rank 1 calls rank 1 total ms" in " ".join(table.split())
    assert "time in collectives differs by 83 %: rank 0 2.01 s, rank 1 0.33 s" in table
    llama = fusiondiff("diff", LLAMA3 / "live.json", LLAMA3 / "replay.json").stdout
    # piped, diff wraps its lines at 100 columns (issue #41): read with the line breaks as spaces
    flat = " ".join(llama.split())
    # every fusion SAME, its floor a per cent beside the medians in us (nvFusion3's 2.1 % gap is
    # within what moves a fusion between processes: tests/diff/test_recorded_fidelity.py)
    assert "SAME within noise (+-4.6 % to +-6.8 %)" in flat and " ns" not in llama
    assert "89.58 87.68 0.98x +-4.6 % SAME" in flat
    crash = fusiondiff("diff", DATA / "fidelity" / "crash" / "live.json", DATA / "fidelity" / "crash" / "replay.json")
    crash_flat = " ".join(crash.stdout.split())
    assert "A held [131, 128243] there" in crash_flat
    assert "values [131, 128243] in A, [-9, 9] in B" in crash_flat and "128243.0" not in crash.stdout
    for text in (show, ranks, llama, crash.stdout):
        assert not LONG_NUMBER.findall(text)


def test_a_verdict_on_one_fusion_reads_as_one_and_the_table_says_what_its_columns_mean():
    """Item 7: "1 fusion(s) timed, 1 undecided" for one fusion; the text table's ``B/A 0.72x`` beside
    the verdict's "1.40x faster" with no legend; a ``-`` in the floor column unexplained."""
    seed = DATA / "zoo" / "seed_method"
    undecided = fusiondiff("diff", seed / "live.json", seed / "replay.json").stdout
    # the verdict wrapped at 100 columns (issue #41): the whole paragraph, up to the host line
    verdict = " ".join(undecided.split("kernel: ", 1)[1].split("\nhost: ", 1)[0].split())
    assert verdict.startswith(
        "kernel time not measured: only 1 sample(s) on side A: too few to know its median (at least 3)"
    ), verdict
    assert "fusion(s) timed" not in verdict
    offset = fusiondiff("diff", DATA / "offset" / "live.json", DATA / "offset" / "replay_nvfuser.json").stdout
    assert offset.startswith("kernel: B is 1.40x faster: 27.07 us in A, 19.39 us in B")
    table = offset.split("\nfusions\n", 1)[1].split("\n\n", 1)[0]
    assert "0.72x" in table
    # the legend closes the table, wrapped at 100 columns (issue #41)
    legend = table.split("\n  B/A: ", 1)[1]
    assert all(len(line) <= 100 and line.startswith("      ") for line in legend.splitlines()[1:])
    assert " ".join(legend.split()) == (
        "B's median over A's (above 1: B is slower); floor: the smallest gap (log ratio) these data can show "
        "between two processes, SAME within it, - where nothing was measured"
    )


def test_long_lists_and_paths_of_the_recording_machine_are_shortened_in_the_text(tmp_path):
    """Item 8: the llama3 diff's header named 26 scripts on one 1,030-character line; its fusion table
    was a header and "... 26 more fusion(s) SAME, not listed"; the text diff showed the recording
    machine's scratch path of the script where Markdown and HTML shorten it."""
    llama = fusiondiff("diff", LLAMA3 / "live.json", LLAMA3 / "replay.json").stdout
    lines = llama.splitlines()
    # B's line, wrapped at 100 columns (issue #41): it and its indented continuation lines
    at = next(i for i, line in enumerate(lines) if line.startswith("B (replay): "))
    end = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith("    "))
    header = " ".join(" ".join(lines[at:end]).split())
    assert header.endswith(
        "(26 scripts: llama3/repros/backward_nvFusion13.py, llama3/repros/backward_nvFusion14.py, "
        "llama3/repros/backward_nvFusion15.py and 23 more)"
    ), header
    table = llama.split("\nfusions\n", 1)[1].split("\n\n", 1)[0].splitlines()
    rows = [line for line in table if line.startswith("  nvFusion")]
    assert len(rows) == 20 and "  ... 6 more fusion(s) SAME, not listed (the JSON record has all: --json)" in table
    # B's label keeps the path as given and shortens the script's: checked on a path as short as the
    # checkout's place cannot change (a long absolute path wraps at 100 columns), and on the record
    offset = fusiondiff("diff", "live.json", "replay_nvfuser.json", cwd=DATA / "offset").stdout
    assert "B (replay): replay_nvfuser.json (…/offset_nvfuser_repro.py)" in offset.splitlines(), offset
    assert "/tmp/rec/scratch" not in offset
    replay = DATA / "offset" / "replay_nvfuser.json"
    record = json.loads(fusiondiff("diff", "--format", "json", DATA / "offset" / "live.json", replay).stdout)
    assert record["diff"]["source_b"] == f"{replay} (…/offset_nvfuser_repro.py)"


def test_show_keeps_its_columns_when_a_kernel_name_is_long():
    """Item 8: an ATen kernel's C++ signature pushed its numbers out of the column: it gets a line of
    its own and its numbers go on the next, in the column."""
    text = fusiondiff("show", DATA / "timers" / "seed_train_step" / "kineto.json").stdout.splitlines()
    # 107 characters: piped, show wraps it at 100 (issue #41), the rest of the name on the next line
    aten = text.index("    void at::native::vectorized_elementwise_kernel<2, at::native::FillFunctor<long>,")
    assert text[aten + 1].strip() == "std::array<char*, 1ul> >"
    numbers, after = text[aten + 2], text[aten + 4]  # each row's launch on its own line below it
    assert after.startswith("    nvfuser_inner_outer_persistent_g1 ")
    assert numbers.index(" us  (iqr ") == after.index(" us  (iqr "), (numbers, after)


def test_a_round_trip_of_544_same_records_lists_a_few_and_keeps_every_row_in_a_file(tmp_path):
    """Item 8: ``roundtrip`` printed all 517 SAME rows of the gemma session. Each distinct fusion's
    replay recorded on the H200 is put where a finished round trip keeps it (``DIR/replays/``), so
    the command resumes with nothing to replay: no GPU, torch or nVFuser needed. A kept replay is
    trusted only when it carries its tie to this plan (issue #24), so each gets the tie a finished
    round trip gives it."""
    import gzip
    import json

    from fusiondiff.roundtrip.folder import plan_scripts
    from fusiondiff.roundtrip.plan import combine_ranks, distinct_fusions
    from fusiondiff.roundtrip.sources import load_live_sources

    live = tmp_path / "live.json"
    live.write_bytes(gzip.decompress((GEMMA / "live.json.gz").read_bytes()))
    sources = load_live_sources(live)
    capture = combine_ranks(sources)
    distinct = distinct_fusions(capture)
    planned = plan_scripts(capture, sources, distinct, tmp_path / "rt" / "scripts", {})
    tie_of = {d.stem: planned[d.index].tie for d in distinct}
    merged = json.loads(gzip.decompress((GEMMA / "replay.json.gz").read_bytes()))
    (tmp_path / "rt" / "replays").mkdir(parents=True)
    for f in merged["fusions"]:
        stem = f["name"].partition(":")[0]
        kept = {**merged, "fusions": [f], "source": tie_of[stem]}
        (tmp_path / "rt" / "replays" / f"{stem}.json").write_text(json.dumps(kept))
    result = fusiondiff("roundtrip", live, "-o", tmp_path / "rt")
    assert result.returncode == 0, result.stderr
    assert "0 to replay" in " ".join(result.stderr.split())  # a note may be wrapped to the width
    rows = [line for line in result.stdout.splitlines() if re.match(r"^\s+#\d+ ", line)]
    assert len(rows) == 20, result.stdout
    summary = tmp_path / "rt" / "summary.txt"
    left = f"... 524 more fusion(s) SAME, not listed ({summary} has every row; --top N for the first N)"
    assert " ".join(left.split()) in " ".join(result.stdout.split())  # wrapped to 100 columns (issue #41)
    every = [line for line in summary.read_text().splitlines() if re.match(r"^\s+#\d+ ", line)]
    assert len(every) == 544 and rows == every[:20]
    assert "verdicts: SAME 544" in result.stdout


def test_an_idle_clock_reading_is_labelled_idle_and_not_a_difference(tmp_path):
    """Item 10: the gemma diff warned "SM clock while timing: 1980 MHz in A, 345 MHz in B" with every
    fusion SAME: 345 MHz is the H200's idle clock, read before and after samples of a few us."""
    import gzip
    import json

    live, replay = tmp_path / "live.json", tmp_path / "replay.json"
    for path in (live, replay):
        path.write_bytes(gzip.decompress((GEMMA / f"{path.name}.gz").read_bytes()))
    text = fusiondiff("diff", live, replay)
    assert text.returncode == 0, text.stderr
    assert "SM clock" not in text.stdout and "measurement" not in text.stdout, text.stdout
    md = fusiondiff("report", live, replay, "--format", "md").stdout
    assert "| SM clock at start | 345 MHz (idle) | 345 MHz (idle) |  |" in md
    assert "| SM clock while timing | 1980 MHz (idle readings left out: 345, " in md
    assert "| 1980 MHz (idle readings left out: 345 MHz) |  |" in md
    # SYNTHETIC change of the recorded replay: its one reading at 1980 MHz taken out, so that every
    # reading of B is idle; then B's clock is not known, said in a note, and still not a difference
    data = json.loads(replay.read_text())
    for f in data["fusions"]:
        f["sm_clock_mhz"] = [c for c in f["sm_clock_mhz"] if c != 1980]
    idle = tmp_path / "idle_replay.json"
    idle.write_text(json.dumps(data))
    notes = fusiondiff("diff", live, idle)
    assert notes.returncode == 0 and "measurement" not in notes.stdout
    assert (  # wrapped at 100 columns (issue #41): read with the line breaks as spaces
        "B's SM clock readings (345 MHz) are the GPU's idle clock, read while no kernel ran: the clock B's "
        "samples ran at is not known, so the clocks are not compared"
    ) in " ".join(notes.stdout.split())
