"""nvFuser's kernel-name grammar, the one place it is written.

nvFuser names the kernels it generates ``nvfuser_<scheduler>_f<fusion>_c<concretization>_r<runtime>_g<group>``;
the ``f``, ``c`` and ``r`` counters count what the process compiled before, so two runs of one
fusion name its kernels alike only once they are dropped. Recording normalizes every launched
kernel's name with :func:`parse_kernel_name`; the differ and the reports read the counters back
(:func:`kernel_history`) or drop them from a text (:func:`normalize_kernel_names`).
"""

from __future__ import annotations

import re

_KERNEL_NAME = re.compile(r"nvfuser_(?P<scheduler>[a-z_]+?)_f(?P<f>\d+)_c(?P<c>\d+)_r(?P<r>\d+)_g(?P<g>\d+)")
"""nvFuser's kernel-name grammar, the one place it is written: ``nvfuser_<scheduler>_f<fusion>_c<concretization>_r<runtime>_g<group>``."""
_KERNEL_NAME_IN_TEXT = re.compile(rf"\b{_KERNEL_NAME.pattern}\b")


def parse_kernel_name(name: str) -> tuple[str, str | None, int | None]:
    """Split a launched kernel's name into (normalized name, scheduler, group id).

    nvFuser names kernels ``nvfuser_<scheduler>_f<fusion>_c<concretization>_r<runtime>_g<group>``;
    ``f``, ``c`` and ``r`` count what this process compiled before, so they are dropped. Kineto
    reports the demangled signature (``nvf::nvfuser_...(nvf::Tensor<...>)``): the arguments go too.
    Other kernels (cuBLAS, ATen) keep their name without arguments.
    """
    short = name.split("(", 1)[0].strip()
    match = _KERNEL_NAME.match(short.removeprefix("nvf::"))
    if not match:
        return short, None, None
    scheduler = match["scheduler"]
    group = int(match["g"])
    return f"nvfuser_{scheduler}_g{group}", scheduler, group


def kernel_history(name: str) -> tuple[int, int, int] | None:
    """The ``(fusion, concretization, runtime)`` counters in an nvFuser kernel name found in
    ``name`` (a raw name or a demangled signature), or None for another kernel."""
    match = _KERNEL_NAME_IN_TEXT.search(name)
    return None if match is None else (int(match["f"]), int(match["c"]), int(match["r"]))


def normalize_kernel_names(text: str) -> str:
    """``text`` (CUDA source, a log) with every nvFuser kernel name's f/c/r counters dropped, as
    :func:`parse_kernel_name` normalizes one name."""
    return _KERNEL_NAME_IN_TEXT.sub(lambda m: f"nvfuser_{m['scheduler']}_g{m['g']}", text)
