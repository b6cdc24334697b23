"""A recorded definition made ready for a repro script: proven to be a fusion definition and
nothing else, translated from the legacy frontend's syntax, proven again, its exact constants put
back. Each is worked out once per definition: a session's records repeat a few definitions (530
records of 12 distinct fusions in a training step), and the proofs and the translation are most of
a script's cost."""

from __future__ import annotations

import functools

from fusiondiff.records.errors import ReplayError
from fusiondiff.records.model import FusionRecord
from fusiondiff.replay.legacy import translate_legacy
from fusiondiff.replay.rebuild import Rebuilt, faithful_definition
from fusiondiff.replay.script_safety import check_definition, comment_text


def direct_definition(fusion: FusionRecord) -> tuple[str, str]:
    """The definition in direct syntax and the name of the function it defines; a
    :class:`ReplayError` naming the record where it is refused."""
    try:
        return _passed(fusion.definition)
    except ReplayError:
        pass  # refused: refused again below, in words that name the record
    where = f"the definition of {fusion.key}"
    # The text comes from a capture and becomes code: it is proven to be only fd calls before it
    # is translated (so the translator never walks a hostile tree) and again after.
    check_definition(fusion.definition, where)
    # A capture made with the legacy frontend (nvFuser 0.2.27-0.2.35) prints legacy calls.
    try:
        text = translate_legacy(fusion.definition, filename=comment_text(where)).source  # compile() refuses NUL
    except ReplayError as exc:
        raise ReplayError(f"{fusion.key}: {exc}") from None
    return text, check_definition(text, where)


@functools.lru_cache(maxsize=32)
def _passed(definition: str) -> tuple[str, str]:
    """:func:`direct_definition` of a definition that passes (what is refused is not kept)."""
    check_definition(definition)
    text = translate_legacy(definition).source
    return text, check_definition(text)


@functools.lru_cache(maxsize=32)
def faithful(printed: str, exact_constants: tuple[str, ...]) -> Rebuilt:
    """:func:`~fusiondiff.replay.rebuild.faithful_definition` (a frozen record, shared)."""
    return faithful_definition(printed, exact_constants)
