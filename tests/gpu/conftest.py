"""Fixtures for the GPU tests: the seed model is compiled once per session (about 30 s)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def seed_model():
    """``(model, compiled, idx)`` of the seed case, compiled by one forward call."""
    pytest.importorskip("thunder")
    pytest.importorskip("litgpt")
    import torch

    from fusiondiff.front.seed import build_seed_model

    model, compiled, idx = build_seed_model()
    compiled(idx)
    torch.cuda.synchronize()
    return model, compiled, idx
