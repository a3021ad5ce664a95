"""Waiting for a card edit as a browser sees it."""

from __future__ import annotations

from collections.abc import Callable

from rigs.fakes.telegram_api import Call


def card_edited(chat: int, needle: str) -> Callable[[list[Call]], list[Call]]:
    def pred(calls: list[Call]) -> list[Call]:
        return [c for c in calls if c.ok and c.method == "editMessageText"
                and c.params.get("chat_id") == chat and needle in str(c.params.get("text"))]
    return pred
