"""The GPU suite's batches, checked on the CPU: every GPU test file runs in exactly one batch, and a
batch's JUnit XML is summarised one line per test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.gpu import batches, summarize

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


def test_every_gpu_test_file_is_in_exactly_one_batch():
    listed = [f for files in batches.BATCHES.values() for f in files]
    on_disk = sorted(str(p.relative_to(ROOT)) for p in HERE.glob("test_*.py") if p.name != "test_batches.py")
    assert sorted(listed) == on_disk, "a GPU test file is in no batch, or in two"
    for path in on_disk:  # every file in a batch is a GPU test file
        assert "pytest.mark.gpu" in (ROOT / path).read_text(), path


def test_the_batch_runner_lists_a_batch_and_refuses_an_unknown_one():
    listed = subprocess.run([sys.executable, str(HERE / "batches.py"), "zoo"], capture_output=True, text=True)
    assert (listed.returncode, listed.stdout.split()) == (0, ["tests/gpu/test_zoo.py"])
    unknown = subprocess.run([sys.executable, str(HERE / "batches.py"), "all"], capture_output=True, text=True)
    assert unknown.returncode == 2 and "usage" in unknown.stderr and not unknown.stdout


def test_a_batchs_xml_gives_a_line_per_test_and_fails_on_a_failure(tmp_path):
    xml = tmp_path / "b.xml"
    xml.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.gpu.test_a" name="test_one" time="12.5"/>'
        '<testcase classname="tests.gpu.test_a" name="test_two" time="3.0"><failure message="x"/></testcase>'
        '<testcase classname="tests.gpu.test_b" name="test_three" time="0.1"><skipped message="y"/></testcase>'
        "</testsuite></testsuites>"
    )
    lines, counts = summarize.summarize(str(xml))
    assert lines[0].split() == ["PASSED", "12.5", "s", "tests/gpu/test_a.py::test_one"]
    assert lines[1].startswith("FAILED") and lines[2].startswith("SKIPPED")
    assert lines[-1] == "1 passed, 1 failed, 1 skipped in 16 s of tests"
    assert counts["FAILED"] == 1 and summarize.main([str(xml)]) == 1
    assert summarize.main([str(tmp_path / "missing.xml")]) == 2
