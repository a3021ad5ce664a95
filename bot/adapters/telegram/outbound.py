"""Telegram as a Sink of the one delivery layer (bot.delivery): sends, albums, edits and
pins natively, at each chat's current id; queues, order, coalescing, rate limits and 429
retries are the delivery layer's."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from telegram import LinkPreviewOptions, Message, ReplyParameters
from telegram.constants import ParseMode
from telegram.error import BadRequest, ChatMigrated
from telegram.ext import ExtBot

from bot.adapters.telegram import media
from bot.adapters.telegram.probes import (
    ArchiveProbe,
    MessageIds,
    chat_id,
    id_space,
    plain,
)
from bot.adapters.telegram.render import Rendered, render, split_html
from bot.adapters.telegram.telegram_faults import native
from bot.delivery.sink import Doubt, Found, Gate, Refused, Unsupported, no_gate
from bot.domain.messages import Reply, Respond
from bot.store.chat_moves import ChatMoves

log = logging.getLogger(__name__)

PLATFORM = "telegram"
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
LOCATION_KEY = "Or tap 📍 below to share your location."
ACK_EMOJI = "👍"  # one of Telegram's standard reactions: "taken", as a nod would say
Moved = Callable[[str, str], Awaitable[str]]  # (old chat, new chat) -> the chat to use now


def private(chat: str) -> bool:
    """Whether a Telegram chat id is a person's private chat with the bot."""
    return not chat.startswith(("-", "@"))


