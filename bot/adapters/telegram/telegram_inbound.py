"""Telegram updates -> Commands: messages, edits and button taps, answered through the one
delivery layer (a toast is answered here: it is not a message)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from telegram import CallbackQuery, ChatMember, ChatMemberRestricted, Message, Update
from telegram.constants import ChatType
from telegram.error import BadRequest
from telegram.ext import ContextTypes, ExtBot

from bot.adapters.inbound_base import InboundBase
from bot.adapters.telegram import media
from bot.adapters.telegram.callbacks import CallbackSigner
from bot.adapters.telegram.menus import Menus
from bot.adapters.telegram.migrations import ChatMigrations
from bot.adapters.telegram.render import toast
from bot.adapters.telegram.voice_fetch import hear, voice_note
from bot.core.ports import CoreAPI
from bot.delivery.notifier import Notifier
from bot.domain.messages import Attachment, Command, Reply, ReplyVia
from bot.store import StoreUnavailable
from bot.store.facades import PlatformState
from bot.store.inbox import Seen
from bot.voice.outcome import as_command, waiting
from bot.voice.pool import Transcriber

log = logging.getLogger(__name__)

PLATFORM = "telegram"
# buttons of a guided form or voice report: the prompt message becomes the answer
EDIT_IN_PLACE = ("/form", "/voice")
ANONYMOUS = ("I can't tell who is asking: turn off 'Remain anonymous' in your admin rights "
             "for this group, or message me directly.")
IN_CHAT = (ChatMember.MEMBER, ChatMember.ADMINISTRATOR, ChatMember.OWNER)
NOT_MY_BUTTON = "That button isn't one I can use (old or not mine). Send /help."
EDITS_NOT_TAKEN = ("Edits aren't taken into the log: it keeps what you first sent. Send the "
                   "correction as a new message (it is added to your latest report), or "
                   "/update <id> <text>; control can /amend type, severity or place.")


def callback_reply_via(msg: Message | None, data: str, private: bool) -> ReplyVia | None:
    """How a button's answer goes out: the form prompt becomes it, or a new message in a
    private chat; in a group it may be a toast, which the adapter decides (not queued)."""
    if msg is not None and data.startswith(EDIT_IN_PLACE):
        return ReplyVia(edit=str(msg.message_id))
    return ReplyVia() if private else None


def message_reply_via(msg: Message, private: bool) -> ReplyVia:
    """How a message's answer goes out: a new message in a private chat, else quoting it."""
    return ReplyVia() if private else ReplyVia(quote=str(msg.message_id))


def start_alias(text: str) -> str:
    """/start (first contact) is /help; /start <code> (an invite deep link) is /join."""
    word, _, rest = text.partition(" ")
    if word.lower() != "/start":
        return text
    return f"/join {rest.strip()}" if rest.strip() else "/help"


async def answer(query: CallbackQuery, text: str | None = None, alert: bool = False) -> None:
    """Answer a button tap (a toast, or an alert); too old to answer is fine."""
    try:
        await query.answer(text=text, show_alert=alert)
    except BadRequest as exc:  # too old to answer: the action still happened
        log.info("telegram: callback not answered: %s", exc)


