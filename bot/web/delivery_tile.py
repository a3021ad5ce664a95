"""The delivery-health tile: per chat, what is queued, how old the oldest undelivered message
is and when the platform last answered 429, from the delivery layer's own figures (the same
ones /status reads through bot.delivery.chat_health)."""

from __future__ import annotations

from typing import Any

from bot.delivery.notifier import Notifier

PLATFORMS = {"telegram": "Telegram", "slack": "Slack", "console": "Console"}


def chat_names(notifier: Notifier) -> dict[tuple[str, str], str]:
    """(platform, chat) -> the audiences it serves, e.g. 'control, summary'."""
    names: dict[tuple[str, str], list[str]] = {}
    for audience, platforms in notifier.channels.items():
        for platform, chats in platforms.items():
            for chat in chats:
                names.setdefault((platform, chat), []).append(audience)
    return {k: ", ".join(v) for k, v in names.items()}


def delivery_rows(notifier: Notifier) -> tuple[tuple[Any, ...], list[dict[str, Any]]]:
    """(what changes only when delivery does, the rows): every chat of a connected platform,
    worst first; ages in seconds as of now (the screen counts on from there)."""
    now = notifier.clock()
    names = chat_names(notifier)
    health = {(h.platform, h.chat): h for h in notifier.pending()}
    chats = [k for k in names if k[0] in notifier.sinks]
    chats += [k for k in health if k not in names]
    rows, key = [], []
    for platform, chat in chats:
        h = health.get((platform, chat))
        queued = h.queued if h else 0
        oldest = h.oldest_at if h else None
        last_429 = h.last_429_at if h else None
        key.append((platform, chat, queued, oldest, last_429))
        rows.append({"platform": PLATFORMS.get(platform, platform), "chat": chat,
                     "name": names.get((platform, chat), ""), "queued": queued,
                     "oldest_s": None if oldest is None else round(now - oldest, 1),
                     "last_429_s": None if last_429 is None else round(now - last_429, 1)})
    rows.sort(key=lambda r: (-(r["oldest_s"] or -1), r["platform"], r["name"]))
    return tuple(sorted(key, key=str)), rows


def control_chats(notifier: Notifier) -> set[tuple[str, str]]:
    """The (platform, chat)s of the control audience on connected platforms."""
    return {(platform, chat) for platform, chats in notifier.channels.get("control", {}).items()
            if platform in notifier.sinks for chat in chats}


def incident_delivery(notifier: Notifier, seen: dict[str, int],
                      waiting: list[tuple[str, str, float, bool]]) -> list[dict[str, Any]]:
    """One incident's card in the control chats: when it arrived in each ('at', ms since the
    epoch), or how long it has been queued and why ('queued_s', 'why')."""
    rows: list[dict[str, Any]] = []
    chats = control_chats(notifier)
    queued = {(p, c): (age, limited) for p, c, age, limited in waiting}
    for platform, chat in sorted(chats):
        name = PLATFORMS.get(platform, platform)
        # once a card is in the chat, a newer version on its way (an edit) is not "pending"
        if f"{platform}:{chat}" in seen:
            rows.append({"platform": name, "at": seen[f"{platform}:{chat}"]})
        elif (platform, chat) in queued and queued[platform, chat][0] < 0:
            rows.append({"platform": name, "digest": True})
        elif (platform, chat) in queued:
            age, limited = queued[platform, chat]
            rows.append({"platform": name, "queued_s": round(age, 1),
                         "why": "rate limit" if limited else "platform pace"})
        else:
            rows.append({"platform": name, "sending": True})
    return rows
