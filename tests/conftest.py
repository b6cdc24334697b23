"""Shared fixtures. Tests marked ``gpu`` skip cleanly where there is no CUDA device or nvFuser."""

from __future__ import annotations

import importlib.util
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def _gpu_unavailable_reason() -> str | None:
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed"
    import torch

    if not torch.cuda.is_available():
        return "no CUDA device"
    if importlib.util.find_spec("nvfuser_direct") is None:
        return "nvFuser (nvfuser_direct) is not installed"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # the marker, not the keyword: every test under tests/gpu has the keyword "gpu" (its package's
    # name), the suite's batch checks there included, which run on the CPU
    if not any(item.get_closest_marker("gpu") for item in items):
        return
    reason = _gpu_unavailable_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"gpu test: {reason}")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _no_terminal_width_from_the_shell() -> Iterator[None]:
    """The suite runs as CI runs it: no ``COLUMNS`` from the shell that started pytest, so a command's
    text is laid out for a pipe's 100 columns. A test of the width sets ``COLUMNS`` itself."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("COLUMNS", raising=False)
        yield


@pytest.fixture(scope="session", autouse=True)
def _ctrl_c_reaches_the_children() -> Iterator[None]:
    """The commands the tests start and then interrupt get Python's own Ctrl-C handling, as from a
    terminal: a shell that starts pytest in the background (``&`` without job control) starts it
    with SIGINT ignored, and the children would inherit that and never see the Ctrl-C the tests
    send. A Python handler here is reset to the default in each child that is started."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.fixture
def data_dir() -> Path:
    return DATA
