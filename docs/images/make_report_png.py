"""Make ``docs/images/report.png``, the README's picture of the HTML report, from a recorded pair:
``fusiondiff report`` of ``tests/data/h100/offset_thunderfx_4096`` (the live capture against the
replay of nvFuser's own repro script), laid out by headless Chromium in a 1280x900 window. Run it
again whenever the report's first screen changes:

    python3 docs/images/make_report_png.py

The picture and the page it is taken from are both made here, so the README cannot show a layout
the code no longer makes without this script having been left unrun (its test says whether the
page it would take has the three answers first)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAIR = ("tests/data/h100/offset_thunderfx_4096/live.json", "tests/data/h100/offset_thunderfx_4096/replay_nvfuser.json")
IMAGE = ROOT / "docs" / "images" / "report.png"
SIZE = (1280, 900)


def page(folder: Path) -> Path:
    """The HTML report of :data:`PAIR`, written into ``folder``."""
    out = folder / "report.html"
    subprocess.run(
        [sys.executable, "-m", "fusiondiff", "report", *PAIR, "-o", str(out)], cwd=ROOT, check=True, timeout=300
    )
    return out


def main() -> int:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("make_report_png: headless Chromium is needed (apt-get install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        html = page(Path(scratch))
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                f"--user-data-dir={scratch}/profile",
                f"--window-size={SIZE[0]},{SIZE[1]}",
                f"--screenshot={IMAGE}",
                html.as_uri(),
            ],  # fmt: skip
            check=True,
            capture_output=True,
            timeout=120,
        )
    print(f"wrote {IMAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
