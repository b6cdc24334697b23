"""Who holds CUPTI in this process, so a timer is never started where it would kill the process or
read nothing.

CUPTI takes one subscriber per process, and neither holder lets go (seen on the H200, see the stack
notes):

- after torch.profiler (Kineto) ran, nvFuser's ``PythonProfiler`` gets
  ``CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED`` from ``cuptiSubscribe`` and nvFuser calls
  ``exit()``: the whole process dies, with no Python exception to catch;
- after ``PythonProfiler`` ran, torch.profiler silently delivers no kernel events (the Kineto
  source's canary kernel catches that one).

So before a source starts it calls :func:`claim`, which refuses with a one-line
:class:`ProfilerError` where the other subscriber is known to hold CUPTI. What is known:

1. the sources fusiondiff started in this process (a ledger);
2. a torch profiler running now (``torch.autograd.profiler._is_profiler_enabled``, and
   ``torch._C._autograd._profiler_enabled()``);
3. a torch profiler that started while fusiondiff watched (:func:`watch` wraps torch's
   ``_run_on_profiler_start`` hook, which every ``torch.profiler.profile`` start calls);
4. before ``PythonProfiler`` only (where a wrong guess is fatal): whether CUPTI already has a
   subscriber, asked of the libcupti this process has loaded (:func:`cupti_has_subscriber`:
   subscribe, and unsubscribe at once when that succeeded).

A torch profiler that ran and stopped before fusiondiff was imported is seen only by 4. The probe
cannot tell who holds CUPTI, so after a ``PythonProfiler`` run outside fusiondiff the nvFuser timer
is refused too (conservative: the alternative is a process that exits); after the Kineto canary went
missing the holder is :data:`OTHER` and both timers are refused.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from typing import Any

from fusiondiff.records.errors import ProfilerError
from fusiondiff.records.model import KINETO, NVFUSER, SEED_METHOD, TimerName

TORCH_PROFILER = "torch.profiler"
NVFUSER_PROFILER = "nvFuser PythonProfiler"
OTHER = "another CUPTI subscriber"
"""The holder when torch.profiler found CUPTI taken by someone fusiondiff did not start (the user's
own PythonProfiler, most often): neither timer can run after it."""

SUBSCRIBER_OF_SOURCE: dict[TimerName, str] = {
    KINETO: TORCH_PROFILER,
    SEED_METHOD: TORCH_PROFILER,
    NVFUSER: NVFUSER_PROFILER,
}
"""The CUPTI subscriber each kernel-record source starts."""


def starts_torch_profiler(source: TimerName) -> bool:
    """Whether ``source`` (a kernel-record source's name) times through torch.profiler."""
    return SUBSCRIBER_OF_SOURCE.get(source) == TORCH_PROFILER


_lock = threading.Lock()
_holder: str | None = None
"""The subscriber known to hold CUPTI in this process (fusiondiff's sources, or a watched torch profiler)."""
_watching = False
_last_probe: str | None = None
"""What ``cuptiSubscribe`` answered the last probe (``CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED``)."""
MULTIPLE_SUBSCRIBERS = 39
"""``CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED`` (read from libcupti 13's result strings)."""

Probe = Callable[[], bool | None]
"""Whether CUPTI has a subscriber now (``None``: cannot tell)."""


def holder() -> str | None:
    """The CUPTI subscriber known to hold it in this process, or ``None``."""
    return _holder


def note(subscriber: str) -> None:
    """Record that ``subscriber`` took CUPTI (the first one keeps it for the life of the process)."""
    global _holder
    with _lock:
        if _holder is None:
            _holder = subscriber


def held_by_other() -> None:
    """torch.profiler delivered no kernel events (the Kineto canary is missing): CUPTI is held by a
    subscriber fusiondiff did not start, whatever the ledger said."""
    global _holder
    with _lock:
        _holder = OTHER


def reset_for_tests() -> None:
    """Forget the ledger (tests only: a real process never gets CUPTI back)."""
    global _holder
    with _lock:
        _holder = None


def torch_profiler_active() -> bool:
    """Whether a torch profiler (the user's, or any) is running in this process now."""
    try:
        import torch
    except ImportError:
        return False
    if getattr(torch.autograd.profiler, "_is_profiler_enabled", False):
        return True
    enabled = getattr(getattr(torch._C, "_autograd", None), "_profiler_enabled", None)
    try:
        return bool(enabled()) if callable(enabled) else False
    except RuntimeError:
        return False


def watch() -> None:
    """From now on, note every torch profiler start in this process (the user's included), through
    the hook ``torch.autograd.profiler._KinetoProfile`` calls when it starts. Idempotent; does
    nothing where this torch has no such hook."""
    global _watching
    try:
        import torch.autograd.profiler as autograd_profiler
    except ImportError:
        return
    with _lock:
        original = getattr(autograd_profiler, "_run_on_profiler_start", None)
        if _watching or not callable(original) or getattr(original, "__fusiondiff_watch__", False):
            return

        def run_on_profiler_start(*args: Any, **kwargs: Any) -> Any:
            note(TORCH_PROFILER)
            return original(*args, **kwargs)

        run_on_profiler_start.__wrapped__ = original  # type: ignore[attr-defined]
        run_on_profiler_start.__fusiondiff_watch__ = True  # type: ignore[attr-defined]
        autograd_profiler._run_on_profiler_start = run_on_profiler_start
        _watching = True


def _loaded_libcupti() -> str | None:
    """The path of the libcupti this process has mapped (torch and nvFuser load the same soname)."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rsplit(None, 1)[-1] if line.count(" ") >= 5 else ""
                if "libcupti" in os.path.basename(path):
                    return path
    except OSError:
        return None
    return None


def cupti_has_subscriber() -> bool | None:
    """Ask CUPTI whether it already has a subscriber: ``cuptiSubscribe`` fails with
    ``CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED`` when it has (then we hold nothing); when it
    succeeds we unsubscribe at once. Any other failure counts as held too (the refusal names it):
    guessing wrong here means nvFuser exits the process. ``None`` when no libcupti is loaded or it
    cannot be called (then nothing in this process can have subscribed through it)."""
    global _last_probe
    path = _loaded_libcupti()
    if path is None:
        return None
    try:
        lib = ctypes.CDLL(path)  # already mapped: the same library instance torch and nvFuser use
        subscribe, unsubscribe = lib.cuptiSubscribe, lib.cuptiUnsubscribe
    except (OSError, AttributeError):
        return None
    subscribe.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_void_p]
    subscribe.restype = ctypes.c_int
    unsubscribe.argtypes = [ctypes.c_void_p]
    unsubscribe.restype = ctypes.c_int
    handle = ctypes.c_void_p()
    status = subscribe(ctypes.byref(handle), None, None)
    if status == 0:
        unsubscribe(handle)
        _last_probe = "CUPTI_SUCCESS"
        return False
    _last_probe = _result_name(lib, status)
    return True


def _result_name(lib: Any, status: int) -> str:
    name = ctypes.c_char_p()
    try:
        lib.cuptiGetResultString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        lib.cuptiGetResultString(status, ctypes.byref(name))
    except (AttributeError, OSError):
        return f"CUPTI error {status}"
    return name.value.decode(errors="replace") if name.value else f"CUPTI error {status}"


def claim(source: TimerName, probe: Probe | None = cupti_has_subscriber) -> None:
    """Before ``source`` (a kernel-record source's name) starts CUPTI: raise :class:`ProfilerError`
    where the other subscriber holds it, else note ``source``'s subscriber as the holder.
    ``probe`` (default :func:`cupti_has_subscriber`) is asked only before nvFuser's profiler, whose
    failure exits the process."""
    subscriber = SUBSCRIBER_OF_SOURCE.get(source)
    if subscriber is None:
        raise ProfilerError(f"unknown timer {source!r}: use one of {sorted(SUBSCRIBER_OF_SOURCE)}")
    known = _holder
    if subscriber == NVFUSER_PROFILER:
        if torch_profiler_active():
            raise ProfilerError(
                "a torch profiler is running in this process: nvFuser's PythonProfiler would make nvFuser "
                "exit the process (CUPTI takes one subscriber); stop it, or record with --timer kineto"
            )
        if known == TORCH_PROFILER:
            raise ProfilerError(
                "torch.profiler already used CUPTI in this process: nvFuser's PythonProfiler would make "
                "nvFuser exit the process (CUPTI takes one subscriber); run --timer nvfuser in a fresh "
                "process, or record with --timer kineto"
            )
        if known == OTHER or known is None and probe is not None and probe():
            probed = f" (cuptiSubscribe: {_last_probe})" if known != OTHER and _last_probe else ""
            raise ProfilerError(
                "CUPTI already has a subscriber in this process (torch.profiler, or a PythonProfiler run "
                "outside fusiondiff): nvFuser's PythonProfiler could exit the process; run --timer nvfuser "
                f"in a fresh process{probed}"
            )
    elif known == NVFUSER_PROFILER:
        raise ProfilerError(
            "nvFuser's PythonProfiler holds CUPTI in this process: torch.profiler would see no kernel events "
            "(CUPTI takes one subscriber); record with --timer nvfuser, or in a fresh process"
        )
    elif known == OTHER:
        raise ProfilerError(
            "another CUPTI subscriber (a PythonProfiler run outside fusiondiff?) holds CUPTI in this process: "
            "torch.profiler delivers no kernel events in it; record in a fresh process"
        )
    note(subscriber)
