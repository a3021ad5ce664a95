"""Delivery health people can see: per-chat lines for /status (and the Slack Home tab), and a
warning to the other platform's control room when a chat has been unreachable too long."""

from __future__ import annotations

import logging

from bot.delivery.notifier import Notifier
from bot.domain.messages import Outbound, Reply

log = logging.getLogger(__name__)


def _ago(seconds: float) -> str:
    return f"{int(seconds)} s" if seconds < 120 else f"{int(seconds // 60)} min"


def status_lines(notifier: Notifier) -> list[str]:
    """One line per chat with something queued or a recent 429, and per feature a missing
    permission turned off; 'all delivered' otherwise."""
    now = notifier.clock()
    lines = []
    for h in notifier.pending():
        lines += [f"Delivery {h.platform} {h.chat}: {feature}: {why}"
                  for feature, why in h.unsupported.items()]
        recent_429 = h.last_429_at is not None and now - h.last_429_at < 600
        if not h.queued and not recent_429:
            continue
        parts = [f"{h.queued} queued"]
        if h.oldest_at is not None:
            parts.append(f"oldest {_ago(now - h.oldest_at)}")
        if h.last_429_at is not None:
            parts.append(f"last 429 {_ago(now - h.last_429_at)} ago")
        lines.append(f"Delivery {h.platform} {h.chat}: " + ", ".join(parts))
    return lines or ["Delivery: all messages delivered."]


async def watch(notifier: Notifier, warn_after: float, every: float = 5.0) -> None:
    """Warn the other platform's control room once per stuck spell of a chat."""
    while True:
        await notifier.limiter.sleep(every)
        now = notifier.clock()
        for h in notifier.pending():
            stuck = h.stuck(now, warn_after)
            if stuck and not h.warned:
                h.warned = True
                text = (f"⚠ Messages to {h.platform} chat {h.chat} are not getting through: "
                        f"{h.queued} queued, oldest {_ago(now - h.oldest_at or 0)}. "
                        "Nothing is lost; check that platform, or radio control.")
                for platform, chats in notifier.targets("control").items():
                    if platform != h.platform and platform in notifier.sinks:
                        for chat in chats:
                            notifier.enqueue(platform, chat, Outbound("control", Reply(text)))
                log.warning("delivery to %s:%s stuck for %.0fs", h.platform, h.chat,
                            now - (h.oldest_at or now))
            elif not stuck:
                h.warned = False
