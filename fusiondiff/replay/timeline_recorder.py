"""The recorder with block-level timelines: each fusion's timeline recorded right after its timing.

:class:`TimelineRecorder` is the ordinary :class:`~fusiondiff.recording.recorder.Recorder` (live
capture and replay alike) plus one step after a fusion is timed (:func:`fusiondiff.replay.timeline_recording.record_fusion`),
in the same process and conditions, kept on the fusion's record (``FusionRecord.sm_timeline``); the
CTA arrays are in :attr:`TimelineRecorder.timeline_arrays` until the capture is written beside them. :func:`recorder_class` picks it when the options ask for timelines.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fusiondiff.recording.recorder import Recorder
from fusiondiff.records.model import traced_name
from fusiondiff.records.options import RecordingOptions
from fusiondiff.replay.timeline_recording import Measured, TimelineOptions, record_fusion


class TimelineRecorder(Recorder):
    """A :class:`Recorder` that also records each timed fusion's block-level timeline."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        options: RecordingOptions = args[1] if len(args) > 1 else kwargs.get("options") or RecordingOptions()
        self.timeline_options = TimelineOptions(runs=options.sm_timeline, max_overhead=options.sm_timeline_max_overhead)
        self._timelines = 0
        self.timeline_arrays: dict[str, Any] = {}
        """Every measured kernel's CTA arrays under their key in the timeline file."""

    def _time(self, pending: Any, copies: list[Any]) -> None:
        super()._time(pending, copies)
        record = pending.record
        if record.failure is not None or not record.kernels or self._execute_untraced is None:
            return
        with self.sampler.untraced():  # the session's executions stay untouched meanwhile
            measured = record_fusion(
                pending.fd,
                copies,
                pending.execute_kwargs,
                record,
                self.timeline_options,
                prefix=f"f{self._timelines}",
                execute=self._execute_untraced,
                protocol=self.protocol,
                kernel_source=self.sampler.source,
                flush_l2=self.sampler.flush_l2,
            )
        self._timelines += 1
        self.timeline_arrays.update(measured.arrays)
        pending.record = dataclasses.replace(record, sm_timeline=measured.timeline)
        self.progress(f"fusiondiff: {traced_name(record.name, record.trace)}: block timeline: {describe(measured)}")


def describe(measured: Measured) -> str:
    """One progress line's worth: what was measured, or why not."""
    timeline = measured.timeline
    done = [k for k in timeline.kernels if k.measured]
    refused = [k for k in timeline.kernels if k.refusal is not None]
    parts = []
    for k in done:
        overhead = k.overhead
        parts.append(
            f"{k.runs[0].ctas} CTAs on {k.runs[0].sms_used} SMs"
            + (f", probe +{100 * overhead:.1f} %" if overhead is not None else "")
        )
    parts += [f"{k.kernel.split('_f')[0]} refused ({k.refusal.code}: {k.refusal.detail})" for k in refused if k.refusal]
    return "; ".join(parts) or "nothing to measure"


def recorder_class(options: RecordingOptions | None) -> type[Recorder]:
    """:class:`TimelineRecorder` when ``options`` ask for timelines, else the plain recorder."""
    return TimelineRecorder if options is not None and options.sm_timeline > 0 else Recorder
