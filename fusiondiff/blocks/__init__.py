"""The block level: which SM ran each CTA of a kernel, and when, measured on both sides.

A kernel nvFuser generated is compiled a second time with a small probe added (:mod:`.instrument`,
a text transform of nvFuser's own CUDA source): thread 0 of each CTA stores ``%globaltimer``,
``%clock64`` and ``%smid`` when the CTA starts, and the first lane of each warp ``atomicMax``-es
the end time when it leaves, into one fixed-size record per CTA indexed by the linear block id.
:mod:`.recording` runs that copy after the timing protocol (needs torch and nvFuser);
:mod:`.storage` keeps the arrays in a safetensors file beside the capture, referenced from the
capture's JSON with a checksum; :mod:`.stats` turns them into the block-level statistics (SMs
used, waves, tail, start skew, CTA durations), :mod:`.findings` into findings with typed
evidence. The views are in :mod:`fusiondiff.report` (``block_*`` modules).

Nothing here but :mod:`.recording` imports torch or nvFuser.
"""
