"""One line per test of a batch's JUnit XML (``run_batch.sh`` writes it): outcome, seconds, test id,
then the counts and the batch's whole time.

    python3 tests/gpu/summarize.py OUT/seed.xml
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET


def outcome(case: ET.Element) -> str:
    """PASSED, FAILED, ERROR or SKIPPED, from the case's child elements."""
    for tag, word in (("failure", "FAILED"), ("error", "ERROR"), ("skipped", "SKIPPED")):
        if case.find(tag) is not None:
            return word
    return "PASSED"


def summarize(path: str) -> tuple[list[str], dict[str, int]]:
    """The lines and the count of each outcome."""
    lines, counts = [], {"PASSED": 0, "FAILED": 0, "ERROR": 0, "SKIPPED": 0}
    total = 0.0
    for case in ET.parse(path).getroot().iter("testcase"):
        word, seconds = outcome(case), float(case.get("time", 0.0))
        counts[word] += 1
        total += seconds
        ident = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
        lines.append(f"{word:<8} {seconds:7.1f} s  {ident}")
    lines.append(", ".join(f"{n} {w.lower()}" for w, n in counts.items() if n) + f" in {total:.0f} s of tests")
    return lines, counts


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: summarize.py BATCH.xml", file=sys.stderr)
        return 2
    try:
        lines, counts = summarize(argv[0])
    except (OSError, ET.ParseError) as exc:
        print(f"summarize: {argv[0]}: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 1 if counts["FAILED"] or counts["ERROR"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
