"""One JSON value written as its differences from another: how a diff record holds capture B.

Two captures of the same fusions share nearly everything (definitions, inputs, launch configs, the
environment); what differs is mostly their samples. A diff record keeps capture A whole and capture
B as a delta against A (:func:`delta`), so what the two share is written once; :func:`apply` gives B
back exactly. A delta is one of three objects:

- ``{"=": value}``: the value itself;
- ``{"~": {key: delta, ...}, "-": [key, ...]}``: an object whose listed keys differ or are new
  (each a delta against A's value, a new key's ``{"=": ...}``), ``-`` the keys B lacks (left out
  when none);
- ``{"[~]": {"position": delta, ...}, "len": n}``: a list of objects or lists whose listed
  positions differ, ``len`` where B's length is not A's (a position past A's end is ``{"=": ...}``);
  a list of plain values (samples, a shape: its first item tells) that differs is written whole,
  ``{"=": [...]}``.

Equal values have no delta: the whole of an unchanged B is ``{"~": {}}``.
"""

from __future__ import annotations

from typing import Any

from fusiondiff.records.errors import ReportError

MAX_DEPTH = 64
"""Deepest delta read back: a capture's values nest about ten levels; deeper is no record's."""


_ABSENT = object()
"""A key that object A lacks."""


def delta(a: Any, b: Any) -> dict[str, Any]:
    """``b`` as its differences from ``a`` (module docstring); ``{"~": {}}`` where they are equal
    objects, ``{"=": b}`` where the kinds differ. A tuple is a list (as JSON writes it)."""
    if isinstance(a, dict) and isinstance(b, dict):
        get = a.get  # each key looked up once: a session's delta walks millions of them
        changed = {
            k: {"=": v} if x is _ABSENT else delta(x, v)
            for k, v in b.items()
            if (x := get(k, _ABSENT)) is _ABSENT or x != v
        }
        removed = [] if a.keys() == b.keys() else [k for k in a if k not in b]
        return {"~": changed, "-": removed} if removed else {"~": changed}
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and b and isinstance(b[0], (dict, list, tuple)):
        items = {
            str(i): delta(a[i], v) if i < len(a) else {"=": v} for i, v in enumerate(b) if i >= len(a) or a[i] != v
        }
        return {"[~]": items, "len": len(b)} if len(b) != len(a) else {"[~]": items}
    return {"=": b}


def apply(a: Any, change: Any, where: str, depth: int = 0) -> Any:
    """The value :func:`delta` made ``change`` from, given ``a``; a malformed delta, or one that
    does not fit ``a``, is a :class:`ReportError` naming ``where``."""
    if depth > MAX_DEPTH:
        raise ReportError(f"{where}: nested deeper than {MAX_DEPTH} levels, which no diff record is")
    if not isinstance(change, dict) or len(change.keys() - {"len", "-"}) != 1:
        raise ReportError(f'{where}: expected a delta (an object with one of "=", "~", "[~]")')
    if "=" in change:
        return change["="]
    if "~" in change:
        return _apply_object(a, change, where, depth)
    if "[~]" in change:
        return _apply_list(a, change, where, depth)
    raise ReportError(
        f'{where}: expected a delta (an object with one of "=", "~", "[~]"), found {sorted(change)!r:.60}'
    )


def _apply_object(a: Any, change: dict[str, Any], where: str, depth: int) -> dict[str, Any]:
    changed, removed = change["~"], change.get("-", [])
    if not isinstance(a, dict) or not isinstance(changed, dict) or not isinstance(removed, list):
        raise ReportError(f"{where}: an object's delta where capture A holds no object, or a malformed one")
    out = {k: v for k, v in a.items() if k not in removed}
    for key, inner in changed.items():
        step = f".{key}" if key.isidentifier() else f"[{key!r}]"  # quoted: the refusal stays one line
        out[key] = apply(a.get(key), inner, f"{where}{step}", depth + 1)
    return out


def _apply_list(a: Any, change: dict[str, Any], where: str, depth: int) -> list[Any]:
    items, length = change["[~]"], change.get("len", len(a) if isinstance(a, list) else -1)
    if not isinstance(a, list) or not isinstance(items, dict) or type(length) is not int or length < 0:
        raise ReportError(f"{where}: a list's delta where capture A holds no list, or a malformed one")
    out = list(a[:length]) + [None] * max(length - len(a), 0)
    for key, inner in items.items():
        if not (key.isascii() and key.isdigit()) or int(key) >= length:
            raise ReportError(f"{where}: position {key!r:.20} is not in a list of {length}")
        position = int(key)
        out[position] = apply(a[position] if position < len(a) else None, inner, f"{where}[{key}]", depth + 1)
    missing = [i for i in range(len(a), length) if str(i) not in items]
    if missing:
        raise ReportError(f"{where}: position {missing[0]} is past capture A's list and not given")
    return out
