"""The setup of a replay process before its scripts run: torch's and nvFuser's imports, the CUDA
context, and the profiler's first window (its start-up), each a phase of its own
(:mod:`fusiondiff.replay.phases`) that :mod:`fusiondiff.replay.child` orders around its gates."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping

from fusiondiff.records.options import RecordingOptions
from fusiondiff.replay.phases import PhaseLog

PROFILER_IMPORTS = ("torch._inductor.config",)
"""What torch.profiler's first window imports: its ``prepare_trace`` asks ``hasattr(torch,
"_inductor")``, which loads ``torch._inductor`` (and ``torch._dynamo``). On the H200 that import
was nearly all of the 1.4 to 2.3 s taken for CUPTI's start-up; the window itself took 15 ms
(tests/data/roundtrip_modes/fourth_round/profiler_probe)."""


def import_frontends(profiler: bool = True) -> None:
    """Import torch and nvFuser's frontend now: about half of a fresh process's start, and neither
    creates a CUDA context (on the H200: tests/data/roundtrip_deep/same_machine/import_probe.log). A missing
    one is left for the script's own import to report. With ``profiler``, also
    :data:`PROFILER_IMPORTS`, so the profiler's first window no longer pays them in the replay's turn."""
    import importlib

    for module in ("torch", "nvfuser_direct"):
        try:
            importlib.import_module(module)
        except ImportError:
            pass
    if profiler:
        for module in PROFILER_IMPORTS:
            try:
                importlib.import_module(module)
            except Exception:  # noqa: BLE001 - only a head start: the profiler's own import says why
                pass


def uncompiled_imports(environ: Mapping[str, str] | None = None, module: str = "torch") -> str | None:
    """Why every replay process will import ``module`` (torch) from its sources, or None: the
    environment its processes inherit sets ``PYTHONDONTWRITEBYTECODE`` and ``module`` has no
    bytecode where they would look (``__pycache__``, or under ``PYTHONPYCACHEPREFIX``), so each one
    compiles torch's and nvFuser's Python sources again as it imports them. On the H200 machine lent
    to this project (which sets it and ships no bytecode) that took the imports from 4.5 s to 9-11 s
    per process (tests/data/roundtrip_modes/fifth_round). Looked up without importing ``module``."""
    import importlib.util

    environ = os.environ if environ is None else environ
    if not environ.get("PYTHONDONTWRITEBYTECODE"):
        return None
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = spec.origin if spec is not None else None
    if not origin or not origin.endswith(".py"):
        return None  # not installed here, or not from a source file: nothing to say
    try:
        cached = importlib.util.cache_from_source(origin)
    except NotImplementedError:  # this Python keeps no bytecode cache at all
        return None
    if os.path.exists(cached):
        return None
    return (
        f"PYTHONDONTWRITEBYTECODE is set and {module} has no bytecode here, so every replay process compiles "
        f"{module}'s and nvFuser's Python sources as it imports them (twice as long on the H200); unset it "
        "(with PYTHONPYCACHEPREFIX=DIR to keep the bytecode out of site-packages) for faster replays"
    )


def needs_profiler_imports(options: RecordingOptions | None) -> bool:
    """Whether a replay process under ``options`` (the defaults where ``None``) times through
    torch.profiler, so that its imports include the profiler's (:data:`PROFILER_IMPORTS`)."""
    from fusiondiff.recording import cupti_owner

    return cupti_owner.starts_torch_profiler((options or RecordingOptions()).protocol.method)


def open_profiler_once(options: RecordingOptions) -> None:
    """Open and close a torch.profiler window with no work in it, so its start-up (1.4-2.3 s once per
    process on the H200, nearly all of it the import of :data:`PROFILER_IMPORTS`; 15 ms once they are
    imported) is paid before the samples rather than inside their first timed window. Only where the
    samples are timed through torch.profiler (CUPTI takes one subscriber per process: under
    ``--timer nvfuser`` torch.profiler must never run), and only where
    :func:`~fusiondiff.recording.cupti_owner.claim` allows it; it launches no kernel."""
    from fusiondiff.recording import cupti_owner
    from fusiondiff.records.errors import ProfilerError

    if not cupti_owner.starts_torch_profiler(options.protocol.method):
        return
    try:
        cupti_owner.claim(options.protocol.method)
    except ProfilerError:
        return  # the timing itself says why it cannot run
    import torch

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
        pass


class ProfilerStart:
    """:func:`open_profiler_once` in a thread of its own, started at construction; ``on_done`` is
    called from that thread when it ends. :meth:`join` waits for it, enters its span in ``phases``
    as ``profiler_init`` and raises what it raised."""

    def __init__(self, options: RecordingOptions, phases: PhaseLog, on_done: Callable[[], None] | None) -> None:
        self._options, self._phases, self._on_done = options, phases, on_done
        self._span: tuple[float, float] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="fusiondiff-profiler-start", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        start = self._phases.clock()
        try:
            open_profiler_once(self._options)
        except BaseException as exc:  # noqa: BLE001 - raised again in the main thread by join()
            self._error = exc
        finally:
            self._span = (start, self._phases.clock())
            if self._on_done is not None:
                self._on_done()

    def join(self) -> None:
        self._thread.join()
        if self._span is not None:
            self._phases.add("profiler_init", *self._span)
        if self._error is not None:
            raise self._error


def cuda_devices(chosen: int | None, create_context: bool = False) -> tuple[int, int]:
    """(visible CUDA devices, the device the replay runs on); with ``chosen``, that one is made
    current first, so a script's unpinned ``"cuda"`` lands there too. With ``create_context`` the
    current device's CUDA context is made now (an allocation, no kernel), so its cost is a phase
    of its own."""
    import torch

    count = torch.cuda.device_count()
    if chosen is not None and 0 <= chosen < count:
        torch.cuda.set_device(chosen)
    current = torch.cuda.current_device() if count else 0
    if create_context and count:
        torch.empty(1, device=f"cuda:{current}")
    return count, current
