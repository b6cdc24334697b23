"""Progress lines: the library never prints; whoever drives it passes where the lines go."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str], None]
"""Takes one progress line (no newline); the CLI writes it to stderr."""


def silent(message: str) -> None:
    """A :data:`Progress` that drops every line."""
