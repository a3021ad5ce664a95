"""Telegram sends left in doubt by a crash: which message ids a chat has reached, and the
lookup (forwards into the archive chat) that finds whether such a send happened.

Message ids only grow within a chat: sequential in a supergroup or channel, from the bot's
one sequence across its private chats and basic groups. The highest id known when a send
begins is recorded with its in-flight mark (`floor`); after a crash the send, if it
happened, is one of the next few ids, which forwardMessage can show.
"""

from __future__ import annotations

import asyncio
import html
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from telegram import Message, MessageOriginUser
from telegram.error import BadRequest, RetryAfter
from telegram.ext import ExtBot

from bot.delivery.sink import BOT_WIDE

PLATFORM = "telegram"
# Message ids above an in-doubt send's floor that are looked at. The bot's private chats
# share one sequence, so at a flashpoint dozens of other stewards' messages and replies can
# take ids between the floor and the send; those probes answer "not found" and cost no slot
# of the archive chat's limit. A supergroup has its own sequence: only its members' posts.
PROBE_SPAN = {"common": 60, "chat": 20}
ARCHIVE_GAP = 1.1  # seconds between forwards that land in the archive chat (~1/s per chat)
ARCHIVE_PER_MIN = 19  # and per minute (groups: ~20)
Gate = Callable[[str, str], Awaitable[None]]


def id_space(chat: str) -> str:
    """Which message-id sequence a chat's messages take their ids from."""
    return chat if chat.startswith("-100") else "common"


def retry_seconds(exc: RetryAfter) -> float:
    """A 429's wait in seconds (PTB gives a timedelta or a number, by version)."""
    ra: Any = exc.retry_after
    return ra.total_seconds() if hasattr(ra, "total_seconds") else float(ra)


def chat_id(chat: str) -> int | str:
    """A chat as the Bot API takes it: a number, or an @username."""
    return int(chat) if chat.lstrip("-").isdigit() else chat


class MessageIds:
    """The highest message id this process has seen in each id space."""

    def __init__(self) -> None:
        self.last: dict[str, int] = {}  # id space -> highest message id seen there

    def floor(self, chat: str) -> int:
        """The highest message id known in the chat's id space (0: none)."""
        return self.last.get(id_space(chat), 0)

    def learn(self, chat: str, mid: int) -> None:
        """A message id seen in `chat` (sent or received)."""
        space = id_space(chat)
        if mid > self.last.get(space, 0):
            self.last[space] = mid

    def learn_update(self, raw: Any) -> None:
        """An update's message ids raise what is known of its chat's sequence."""
        if not isinstance(raw, dict):
            return
        for key in ("message", "edited_message", "callback_query"):
            msg = raw.get(key)
            if isinstance(msg, dict) and key == "callback_query":
                msg = msg.get("message")
            if isinstance(msg, dict) and isinstance(msg.get("chat"), dict) and \
                    isinstance(msg.get("message_id"), int):
                self.learn(str(msg["chat"].get("id")), msg["message_id"])


def plain(text: str) -> str:
    """What a message sent with parse_mode HTML reads as: its text without the markup."""
    return html.unescape(re.sub(r"<[^<>]+>", "", text)).strip()


class ArchiveProbe:
    """Finds a send left in doubt by forwarding the candidate ids into the archive chat
    (read-only for the chat itself), paced within the archive chat's limits."""

    def __init__(self, bot: ExtBot[Any], archive: str, ids: MessageIds, gate: Gate) -> None:
        # Lookup forwards bypass PTB's AIORateLimiter: it counts every call to a negative
        # chat id against that group's 20/min, though a forward that finds nothing posts
        # nothing; forward() paces what lands in the archive chat and takes bot-wide slots.
        self.bot = bot
        self.archive = archive
        self.ids = ids
        self.gate = gate
        self._probing = asyncio.Lock()
        self._archived: list[float] = []  # when probes landed in the archive chat

    async def find(self, chat: str, floor: int, text: str, sender: int) -> str:
        """The id of `sender`'s message reading `text` among the PROBE_SPAN ids above
        `floor` in `chat`, or '' (not there, or no archive chat to look with)."""
        if not self.archive or floor <= 0:
            return ""
        async with self._probing:
            span = PROBE_SPAN["common" if id_space(chat) == "common" else "chat"]
            for mid in range(floor + 1, floor + 1 + span):
                copy = await self.forward(chat, mid)
                if copy is None:
                    continue
                origin = copy.forward_origin
                if isinstance(origin, MessageOriginUser) and \
                        origin.sender_user.id == sender and \
                        (copy.text or copy.caption or "").strip() == text:
                    self.ids.learn(chat, mid)
                    return str(mid)
        return ""

    async def forward(self, chat: str, mid: int) -> Message | None:
        """Forward one message into the archive chat (None: no such message in `chat`),
        paced within the archive chat's limits; a 429 is waited out."""
        await self.bot.initialize()  # once: later calls return at once
        while True:
            ago = time.monotonic() - 60
            self._archived = [t for t in self._archived if t > ago]
            wait = 0.0
            if self._archived:
                wait = self._archived[-1] + ARCHIVE_GAP - time.monotonic()
            if len(self._archived) >= ARCHIVE_PER_MIN:
                wait = max(wait, self._archived[-ARCHIVE_PER_MIN] + 60 - time.monotonic())
            if wait > 0:
                await asyncio.sleep(wait)
            # A forward that finds its message posts into the archive chat, so it counts
            # towards the bot's 30/s that the replies being recovered are using too.
            await self.gate(PLATFORM, BOT_WIDE)
            try:
                copy = await self.bot.forward_message(chat_id(self.archive), chat_id(chat), mid,
                                                      disable_notification=True)
            except RetryAfter as exc:
                await asyncio.sleep(retry_seconds(exc))
                continue
            except BadRequest as exc:
                why = str(exc).lower()
                if "message to forward not found" in why or "message_id_invalid" in why:
                    return None
                raise
            self._archived.append(time.monotonic())
            return copy

    async def close(self) -> None:
        """Close the lookup bot's HTTP session."""
        await self.bot.shutdown()
