"""The probe added to a kernel nvFuser generated: a text transform of its CUDA source.

nvFuser's full source for a fusion (``fec.get_cuda_kernel(inputs, intrinsic_code=True)``: the
runtime headers and every kernel of the fusion) goes in; the same source comes out with, for each
kernel asked for, one object constructed at the first line of the kernel body. Its constructor
(thread 0 of the CTA) stores the start; its destructor (the first lane of each warp) records the
end. A destructor runs on every ``return``, so the early returns of warp-specialized kernels end
their warps too; a warp that leaves without it (an ``exit`` in inline assembly) is caught by the
per-CTA count of warps that ended, which the host checks against the block size.

Each CTA owns one fixed-size record of :func:`record_words` 64-bit words at
``HEADER_WORDS + linear_block_id * record_words(warps)``; the buffer's address, its capacity in
CTAs and the warps per CTA (all known from the launch before it runs) are template arguments
(literals), so the probe holds no registers across the kernel. A CTA whose linear id is at or
beyond the capacity, or a warp beyond the record's warp slots, writes nothing but a count in the
header: an overflow is counted, never written past the buffer. Every time is a full 64-bit
``%globaltimer`` (ns): nothing wraps and no field spills into another (FlashInfer's profiler
packs block ids above 4095 into the SM bits and keeps a 32-bit timer that wraps after 4.3 s).

Pure text: no nvFuser or torch here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from fusiondiff.records.errors import FusionDiffError

HEADER_WORDS = 8
"""64-bit words before the first CTA record: ``[0]`` CTAs beyond the capacity (counted, not
written), ``[1]`` the grid's CTA count as CTA 0 saw it, ``[2]`` warps beyond the record's warp
slots (counted, not written), ``[3]`` the block's thread count as CTA 0 saw it, the rest zero."""
CTA_WORDS = 4
"""64-bit words of a record before its warp slots; see :data:`FIELDS`."""
FIELDS = ("start_ns", "sm_and_rank", "cluster", "end_sm_plus_one")
"""The first words of a CTA record: ``%globaltimer`` when thread 0 started; ``%smid`` then in the
low 32 bits with ``%cluster_ctarank`` above (0 outside clusters); the linear ``%clusterid``
(written only for kernels that use clusters: elsewhere a CTA is its own cluster of one); and
``%smid`` + 1 when thread 0 left (it differs from the start where the CTA moved, as after a
preemption). Then one word per warp: ``%globaltimer`` when that warp left (0: it never ran the
probe's end). Plain stores to words of its own: no atomics, so no two warps contend for one
address (16 warps of a CTA ``atomicMax``-ing one word cost a third of a short kernel's time)."""


def record_words(warps: int) -> int:
    """64-bit words of one CTA record for blocks of ``warps`` warps."""
    return CTA_WORDS + warps


_NAMESPACE = "fusiondiff_block_probe"
_PROBE = r"""
// fusiondiff: block-level timeline probe, one record per CTA (4 + warps x 64-bit words).
namespace fusiondiff_block_probe {
template <unsigned long long kBuffer, unsigned long long kCapacity, unsigned long long kWarps, bool kCluster>
struct Probe {
  __device__ __forceinline__ static unsigned long long* buffer() {
    return reinterpret_cast<unsigned long long*>(kBuffer);
  }
  __device__ __forceinline__ static unsigned long long* record() {
    const unsigned long long slot = (unsigned long long)blockIdx.x +
        (unsigned long long)gridDim.x *
            ((unsigned long long)blockIdx.y + (unsigned long long)gridDim.y * (unsigned long long)blockIdx.z);
    return slot < kCapacity ? buffer() + 8ULL + slot * (4ULL + kWarps) : nullptr;
  }
  __device__ __forceinline__ Probe() {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
      unsigned long long ns;
      unsigned int sm, rank = 0;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      unsigned long long* r = record();
      if (r == nullptr) {
        atomicAdd(buffer(), 1ULL);
        return;
      }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      if (kCluster) {
        unsigned int x, y, z, nx, ny;
        asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
        asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(x));
        asm volatile("mov.u32 %0, %%clusterid.y;" : "=r"(y));
        asm volatile("mov.u32 %0, %%clusterid.z;" : "=r"(z));
        asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(nx));
        asm volatile("mov.u32 %0, %%nclusterid.y;" : "=r"(ny));
        r[2] = (unsigned long long)x + (unsigned long long)nx * ((unsigned long long)y + (unsigned long long)ny * z);
      }
#endif
      r[0] = ns;
      r[1] = (unsigned long long)sm | ((unsigned long long)rank << 32);
      if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0) {
        buffer()[1] = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
        buffer()[3] = (unsigned long long)blockDim.x * blockDim.y * blockDim.z;
      }
    }
  }
  __device__ __forceinline__ ~Probe() {
    const unsigned int thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    if ((thread & 31u) == 0u) {
      unsigned long long* r = record();
      if (r == nullptr) {
        return;
      }
      unsigned long long ns;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
      const unsigned int warp = thread >> 5;
      if (warp < kWarps) {
        r[4 + warp] = ns;
      } else {
        atomicAdd(buffer() + 2, 1ULL);
      }
      if (thread == 0u) {
        unsigned int sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        r[3] = (unsigned long long)sm + 1ULL;
      }
    }
  }
};
}  // namespace fusiondiff_block_probe
"""