class TelegramSink:
    """The notifier's sink for platform 'telegram'."""

    platform = PLATFORM
    pins = True
    reacts = True

    def __init__(self, bot: ExtBot[Any], moves: ChatMoves, sign: Callable[[str], str],
                 moved: Moved, ids: MessageIds, prober: ExtBot[Any], archive: str) -> None:
        self.bot = bot
        self.moves = moves
        self.sign = sign
        self.moved = moved
        self.ids = ids
        self.gate: Gate = no_gate  # set by the delivery layer: one rate-limit slot
        self.probe = ArchiveProbe(prober, archive, ids, self._bot_wide)

    async def _bot_wide(self, platform: str, chat: str) -> None:
        await self.gate(platform, chat)

    def render(self, reply: Reply, private: bool) -> Rendered:
        """A reply as Telegram messages, its buttons signed."""
        return render(reply, private=private, sign=self.sign)

    @staticmethod
    def cost(reply: Reply) -> int:
        """How many Telegram messages a reply takes (the rate limiter counts them)."""
        return (len(split_html(reply.title, reply.text)) + len(reply.images)
                + (1 if reply.request_location else 0))

    async def _next(self, chat: int | str) -> None:
        """Before each message after the first of one reply: the delivery layer's go."""
        await self.gate(PLATFORM, str(chat))

    async def send(self, chat: str, reply: Reply, *, thread: str = "", quote: str = "") -> str:
        """Send chunks (keyboard on the last), then images, then the evidence itself (under
        the line); the first message's id. Sent to the chat's current id (ChatMoves); a chat
        Telegram moved meanwhile is recorded and sent to at its new id. Never retried here on
        a network error (the server may have it); a 429 is RetryLater."""
        now = await self.moves.resolve(PLATFORM, chat)
        try:
            return await self._send_to(now, reply, thread or quote, private=private(chat))
        except ChatMigrated as exc:
            moved = await self.moved(now, str(exc.new_chat_id))
            return await self._send_to(moved, reply, thread or quote, private=private(chat))

    async def _send_to(self, chat: str, reply: Reply, mid: str, *, private: bool) -> str:
        to = chat_id(chat)
        r = self.render(reply, private)
        reply_to = ReplyParameters(int(mid), allow_sending_without_reply=True) if mid else None
        shown = media.captioned(reply, r.chunks)
        if shown is not None:  # one message: the evidence itself, its line as the caption
            msg = await native(media.show_captioned(self.bot, to, shown, r.chunks[0], reply_to))
            self.ids.learn(str(to), msg.message_id)
            return str(msg.message_id)
        sent = await native(self._send(to, r, [], reply_to))
        if sent:
            await self._under(to, sent[0].message_id, reply)
        return str(sent[0].message_id) if sent else ""

    async def _under(self, to: int | str, first: int, reply: Reply) -> None:
        """A reply's images, then the evidence itself, under its text (already sent): one
        Telegram refuses is left out, as its text, the facts, is there and not sent again."""
        try:
            for image in reply.images:
                await self._next(to)
                msg = await native(self.bot.send_photo(to, image))
                self.ids.learn(str(to), msg.message_id)
            if reply.media:
                await self._next(to)
                for m in await native(media.show(self.bot, to, reply.media, ReplyParameters(
                        first, allow_sending_without_reply=True))):
                    self.ids.learn(str(to), m.message_id)
        except Refused as exc:
            log.warning("telegram: media under message %s in %s not shown: %s", first, to,
                        exc.reason)

    def albumable(self, chat: str, reply: Reply) -> bool:
        """Whether a reply is one photo or video with its text as the caption: such replies
        to one chat can go together as an album (`send_album`)."""
        shown = media.captioned(reply, self.render(reply, private(chat)).chunks)
        return shown is not None and shown.kind in media.ALBUM

    async def send_album(self, chat: str, replies: list[Reply], *, thread: str = "") -> list[str]:
        """Send 2-10 albumable replies as one album under message `thread`; each one's id.
        At the chat's current id, like send."""
        now = await self.moves.resolve(PLATFORM, chat)
        try:
            return await self._album_to(now, replies, thread, private=private(chat))
        except ChatMigrated as exc:
            moved = await self.moved(now, str(exc.new_chat_id))
            return await self._album_to(moved, replies, thread, private=private(chat))

    async def _album_to(self, chat: str, replies: list[Reply], mid: str, *,
                        private: bool) -> list[str]:
        to = chat_id(chat)
        items = []
        for reply in replies:
            chunks = self.render(reply, private).chunks
            shown = media.captioned(reply, chunks)
            if shown is None or shown.kind not in media.ALBUM:
                raise ValueError("not an album item")  # the caller asked albumable first
            items.append((shown, chunks[0]))
        reply_to = ReplyParameters(int(mid), allow_sending_without_reply=True) if mid else None
        sent = await native(media.show_album(self.bot, to, items, reply_to))
        for m in sent:
            self.ids.learn(str(to), m.message_id)
        return [str(m.message_id) for m in sent]

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        """Edit in place; what does not fit (more chunks, the location key, images) follows
        as new messages. False when the message is gone. At the chat's current id, like
        send."""
        now = await self.moves.resolve(PLATFORM, chat)
        try:
            return await self._edit_at(now, message_id, reply, private=private(chat))
        except ChatMigrated as exc:
            moved = await self.moved(now, str(exc.new_chat_id))
            return await self._edit_at(moved, message_id, reply, private=private(chat))

    async def respond(self, chat: str, via: Respond, reply: Reply) -> None:
        """Telegram has no per-command answer channel: the core never asks for one here."""
        raise Unsupported("telegram: answers go to the chat")

    async def pin(self, chat: str, message_id: str) -> None:
        """Pin a message (the flashpoint board, a procedure) quietly; Telegram counts it like
        a message."""
        now = await self.moves.resolve(PLATFORM, chat)
        try:
            await native(self.bot.pin_chat_message(
                chat_id(now), int(message_id), disable_notification=True))
        except Refused as exc:  # e.g. not an admin here: the message still works unpinned
            log.warning("telegram: message not pinned in %s: %s", chat, exc)

    async def react(self, chat: str, message_id: str) -> None:
        """A 👍 on someone's message (their typed "ok" taken): one small call, no message."""
        now = await self.moves.resolve(PLATFORM, chat)
        await native(self.bot.set_message_reaction(chat_id(now), int(message_id), ACK_EMOJI))

    async def unpin(self, chat: str, message_id: str) -> None:
        """Unpin a message the bot pinned."""
        now = await self.moves.resolve(PLATFORM, chat)
        try:
            await native(self.bot.unpin_chat_message(chat_id(now), message_id=int(message_id)))
        except Refused as exc:  # unpinned by hand meanwhile: nothing left to do
            log.info("telegram: message not unpinned in %s: %s", chat, exc)

    async def _edit_at(self, chat: str, message_id: str, reply: Reply, *,
                       private: bool) -> bool:
        to = chat_id(chat)
        r = self.render(reply, private)
        if not await native(self._edit(to, int(message_id), r)):
            return False
        rest = Rendered(r.chunks[1:], r.keyboard, r.location_keyboard)
        if rest.chunks:
            await self._next(to)
            await native(self._send(to, rest, reply.images))
            return True
        if r.location_keyboard is not None:
            await self._next(to)
            await native(self.bot.send_message(to, LOCATION_KEY,
                                               reply_markup=r.location_keyboard))
        for image in reply.images:
            await self._next(to)
            await native(self.bot.send_photo(to, image))
        return True

    async def _send(self, to: int | str, r: Rendered, images: list[bytes],
                    quote: ReplyParameters | None = None) -> list[Message]:
        sent: list[Message] = []
        last = len(r.chunks) - 1
        for i, chunk in enumerate(r.chunks):
            markup: Any = None
            if i == last:
                markup = r.keyboard or r.location_keyboard
            if i:
                await self._next(to)
            sent.append(await self.bot.send_message(
                to, chunk, parse_mode=ParseMode.HTML, reply_markup=markup,
                reply_parameters=quote if i == 0 else None, link_preview_options=NO_PREVIEW))
        if r.keyboard is not None and r.location_keyboard is not None:
            await self._next(to)
            sent.append(await self.bot.send_message(to, LOCATION_KEY,
                                                    reply_markup=r.location_keyboard))
        for image in images:
            await self._next(to)
            sent.append(await self.bot.send_photo(to, image))
        for m in sent:
            self.ids.learn(str(to), m.message_id)
        return sent

    async def _edit(self, to: int | str, message_id: int, r: Rendered) -> bool:
        """Edit a message's first chunk in place; False when it is gone."""
        try:
            await self.bot.edit_message_text(
                r.chunks[0], chat_id=to, message_id=message_id, parse_mode=ParseMode.HTML,
                reply_markup=r.keyboard if len(r.chunks) == 1 else None,
                link_preview_options=NO_PREVIEW)
        except BadRequest as exc:
            why = str(exc).lower()
            if "not modified" in why:
                return True  # identical content: already up to date
            if "not found" in why or "can't be edited" in why:
                return False
            raise
        return True

    # ---------------------------------------------------------------- sends left in doubt
    @staticmethod
    def id_space(chat: str) -> str:
        """Which message-id sequence a chat's messages take their ids from."""
        return id_space(chat)

    def floor(self, chat: str) -> int:
        """The highest message id this process knows in the chat's id space (0: none)."""
        return self.ids.floor(chat)

    async def find_sent(self, chat: str, doubt: Doubt) -> Found | None:
        """The send among the ids above its floor (see probe_sent); an edit is not looked
        up (it is simply redone)."""
        if doubt.edit:
            return None
        mid = await self.probe_sent(chat, doubt.floor, doubt.reply)
        return Found(mid) if mid else None

    async def probe_sent(self, chat: str, floor: int, reply: Reply) -> str:
        """The id of the bot's message with this reply's text among the ids just above
        `floor` in the chat, or '' (not there, or no archive chat to look with)."""
        if not self.probe.archive or floor <= 0:
            return ""
        now = await self.moves.resolve(PLATFORM, chat)
        want = plain(self.render(reply, private(chat)).chunks[0])
        found = await self.probe.find(now, floor, want, self.bot.id)
        if found:
            log.info("telegram: a send left in doubt is in %s, %d above its floor",
                     now, int(found) - floor)
        return found
