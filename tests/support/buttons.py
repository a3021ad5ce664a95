"""Pressing a reply's button in a test: its command, by part of its label."""

from __future__ import annotations

from bot.domain.messages import Result


def press(result: Result, label_part: str) -> str:
    """The command of the first button whose label contains label_part."""
    for row in result.reply.buttons:
        for b in row:
            if label_part.lower() in b.label.lower():
                return b.command
    raise AssertionError(f"no button {label_part!r} in {result.reply.buttons}")
