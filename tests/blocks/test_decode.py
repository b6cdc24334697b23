"""Reading a probe buffer back, and refusing what would give a wrong timeline.

The H200 runs of the current record layout kept their decoded arrays, not their raw buffers
(tests/data/blocks/README.md), so these buffers are SYNTHETIC: laid out as the probe writes them
now, filled with the per-CTA values the H200 recorded with the first layout (start, end, SM of
each of 4096 CTAs of the seed RMSNorm).
"""

from __future__ import annotations

import numpy as np
import pytest

from fusiondiff.replay.timeline_decode import Refused, decode_buffer, kernel_arrays
from fusiondiff.replay.timeline_probe import CTA_WORDS, HEADER_WORDS, Buffer, record_words
from tests.blocks.conftest import recorded_buffer

WARPS = 4


def recorded_ctas() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    records = recorded_buffer("rmsnorm")[8:].reshape(-1, 8)
    return records[:, 0].copy(), records[:, 1].copy(), (records[:, 4] & 0xFFFFFFFF).copy()


def synthetic_buffer(start: np.ndarray, end: np.ndarray, sm: np.ndarray, warps: int = WARPS) -> np.ndarray:
    """SYNTHETIC: a buffer in the current layout holding the recorded CTAs (each warp ending at the CTA's end)."""
    n = start.size
    words = np.zeros(HEADER_WORDS + n * record_words(warps), dtype=np.int64)
    words[1], words[3] = n, warps * 32
    records = words[HEADER_WORDS:].reshape(n, record_words(warps))
    records[:, 0], records[:, 1], records[:, 3] = start, sm, sm + 1
    records[:, CTA_WORDS:] = end[:, None]
    return words


def test_a_buffer_decodes_into_the_ctas_it_holds():
    start, end, sm = recorded_ctas()
    decoded = decode_buffer(synthetic_buffer(start, end, sm), Buffer(8, start.size, WARPS))
    assert np.array_equal(decoded.start_ns, start) and np.array_equal(decoded.end_ns, end)
    assert np.array_equal(decoded.sm, sm) and np.array_equal(decoded.sm_end, sm) and decoded.cluster is None


def test_the_end_of_a_cta_is_its_last_warp_end():
    start, end, sm = recorded_ctas()
    words = synthetic_buffer(start, end, sm)
    records = words[HEADER_WORDS:].reshape(start.size, record_words(WARPS))
    records[7, CTA_WORDS + 2] = end[7] + 999
    assert decode_buffer(words, Buffer(8, start.size, WARPS)).end_ns[7] == end[7] + 999


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        (lambda w, r: r.__setitem__((5, 0), 0), "missing_ctas"),
        (lambda w, r: r.__setitem__((9, CTA_WORDS + 3), 0), "early_exit"),
        (lambda w, r: w.__setitem__(0, 3), "overflow"),
        (lambda w, r: w.__setitem__(2, 1), "overflow"),
        (lambda w, r: w.__setitem__(1, 4095), "launch_differs"),
        (lambda w, r: w.__setitem__(1, 0), "not_instrumented"),
        (lambda w, r: w.__setitem__(3, 256), "launch_differs"),
    ],
)
def test_a_buffer_that_would_give_a_wrong_timeline_is_refused(damage, code):
    start, end, sm = recorded_ctas()
    words = synthetic_buffer(start, end, sm)
    damage(words, words[HEADER_WORDS:].reshape(start.size, record_words(WARPS)))
    with pytest.raises(Refused) as caught:
        decode_buffer(words, Buffer(8, start.size, WARPS))
    assert caught.value.refusal.code == code
    assert "\n" not in caught.value.refusal.detail


def test_a_block_smaller_than_its_warp_slots_uses_only_its_warps():
    start, end, sm = recorded_ctas()
    words = synthetic_buffer(start, end, sm)
    words[3] = 64  # two warps ran; the slots of warps 2 and 3 stay empty
    records = words[HEADER_WORDS:].reshape(start.size, record_words(WARPS))
    records[:, CTA_WORDS + 2 :] = 0
    assert np.array_equal(decode_buffer(words, Buffer(8, start.size, WARPS)).end_ns, end)


def test_stored_arrays_start_at_each_runs_first_cta_and_are_kept_small():
    start, end, sm = recorded_ctas()
    decoded = decode_buffer(synthetic_buffer(start, end, sm), Buffer(8, start.size, WARPS))
    arrays = kernel_arrays(2, [decoded, decoded])
    assert sorted(arrays) == ["k2.end_ns", "k2.sm", "k2.start_ns"]
    assert arrays["k2.start_ns"].shape == (2, 4096) and int(arrays["k2.start_ns"].min()) == 0
    assert arrays["k2.start_ns"].dtype == np.int32 and arrays["k2.sm"].dtype == np.int16
    assert int(arrays["k2.end_ns"][0].max()) == int(end.max() - start.min())
