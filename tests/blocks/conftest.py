"""Recorded block-level data (tests/data/blocks, recorded on the H200: see its README)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

BLOCKS = Path(__file__).resolve().parent.parent / "data" / "blocks"
KERNEL = "nvfuser_inner_persistent_f0_c1_r0_g0"


def recorded_source(case: str) -> str:
    """A full CUDA source nvFuser gave on the H200 (``probe/sources``)."""
    return gzip.decompress((BLOCKS / "probe" / "sources" / f"{case}.session.cu.gz").read_bytes()).decode()


def recorded_buffer(case: str, kernel: str = KERNEL) -> np.ndarray:
    """A probe buffer as the H200 wrote it (the probe's first layout: 8 words per CTA)."""
    raw = gzip.decompress((BLOCKS / "probe" / "buffers" / f"{case}.{kernel}.i64.gz").read_bytes())
    return np.frombuffer(raw, dtype="<i8")


@pytest.fixture
def blocks_dir() -> Path:
    return BLOCKS