class Inbound(InboundBase):
    """PTB's handlers for messages, edits and button taps."""

    platform = PLATFORM

    def __init__(self, core: CoreAPI, delivery: Notifier, state: PlatformState, bot: ExtBot[Any],
                 seen: Seen, bot_id: str, signer: CallbackSigner, menus: Menus,
                 migrations: ChatMigrations, voice: Transcriber | None = None) -> None:
        super().__init__(core, delivery, state, seen)
        self.bot = bot
        self.bot_id = bot_id
        self.signer = signer
        self.menus = menus
        self.migrations = migrations
        self.replayed: set[int] = set()  # recorded by a crashed run: processed again
        self.voice = voice  # transcription pool (None: the `.[voice]` extra is not installed)
        self.hearing: set[asyncio.Task[None]] = set()  # voice notes being transcribed
        # update id -> its voice note's work: the poller forgets the update once it is done
        self.later: dict[int, asyncio.Task[None]] = {}

    async def first_time(self, update_id: int) -> bool:
        """False for an update any replica already took (a webhook redelivery reaching
        another replica, a polling redelivery): shared in Redis. An update the inbox kept
        from a crashed run is processed again (the store's dedupe keeps its writes once, and
        an answer lost with the crash is given)."""
        if update_id in self.replayed:
            self.replayed.discard(update_id)
            return True
        return await self.seen_first(f"telegram:{self.bot_id}:{update_id}")

    async def _incident_of(self, chat_id: int, replied: Message) -> str:
        """The incident a replied-to bot message is about ('' if none): as the outbox
        recorded it when it sent the message (a card, or a message about one)."""
        ref = await self.live_ref(str(chat_id), str(replied.message_id))
        return ref if ref.startswith("INC-") else ""

    def for_me(self, text: str) -> str | None:
        """The text with this bot's /cmd@botname suffix removed; None when the command is
        addressed to another bot (shared groups: /status@other_bot is not ours)."""
        if not text.startswith("/"):
            return text
        word, sep, rest = text.partition(" ")
        name, at, bot = word.partition("@")
        if not at:
            return text
        if bot.lower() != (self.bot.username or "").lower():  # from getMe at start
            return None
        return name + sep + rest

    def _say(self, msg: Message, text: str) -> None:
        """A short plain answer to a message (quoted in groups)."""
        private = msg.chat.type == ChatType.PRIVATE
        self.delivery.reply(PLATFORM, str(msg.chat_id), Reply(text),
                            quote="" if private else str(msg.message_id))

    async def on_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A message: a command, a report, evidence for an incident, or a chat move."""
        msg = update.message
        if msg is None or not await self.first_time(update.update_id):
            return
        if msg.migrate_to_chat_id or msg.migrate_from_chat_id:  # group -> supergroup
            old, new = ((msg.chat_id, msg.migrate_to_chat_id) if msg.migrate_to_chat_id
                        else (msg.migrate_from_chat_id, msg.chat_id))
            await self.migrations.chat_moved(str(old), str(new))
            return
        text = msg.text or msg.caption or ""
        if msg.sender_chat is not None and msg.sender_chat.id == msg.chat_id:
            # An anonymous group admin: Telegram hides who it is (from = GroupAnonymousBot).
            if text.startswith("/") and self.for_me(text) is not None:
                self._say(msg, ANONYMOUS)
            return
        if msg.from_user is None or msg.from_user.is_bot:
            return
        addressed = self.for_me(text)
        if addressed is None:
            return  # a command for another bot in a shared group
        text = addressed
        private = msg.chat.type == ChatType.PRIVATE
        attachments = media.attachments(msg)
        reply_to = ""
        replied = msg.reply_to_message
        if replied and replied.from_user and replied.from_user.id == context.bot.id:
            reply_to = await self._incident_of(msg.chat_id, replied)
        if not private and not text.startswith("/") and not reply_to:
            return  # group chatter, or media not aimed at an incident message
        cannot = media.not_kept(msg)
        if cannot:
            self._say(msg, f"I can't keep {cannot} as evidence. Send a photo, video, voice "
                           "note, file or text instead.")
            return
        if not text and not attachments:
            return  # service messages (joins, pins…): nothing to log
        if not private and not text.startswith("/") and not attachments:
            return
        note = voice_note(attachments)
        if note is not None and not text.startswith("/"):
            # transcribed beside the loop, not in its way: later updates go on meanwhile
            self.keep(self._voice_note(msg, update.update_id, attachments, reply_to, private,
                                       note), update.update_id)
            return
        text = start_alias(text)
        cmd = Command(platform=PLATFORM, chat=str(msg.chat_id), user=str(msg.from_user.id),
                      text=text, dedupe_key=f"telegram:{update.update_id}",
                      attachments=attachments, user_name=msg.from_user.full_name,
                      reply_to=reply_to, private=private, at=msg.date,
                      reply_via=message_reply_via(msg, private))
        result = await self.core.handle(cmd)
        if result is None:
            return
        if not result.queued:  # an acknowledgement: a reaction on this very message
            self.delivery.reply(PLATFORM, str(msg.chat_id), result.reply,
                                quote="" if private and not result.reply.ack
                                else str(msg.message_id))
        if text.startswith("/join") and result.reply.ok:
            member = await self.core.member(cmd.who)
            if member is not None:
                await self.menus.set_member_menu(cmd.user, member.role)

    def keep(self, work: Coroutine[Any, Any, None], update_id: int | None = None) -> None:
        """Run voice work beside the loop; stop() lets it finish (briefly). The update it
        came in stays in the inbox until it is done (see Poller.process)."""
        task = asyncio.create_task(work)
        self.hearing.add(task)
        task.add_done_callback(self.hearing.discard)
        if update_id is not None:
            self.later[update_id] = task
            task.add_done_callback(lambda t: self.later.pop(update_id, None)
                                   if self.later.get(update_id) is t else None)

    async def _voice_note(self, msg: Message, update_id: int,
                          attachments: tuple[Attachment, ...], reply_to: str, private: bool,
                          note: Attachment) -> None:
        """A voice note: its words (or why there are none) go to the core with the audio."""
        assert msg.from_user is not None
        try:
            outcome = await hear(self.bot, self.voice, note,
                                 lambda ahead: self._say(msg, waiting(ahead)))
            cmd = Command(platform=PLATFORM, chat=str(msg.chat_id), user=str(msg.from_user.id),
                          text=as_command(outcome), dedupe_key=f"telegram:{update_id}",
                          attachments=attachments, user_name=msg.from_user.full_name,
                          reply_to=reply_to, private=private, at=msg.date,
                          reply_via=message_reply_via(msg, private))
            result = await self.core.handle(cmd)
        except Exception:
            log.exception("telegram: voice note of update %s failed", update_id)
            return
        if result is not None and not result.queued:
            self.delivery.reply(PLATFORM, str(msg.chat_id), result.reply,
                                quote="" if private else str(msg.message_id))

    async def on_edit(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """An edited message: a live location's next position updates the evidence quietly;
        an edited text is not taken into the log (it keeps what was first sent): say how to
        correct it."""
        msg = update.edited_message
        if msg is None or msg.from_user is None or msg.from_user.is_bot:
            return
        if not await self.first_time(update.update_id):
            return
        moved = media.moved_location(msg)
        if moved is not None:
            await self.core.handle(Command(
                platform=PLATFORM, chat=str(msg.chat_id), user=str(msg.from_user.id), text="",
                dedupe_key=f"telegram:{update.update_id}", attachments=(moved,),
                user_name=msg.from_user.full_name, private=msg.chat.type == ChatType.PRIVATE,
                at=msg.edit_date or msg.date))
            return  # never answered: a phone sends a position every few seconds
        if msg.text is None and msg.caption is None:
            return  # e.g. a caption removed: nothing was said to correct
        text = msg.text or msg.caption or ""
        private = msg.chat.type == ChatType.PRIVATE
        if not private and (not text.startswith("/") or self.for_me(text) is None):
            return  # edited chatter in a group is not the bot's business
        try:
            member = await self.core.member(f"{PLATFORM}:{msg.from_user.id}")
        except StoreUnavailable:
            return
        if member is not None:
            self._say(msg, EDITS_NOT_TAKEN)

    async def on_callback(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A button tap: the signed command it carries, answered as a toast or a message."""
        query = update.callback_query
        if query is None:
            return
        if not await self.first_time(update.update_id):
            await answer(query)
            return
        data = self.signer.verify(query.data or "")
        if data is None:  # not a button this bot issued: never run it as a command
            log.info("telegram: callback data not issued by the bot, refused (update %s)",
                     update.update_id)
            await answer(query, NOT_MY_BUTTON)
            return
        msg = query.message if isinstance(query.message, Message) else None
        chat = query.message.chat if query.message is not None else None
        chat_id = chat.id if chat is not None else query.from_user.id
        private = chat is None or chat.type == ChatType.PRIVATE
        cmd = Command(platform=PLATFORM, chat=str(chat_id), user=str(query.from_user.id),
                      text=data, dedupe_key=f"telegram:{update.update_id}",
                      user_name=query.from_user.full_name, private=private,
                      reply_via=callback_reply_via(msg, data, private))
        result = await self.core.handle(cmd)
        if result is None:
            await answer(query)
            return
        reply = result.reply
        if result.toast_only:  # the message keeps its answer ("Logged INC-7")
            await answer(query, toast(reply))
            return
        if msg is not None and data.startswith(EDIT_IN_PLACE):
            await answer(query, None if reply.ok else toast(reply))
            if not result.queued:
                self.delivery.reply(PLATFORM, str(chat_id), reply,
                                    edit=str(msg.message_id))
        elif not private and not reply.buttons and not reply.images \
                and len(" ".join(reply.lines())) <= 200:
            await answer(query, toast(reply), alert=not reply.ok)
        else:
            await answer(query)
            if not result.queued:
                self.delivery.reply(PLATFORM, str(chat_id), reply)

    async def on_member(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Someone joined or left a chat the bot administers (chat_member), or the bot itself
        was added or removed (my_chat_member): who a post there reaches."""
        change = update.chat_member or update.my_chat_member
        if change is None or not await self.first_time(update.update_id):
            return
        new = change.new_chat_member
        joined = new.status in IN_CHAT or (isinstance(new, ChatMemberRestricted)
                                           and new.is_member)
        chat = str(change.chat.id)
        if update.my_chat_member is not None:  # the bot: out of it, nobody there is reached
            if not joined:
                await self.core.chat_member(PLATFORM, chat, "", False)
            return
        await self.core.chat_member(PLATFORM, chat, str(new.user.id), joined)

    async def on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """PTB's error handler: one logged error per failed update."""
        log.error("telegram: update failed", exc_info=context.error)
