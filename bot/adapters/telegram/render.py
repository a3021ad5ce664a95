"""Rendering a platform-neutral Reply as Telegram messages: HTML, keyboards, 4096-char chunks."""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from dataclasses import dataclass

from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    KeyboardButton,
    ReplyKeyboardMarkup,
)

from bot.domain.bidi_controls import without_bidi_controls
from bot.domain.messages import Button, Reply

log = logging.getLogger(__name__)

MAX_TEXT = 4096  # Telegram's limit for a message's text
MAX_CALLBACK = 64  # bytes of callback_data
MAX_BUTTON_LABEL = 64
SHARE_LOCATION = "📍 Share my location"


@dataclass
class Rendered:
    """A Reply as Telegram wants it: HTML chunks, the inline keyboard for the last chunk."""

    chunks: list[str]
    keyboard: InlineKeyboardMarkup | None
    location_keyboard: ReplyKeyboardMarkup | None


def escape(text: str) -> str:
    """Escape a user-supplied string for Telegram's HTML parse mode (bidi controls dropped)."""
    return html.escape(without_bidi_controls(text), quote=False)


def _pieces(line: str, limit: int) -> list[str]:
    """Escaped pieces of one raw line, each at most `limit` long, never cutting an entity."""
    out: list[str] = []
    cur = ""
    for ch in line:
        e = escape(ch)
        if len(cur) + len(e) > limit:
            out.append(cur)
            cur = ""
        cur += e
    out.append(cur)
    return out


def split_html(title: str, text: str, limit: int = MAX_TEXT) -> list[str]:
    """Escape and split into messages of at most `limit` characters at line boundaries.

    The title (bold) leads the first message. Only lines longer than a whole message are cut
    inside, between characters, never inside an HTML entity.
    """
    lines: list[str] = []
    if title:
        lines += [f"<b>{p}</b>" for p in _pieces(title, limit - 7)]
    for raw in text.splitlines() or ([] if title else [""]):
        lines += _pieces(raw, limit)
    chunks: list[str] = []
    cur: list[str] = []
    size = 0
    for line in lines:
        extra = len(line) + (1 if cur else 0)
        if cur and size + extra > limit:
            chunks.append("\n".join(cur))
            cur, size = [], 0
            extra = len(line)
        cur.append(line)
        size += extra
    if cur:
        chunks.append("\n".join(cur))
    # Telegram rejects empty (or whitespace-only) messages.
    chunks = [c for c in chunks if c.strip()]
    return chunks or ["…"]


def _plain(command: str) -> str:
    return command


def inline_keyboard(rows: list[list[Button]], sign: Callable[[str], str] = _plain
                    ) -> InlineKeyboardMarkup | None:
    """Inline buttons whose callback_data is the (signed) command; over-long ones dropped."""
    out: list[list[InlineKeyboardButton]] = []
    for row in rows:
        keys = []
        for b in row:
            data = sign(b.command)
            if len(data.encode()) > MAX_CALLBACK:
                log.warning("button %r dropped: command over 64 bytes", b.label)
                continue
            label = without_bidi_controls(b.label)
            keys.append(InlineKeyboardButton(label[:MAX_BUTTON_LABEL] or "·",
                                             callback_data=data))
        if keys:
            out.append(keys)
    return InlineKeyboardMarkup(out) if out else None


def location_keyboard() -> ReplyKeyboardMarkup:
    """The one-tap 'share my location' key (works in private chats only)."""
    return ReplyKeyboardMarkup([[KeyboardButton(SHARE_LOCATION, request_location=True)]],
                               resize_keyboard=True, one_time_keyboard=True)


def render(reply: Reply, *, private: bool = True, sign: Callable[[str], str] = _plain
           ) -> Rendered:
    """A Reply as Telegram messages (button commands signed by `sign`)."""
    return Rendered(
        chunks=split_html(reply.title, reply.text),
        keyboard=inline_keyboard(reply.buttons, sign),
        location_keyboard=location_keyboard() if reply.request_location and private else None,
    )


def toast(reply: Reply, limit: int = 200) -> str:
    """A Reply as a callback-query notification (plain text, at most 200 characters)."""
    text = without_bidi_controls(" ".join(reply.lines())).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
