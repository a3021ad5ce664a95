"""Long answers in pages that fit every platform: "more: /incident 7 page 2"."""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.domain.messages import Button, Reply
from bot.domain.plurals import counted

# One page must be one Telegram message (4,096 characters after HTML escaping) and a few
# Slack sections (3,000 characters each, 50 blocks a message), with room for the title and
# the "more:" line. Measured after escaping: "<" becomes "&lt;" on both platforms.
PAGE_LIMIT = 3500
CALLBACK_MAX = 64  # Telegram's callback data limit: longer "more" commands get no button
# Only the "page N" at the end is matched, never what comes before it: "^(.*?)\s*\bpage" cost
# quadratic time on a long line of spaces.
PAGE_ARGS = re.compile(r"\bpage\s+(\d{1,6})\s*$", re.IGNORECASE)


def weight(text: str) -> int:
    """Characters a text takes once a platform escapes it (&amp; &lt; &gt;)."""
    return len(text) + 4 * text.count("&") + 3 * (text.count("<") + text.count(">"))


def reply_weight(reply: Reply) -> int:
    """Escaped characters of a reply's title and text together."""
    return weight(reply.title) + 8 + weight(reply.text)


def fits(reply: Reply, limit: int = PAGE_LIMIT) -> bool:
    """Does the reply fit one page?"""
    return reply_weight(reply) <= limit


def split_page_args(rest: str) -> tuple[str, int]:
    """('7', 2) for '7 page 2'; (rest, 1) when no page is asked for."""
    m = PAGE_ARGS.search(rest)
    if not m:
        return rest, 1
    return rest[:m.start()].rstrip(), int(m.group(1))


def _pieces(line: str, limit: int) -> list[str]:
    """A line cut into pieces of at most `limit` escaped characters, at spaces if it can."""
    out: list[str] = []
    while weight(line) > limit:
        lo, hi = 1, min(len(line), limit)  # the longest prefix that fits: binary search
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if weight(line[:mid]) <= limit:
                lo = mid
            else:
                hi = mid - 1
        cut = lo
        space = line.rfind(" ", 0, cut)
        if space > cut // 2:
            cut = space + 1
        out.append(line[:cut].rstrip())
        line = line[cut:]
    out.append(line)
    return out


def pages(text: str, limit: int) -> list[str]:
    """The text in pages of at most `limit` escaped characters, split at line boundaries
    (a line longer than a page continues on the next one)."""
    out: list[str] = []
    cur: list[str] = []
    size = 0
    # split on "\n" only: str.splitlines() also splits on U+2028 and NEL, which would lose
    # characters a user typed from a paged timeline
    for raw in text.split("\n"):
        for line in _pieces(raw, limit):
            extra = weight(line) + (1 if cur else 0)
            if cur and size + extra > limit:
                out.append("\n".join(cur))
                cur, size, extra = [], 0, weight(line)
            cur.append(line)
            size += extra
    if cur or not out:
        out.append("\n".join(cur))
    return out


def page_of(reply: Reply, page: int, more: Callable[[int], str],
            limit: int = PAGE_LIMIT) -> Reply:
    """Page `page` of a reply; `more(n)` is the command for page n. A reply that fits is
    returned as it is (page 1) or refused (page 2+)."""
    room = limit - weight(reply.title) - 8 - weight(more(999999)) - 40  # the "more:" line
    parts = pages(reply.text, max(room, 200)) if not fits(reply, limit) else [reply.text]
    if page > len(parts):
        return Reply(f"No page {page}: this answer has {counted(len(parts), 'page')}.",
                     ok=False)
    if len(parts) == 1:
        return reply
    text = parts[page - 1]
    buttons = list(reply.buttons) if page == 1 else []
    if page < len(parts):
        nxt = more(page + 1)
        text += f"\n(page {page} of {len(parts)}) more: {nxt}"
        if len(nxt.encode()) <= CALLBACK_MAX:
            buttons = [*buttons, [Button(f"More (page {page + 1})", nxt)]]
    else:
        text += f"\n(page {page} of {len(parts)}, the last)"
    return Reply(text, title=reply.title, buttons=buttons, images=reply.images if page == 1
                 else [], ok=reply.ok)


def overflow(reply: Reply, limit: int = PAGE_LIMIT) -> list[Reply]:
    """A reply that cannot be asked for again (a write's answer) as several messages that
    each fit, in order; the first keeps the title, the last the buttons."""
    if fits(reply, limit):
        return [reply]
    parts = pages(reply.text, limit - weight(reply.title) - 60)
    out = [Reply(p, ok=reply.ok) for p in parts]
    out[0].title, out[0].images = reply.title, reply.images
    out[-1].buttons = reply.buttons
    for i, r in enumerate(out[:-1]):
        r.text += f"\n(continued, {i + 1} of {len(out)})"
    return out
