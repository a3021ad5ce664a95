"""Whether an answer fits every platform's message limit."""

from __future__ import annotations

from bot.adapters.slack.blocks import reply_blocks, to_dicts
from bot.adapters.telegram.render import split_html


def fits_every_platform(reply) -> bool:
    """One Telegram message, and a Slack message with nothing truncated."""
    if len(split_html(reply.title, reply.text)) != 1:
        return False
    blocks = to_dicts(reply_blocks(reply))
    return len(blocks) <= 50 and not any("truncated" in str(b) for b in blocks)
