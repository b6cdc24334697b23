"""How a kernel's blocks fill the SMs: resident blocks per SM and waves, derived, not measured.

Derived from the recorded launch (grid, block, registers per thread, shared memory) and the GPU's
per-SM limits, the way CUDA's occupancy calculator does it: the number of blocks an SM holds at
once is the smallest of what its threads, registers, shared memory and block slots allow. The
limits are those of the compute capability recorded in the capture's environment; a capability
not in :data:`SM_LIMITS` is treated as 9.0 (Hopper) and said so. Nothing here was measured: the
per-SM view built from it (:mod:`fusiondiff.report.formats.perfetto`) is labelled as derived.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fusiondiff.records.environment import Environment
from fusiondiff.records.model import LaunchConfig


@dataclass(frozen=True)
class SmLimits:
    """Per-SM resources of one compute capability (CUDA programming guide, feature table)."""

    max_threads: int
    max_blocks: int
    registers: int
    """32-bit registers in the SM's register file."""
    shared_mem_bytes: int
    """Shared memory an SM can give to blocks (the configurable maximum)."""
    reserved_smem_bytes: int = 1024
    """Shared memory the system reserves per resident block (since compute capability 8.0)."""
    register_unit: int = 256
    """Registers are given to a warp in units of this many."""


SM_LIMITS: dict[str, SmLimits] = {
    "7.0": SmLimits(2048, 32, 65536, 98304, 0),
    "7.5": SmLimits(1024, 16, 65536, 65536, 0),
    "8.0": SmLimits(2048, 32, 65536, 167936),
    "8.6": SmLimits(1536, 16, 65536, 102400),
    "8.7": SmLimits(1536, 16, 65536, 167936),
    "8.9": SmLimits(1536, 24, 65536, 102400),
    "9.0": SmLimits(2048, 32, 65536, 233472),
    "10.0": SmLimits(2048, 32, 65536, 233472),
    "12.0": SmLimits(1536, 32, 65536, 102400),
}
DEFAULT_CAPABILITY = "9.0"


@dataclass(frozen=True)
class Occupancy:
    """Blocks per SM and waves of one launch on one GPU. Derived from limits, not measured."""

    blocks: int
    """Blocks in the grid."""
    threads_per_block: int
    blocks_per_sm: int
    """Blocks an SM holds at once (0: one block does not fit)."""
    limited_by: str
    """``threads``, ``registers``, ``shared memory`` or ``block slots``."""
    sm_count: int
    capability: str
    """Compute capability whose limits were used."""
    assumed_capability: bool
    """True when the recorded capability was unknown and :data:`DEFAULT_CAPABILITY` was used."""

    @property
    def concurrent_blocks(self) -> int:
        return self.blocks_per_sm * self.sm_count

    @property
    def waves(self) -> float:
        """Blocks over blocks resident at once (7.76: seven full waves and a tail of 76 %)."""
        return self.blocks / self.concurrent_blocks if self.concurrent_blocks else math.inf

    @property
    def full_waves(self) -> int:
        return self.blocks // self.concurrent_blocks if self.concurrent_blocks else 0

    @property
    def tail_blocks(self) -> int:
        """Blocks of the last, partial wave (0 when the grid fills whole waves)."""
        return self.blocks % self.concurrent_blocks if self.concurrent_blocks else self.blocks

    def tail_blocks_on(self, sm: int) -> int:
        """Blocks of the tail wave on SM ``sm``, assuming blocks are dealt to SMs in turn."""
        per_sm, extra = divmod(self.tail_blocks, self.sm_count)
        return per_sm + (1 if sm < extra else 0)


def occupancy(launch: LaunchConfig, environment: Environment) -> Occupancy | None:
    """The occupancy of ``launch`` on the recorded GPU; ``None`` when the grid, block or SM count
    was not recorded, the block holds no thread or the grid a negative count (no launch does), or
    the block fits none of the SM's limits (an assumed capability's)."""
    if launch.grid is None or launch.block is None or not environment.sm_count:
        return None
    if math.prod(launch.block) < 1 or math.prod(launch.grid) < 0:
        return None
    capability = environment.compute_capability or ""
    limits = SM_LIMITS.get(capability)
    assumed = limits is None
    if limits is None:
        capability, limits = DEFAULT_CAPABILITY, SM_LIMITS[DEFAULT_CAPABILITY]
    threads = math.prod(launch.block)
    warps = math.ceil(threads / 32)
    candidates = {
        "block slots": limits.max_blocks,
        "threads": limits.max_threads // max(threads, 1),
    }
    if launch.registers_per_thread:
        per_warp = math.ceil(launch.registers_per_thread * 32 / limits.register_unit) * limits.register_unit
        candidates["registers"] = limits.registers // (per_warp * warps)
    if launch.shared_mem_bytes:
        candidates["shared memory"] = limits.shared_mem_bytes // (launch.shared_mem_bytes + limits.reserved_smem_bytes)
    limited_by = min(candidates, key=lambda k: candidates[k])
    if candidates[limited_by] < 1:  # the block does not fit the SM these limits describe: no waves to derive
        return None
    return Occupancy(
        blocks=math.prod(launch.grid),
        threads_per_block=threads,
        blocks_per_sm=candidates[limited_by],
        limited_by=limited_by,
        sm_count=environment.sm_count,
        capability=capability,
        assumed_capability=assumed,
    )