_KERNEL = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)\s*)?(?P<name>\w+)\s*\(")
_EXIT = re.compile(r"""asm\s*(?:volatile\s*)?\(\s*"[^"]*\b(?:exit|trap)\s*;""")


class InstrumentError(FusionDiffError):
    """The source cannot carry the probe correctly (the message names the kernel and why)."""


@dataclass(frozen=True)
class Buffer:
    """Where one kernel's probe writes: a device address, how many CTA records it holds, and the
    warp slots of each."""

    address: int
    capacity: int
    """CTA records: the grid's CTA count, known before launch."""
    warps: int
    """Warps per CTA: the block's threads over 32, rounded up."""
    cluster: bool = False
    """Read the cluster registers too (the kernel uses clusters)."""

    @property
    def words(self) -> int:
        """64-bit words the buffer needs: the header and ``capacity`` records."""
        return HEADER_WORDS + self.capacity * record_words(self.warps)


def uses_clusters(kernel_source: str) -> bool:
    """Whether a kernel's own source uses thread-block clusters (nvFuser's cluster helpers)."""
    return "cluster" in kernel_source.lower()


def kernel_names(source: str) -> list[str]:
    """The ``__global__`` kernels defined in ``source``, in order."""
    return [m["name"] for m in _KERNEL.finditer(source)]


def instrument(source: str, buffers: Mapping[str, Buffer]) -> str:
    """``source`` with the probe in each kernel named in ``buffers``; the others unchanged.

    Raises :class:`InstrumentError` when a kernel named is not defined in the source, its body
    cannot be found, it leaves through inline ``exit``/``trap`` (past any destructor), or the
    source already carries a probe."""
    if _NAMESPACE in source:
        raise InstrumentError("the source already carries fusiondiff's block probe")
    kernels = {m["name"]: m for m in _KERNEL.finditer(source)}
    missing = [name for name in buffers if name not in kernels]
    if missing:
        raise InstrumentError(f"{missing[0]}: not defined in the source nvFuser gave ({len(kernels)} kernel(s) there)")
    edits: list[tuple[int, str]] = []
    for name, buffer in buffers.items():
        if not 0 < buffer.address < 2**64 or buffer.address % 8:
            raise InstrumentError(f"{name}: buffer address {buffer.address:#x} is not an 8-byte aligned device address")
        if not 0 < buffer.capacity < 2**40:
            raise InstrumentError(f"{name}: a capacity of {buffer.capacity} CTAs is not a grid")
        if not 0 < buffer.warps <= 32:
            raise InstrumentError(f"{name}: {buffer.warps} warps per CTA is not a CUDA block")
        match = kernels[name]
        body = _body_start(source, match.end() - 1, name)
        end = _body_end(source, body, name)
        if _EXIT.search(source, body, end):
            raise InstrumentError(f"{name}: leaves through inline exit or trap, past the probe's end record")
        cluster = "true" if buffer.cluster else "false"
        probe = (
            f"\n  {_NAMESPACE}::Probe<{buffer.address:#x}ULL, {buffer.capacity}ULL, {buffer.warps}ULL, {cluster}>"
            " fusiondiff_block_probe_;\n"
        )
        edits.append((body + 1, probe))
    first = min(m.start() for m in kernels.values())
    edits.append((first, _PROBE + "\n"))
    out = source
    for position, text in sorted(edits, reverse=True):
        out = out[:position] + text + out[position:]
    return out


def _body_start(source: str, open_paren: int, name: str) -> int:
    """The position of the ``{`` opening the body of the kernel whose parameter list opens at
    ``open_paren``."""
    depth = 0
    for i in range(open_paren, len(source)):
        char = source[i]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                rest = source[i + 1 :]
                stripped = rest.lstrip()
                if stripped.startswith("{"):
                    return i + 1 + (len(rest) - len(stripped))
                break
    raise InstrumentError(f"{name}: its body could not be found after its parameter list")


def _body_end(source: str, open_brace: int, name: str) -> int:
    """The position after the ``}`` closing the body opened at ``open_brace`` (braces in strings
    and comments of generated code do not occur; a missing end is refused)."""
    depth = 0
    for i in range(open_brace, len(source)):
        if source[i] == "{":
            depth += 1
        elif source[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    raise InstrumentError(f"{name}: its body does not end")
