"""Telegram adapter: updates -> Commands, Replies/Outbounds -> Telegram messages.

python-telegram-bot 22 on the app's loop (lifecycle methods, no run_polling, no JobQueue).
Polling by default; webhook mode serves POST /telegram, checks Telegram's secret-token header
and processes the update before answering, so a failure makes Telegram retry (the core
dedupes by `telegram:<update_id>`). Outbound messages go through one worker per chat, so a
live message (an incident card) is sent once and then edited in place, in order, and the
sender's reply never waits for the fan-out to control rooms.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from aiohttp import web
from telegram import (
    BotCommand,
    BotCommandScopeChat,
    BotCommandScopeDefault,
    LinkPreviewOptions,
    Message,
    ReplyParameters,
    Update,
)
from telegram.constants import ChatType, ParseMode
from telegram.error import BadRequest, ChatMigrated, Forbidden, TelegramError
from telegram.ext import (
    AIORateLimiter,
    Application,
    ApplicationBuilder,
    BaseRateLimiter,
    CallbackQueryHandler,
    ContextTypes,
    MessageHandler,
    filters,
)
from telegram.request import HTTPXRequest

from bot.adapters.telegram import media
from bot.adapters.telegram.callbacks import CallbackSigner
from bot.adapters.telegram.render import Rendered, render, split_html, toast
from bot.adapters.telegram.updates import LenientBot, parse_update
from bot.core.messages import Command, Outbound, Reply
from bot.core.roles import STRANGER_COMMANDS
from bot.domain.models import Fixture
from bot.store import StoreUnavailable
from bot.store.chat_moves import ChatMoves

log = logging.getLogger(__name__)

PLATFORM = "telegram"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
ALLOWED_UPDATES = ["message", "edited_message", "callback_query"]
EDIT_IN_PLACE = ("/form",)  # buttons of a guided form: the prompt message becomes the answer
INCIDENT_ID = re.compile(r"\bINC-\d+\b")
COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
ANONYMOUS = ("I can't tell who is asking: turn off 'Remain anonymous' in your admin rights "
             "for this group, or message me directly.")
NOT_MY_BUTTON = "That button isn't one I can use (old or not mine). Send /help."
EDITS_NOT_TAKEN = ("Edits aren't taken into the log: it keeps what you first sent. Send the "
                   "correction as a new message (it is added to your latest report), or "
                   "/update <id> <text>; control can /amend type, severity or place.")
Job = Callable[[], Awaitable[Any]]


class TelegramStartError(RuntimeError):
    """Telegram cannot start; the message is one line for the operator."""


class TelegramAdapter:
    """The Telegram side of the bot; also the notifier's sink for platform 'telegram'."""

    platform = PLATFORM

    def __init__(self, core: Any, settings: Any, *, webhook: bool = False,
                 rate_limiter: BaseRateLimiter | None = None, max_retries: int = 3,
                 serve_port: int | None = None, poll_timeout: int = 10,
                 register_sink: bool = True) -> None:
        token = settings.telegram_bot_token
        if token is None or not token.get_secret_value():
            raise TelegramStartError("TELEGRAM_BOT_TOKEN is not set")
        if webhook and not settings.telegram_webhook_secret:
            raise TelegramStartError("webhook mode needs TELEGRAM_WEBHOOK_SECRET (Telegram "
                                     "sends it back in every request; others are refused)")
        self.core = core
        self.settings = settings
        self.webhook = webhook
        self.serve_port = serve_port
        self.poll_timeout = poll_timeout
        base = (settings.telegram_base_url or "https://api.telegram.org").rstrip("/")
        bot = LenientBot(token.get_secret_value(), base_url=base + "/bot",
                         base_file_url=base + "/file/bot",
                         request=HTTPXRequest(connection_pool_size=256),
                         get_updates_request=HTTPXRequest(connection_pool_size=1),
                         rate_limiter=rate_limiter or AIORateLimiter(max_retries=max_retries))
        builder = ApplicationBuilder().bot(bot).job_queue(None)
        if webhook:
            builder = builder.updater(None)
        self.application: Application = builder.build()
        self.application.add_handler(CallbackQueryHandler(self._on_callback))
        self.application.add_handler(MessageHandler(filters.UpdateType.MESSAGE, self._on_message))
        self.application.add_handler(MessageHandler(filters.UpdateType.EDITED_MESSAGE,
                                                    self._on_edit))
        self.application.add_error_handler(self._on_error)
        self.signer = CallbackSigner(token.get_secret_value())
        self.moves = ChatMoves(core.store)
        self.username = ""  # the bot's own @username, from getMe at start
        self._seen: OrderedDict[int, None] = OrderedDict()
        self._queues: dict[str, asyncio.Queue[Job]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._runner: web.AppRunner | None = None
        if register_sink:
            core.notifier.add_sink(self)

    # ---------------------------------------------------------------- lifecycle
    async def start(self, poll: bool = True) -> None:
        """Connect (getMe), set command menus, then poll (unless `poll` is False: a standby
        replica, see start_polling) or accept webhooks."""
        try:
            await self.application.initialize()
        except TelegramError as exc:
            raise TelegramStartError(f"Telegram refused the bot token or is unreachable: "
                                     f"{exc}") from None
        self.username = self.application.bot.username or ""
        if self.status_lines not in self.core.status_lines:
            self.core.status_lines.append(self.status_lines)
        await self.set_menus()
        await self.application.start()
        if self.webhook:
            url = self.settings.telegram_webhook_url
            if url:
                await self.application.bot.set_webhook(
                    url, secret_token=self.settings.telegram_webhook_secret.get_secret_value(),
                    allowed_updates=ALLOWED_UPDATES)
            else:
                log.warning("TELEGRAM_WEBHOOK_URL not set: not calling setWebhook")
            if self.serve_port is not None:
                self._runner = web.AppRunner(self.web_app(), access_log=None)
                await self._runner.setup()
                await web.TCPSite(self._runner, "0.0.0.0", self.serve_port).start()
        elif poll:
            await self.start_polling()

    async def start_polling(self) -> None:
        """Fetch updates with getUpdates (one replica at a time: the lease holder)."""
        updater = self.application.updater
        assert updater is not None
        if not updater.running:
            await updater.start_polling(timeout=self.poll_timeout,
                                        allowed_updates=ALLOWED_UPDATES)

    async def stop_polling(self) -> None:
        """Stop fetching updates (this replica lost the polling lease); sending goes on."""
        updater = self.application.updater
        if updater is not None and updater.running:
            await updater.stop()

    async def stop(self) -> None:
        """Stop fetching, finish queued deliveries, close HTTP sessions."""
        if self.status_lines in self.core.status_lines:
            self.core.status_lines.remove(self.status_lines)
        updater = self.application.updater
        if updater is not None and updater.running:
            await updater.stop()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        try:
            await asyncio.wait_for(self.drain(), 10)
        except TimeoutError:
            log.warning("telegram: undelivered messages dropped at shutdown")
        for task in self._workers.values():
            task.cancel()
        self._workers.clear()
        self._queues.clear()
        if self.application.running:
            await self.application.stop()
        await self.application.shutdown()

    async def drain(self) -> None:
        """Wait until every queued outbound message has been delivered (or failed)."""
        await asyncio.gather(*(q.join() for q in list(self._queues.values())))

    # ---------------------------------------------------------------- webhook
    def add_routes(self, app: web.Application, path: str = "/telegram") -> None:
        """Mount the webhook endpoint on an existing aiohttp application."""
        app.router.add_post(path, self.handle_webhook)

    def web_app(self, path: str = "/telegram") -> web.Application:
        """A standalone aiohttp application serving the webhook at `path`."""
        app = web.Application(client_max_size=1024 * 1024)
        self.add_routes(app, path)
        return app

    async def handle_webhook(self, request: web.Request) -> web.Response:
        """One update from Telegram; refused (403) without the right secret-token header."""
        secret = self.settings.telegram_webhook_secret
        got = request.headers.get(SECRET_HEADER, "")
        if not secret or not hmac.compare_digest(got.encode(), secret.get_secret_value().encode()):
            return web.Response(status=403, text="forbidden")
        if not self.application.running:  # Telegram retries later
            return web.Response(status=503, text="starting")
        try:
            data = await request.json()
        except ValueError:
            data = None
        # Not JSON, or fields this library version cannot read: logged once and answered
        # 200, since a 4xx makes Telegram redeliver the same update again and again.
        update = parse_update(data, self.application.bot)
        if update is not None:
            await self.application.process_update(update)
        return web.Response(text="ok")

    # ---------------------------------------------------------------- menus
    def bot_commands(self, names: list[str]) -> list[BotCommand]:
        """Menu entries for command names, described by the handlers' summaries."""
        out = []
        for name in names:
            spec = self.core.registry.specs.get(name)
            if spec is None or spec.hidden or not COMMAND_NAME.fullmatch(name):
                continue
            out.append(BotCommand(name, (spec.summary or name)[:256]))
        return out[:100]

    async def set_menus(self) -> None:
        """Strangers see help and join; each roster member on Telegram sees their role's."""
        bot = self.application.bot
        try:
            await bot.set_my_commands(self.bot_commands(sorted(STRANGER_COMMANDS, key=len)),
                                      scope=BotCommandScopeDefault())
        except TelegramError as exc:
            log.warning("telegram: default command menu not set: %s", exc)
        members = [m for m in self.core.roster.values() if m.platform == PLATFORM]
        await asyncio.gather(*(self.set_member_menu(m.user, m.role) for m in members))

    async def set_member_menu(self, user: str, role: str) -> None:
        """One person's command menu (their private chat with the bot)."""
        try:
            await self.application.bot.set_my_commands(
                self.bot_commands(self.core.roles.commands_for(role)),
                scope=BotCommandScopeChat(int(user)))
        except (TelegramError, ValueError) as exc:  # e.g. they never opened the bot
            log.info("telegram: menu for %s not set: %s", user, exc)

    # ---------------------------------------------------------------- inbound
    def _first_time(self, update_id: int) -> bool:
        """False for an update this process already handled (polling redelivery)."""
        if update_id in self._seen:
            return False
        self._seen[update_id] = None
        if len(self._seen) > 10_000:
            self._seen.popitem(last=False)
        return True

    async def _incident_of(self, chat_id: int, replied: Message) -> str:
        """The incident a replied-to bot message is about ('' if none)."""
        found = await self.core.store.ref_of_message(PLATFORM, str(chat_id),
                                                     str(replied.message_id))
        if found and found[1].startswith("INC-"):
            return found[1]
        m = INCIDENT_ID.search(replied.text or replied.caption or "")
        return m.group(0) if m else ""

    def _for_me(self, text: str) -> str | None:
        """The text with this bot's /cmd@botname suffix removed; None when the command is
        addressed to another bot (shared groups: /status@other_bot is not ours)."""
        if not text.startswith("/"):
            return text
        word, sep, rest = text.partition(" ")
        name, at, bot = word.partition("@")
        if not at:
            return text
        if bot.lower() != self.username.lower():
            return None
        return name + sep + rest

    @staticmethod
    def _start_alias(text: str) -> str:
        """/start (first contact) is /help; /start <code> (an invite deep link) is /join."""
        word, _, rest = text.partition(" ")
        if word.lower() != "/start":
            return text
        return f"/join {rest.strip()}" if rest.strip() else "/help"

    def _say(self, msg: Message, text: str) -> None:
        """A short plain answer to a message (quoted in groups)."""
        private = msg.chat.type == ChatType.PRIVATE
        quote = None if private else ReplyParameters(msg.message_id,
                                                     allow_sending_without_reply=True)
        self.enqueue(str(msg.chat_id), partial(
            self._send, msg.chat_id, self._render(Reply(text), private), [], quote))

    def _render(self, reply: Reply, private: bool) -> Rendered:
        return render(reply, private=private, sign=self.signer.sign)

    async def _on_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        msg = update.message
        if msg is None or not self._first_time(update.update_id):
            return
        if msg.migrate_to_chat_id or msg.migrate_from_chat_id:  # group -> supergroup
            old, new = ((msg.chat_id, msg.migrate_to_chat_id) if msg.migrate_to_chat_id
                        else (msg.migrate_from_chat_id, msg.chat_id))
            await self.chat_moved(str(old), str(new))
            return
        text = msg.text or msg.caption or ""
        if msg.sender_chat is not None and msg.sender_chat.id == msg.chat_id:
            # An anonymous group admin: Telegram hides who it is (from = GroupAnonymousBot).
            if text.startswith("/") and self._for_me(text) is not None:
                self._say(msg, ANONYMOUS)
            return
        if msg.from_user is None or msg.from_user.is_bot:
            return
        addressed = self._for_me(text)
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
        text = self._start_alias(text)
        cmd = Command(platform=PLATFORM, chat=str(msg.chat_id), user=str(msg.from_user.id),
                      text=text, dedupe_key=f"telegram:{update.update_id}",
                      attachments=attachments, user_name=msg.from_user.full_name,
                      reply_to=reply_to, private=private, at=msg.date)
        result = await self.core.handle(cmd)
        if result is None:
            return
        quote = None if private else ReplyParameters(msg.message_id,
                                                     allow_sending_without_reply=True)
        self.enqueue(str(msg.chat_id), partial(
            self._send, msg.chat_id, self._render(result.reply, private),
            result.reply.images, quote))
        if text.startswith("/join") and result.reply.ok:
            member = await self.core.member(cmd.who)
            if member is not None:
                await self.set_member_menu(cmd.user, member.role)

    async def _on_edit(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """An edited message: the log keeps what was first sent; say how to correct it."""
        msg = update.edited_message
        if msg is None or msg.from_user is None or msg.from_user.is_bot:
            return
        if not self._first_time(update.update_id):
            return
        text = msg.text or msg.caption or ""
        private = msg.chat.type == ChatType.PRIVATE
        if not private and (not text.startswith("/") or self._for_me(text) is None):
            return  # edited chatter in a group is not the bot's business
        try:
            member = await self.core.member(f"{PLATFORM}:{msg.from_user.id}")
        except StoreUnavailable:
            return
        if member is not None:
            self._say(msg, EDITS_NOT_TAKEN)

    async def _on_callback(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is None:
            return
        if not self._first_time(update.update_id):
            await self._answer(query)
            return
        data = self.signer.verify(query.data or "")
        if data is None:  # not a button this bot issued: never run it as a command
            log.info("telegram: callback data not issued by the bot, refused (update %s)",
                     update.update_id)
            await self._answer(query, NOT_MY_BUTTON)
            return
        msg = query.message if isinstance(query.message, Message) else None
        chat = query.message.chat if query.message is not None else None
        chat_id = chat.id if chat is not None else query.from_user.id
        private = chat is None or chat.type == ChatType.PRIVATE
        cmd = Command(platform=PLATFORM, chat=str(chat_id), user=str(query.from_user.id),
                      text=data, dedupe_key=f"telegram:{update.update_id}",
                      user_name=query.from_user.full_name, private=private)
        result = await self.core.handle(cmd)
        if result is None:
            await self._answer(query)
            return
        reply = result.reply
        rendered = self._render(reply, private)
        if msg is not None and data.startswith(EDIT_IN_PLACE):
            await self._answer(query, None if reply.ok else toast(reply))
            self.enqueue(str(chat_id), partial(self._edit_or_send, chat_id, msg.message_id,
                                               rendered, reply.images))
        elif not private and not reply.buttons and not reply.images \
                and len(" ".join(reply.lines())) <= 200:
            await self._answer(query, toast(reply), alert=not reply.ok)
        else:
            await self._answer(query)
            self.enqueue(str(chat_id), partial(self._send, chat_id, rendered, reply.images))

    # ---------------------------------------------------------------- chat moves
    async def chat_moved(self, old: str, new: str) -> str:
        """A group became a supergroup (new id): persist the override, move live-message
        references, and (the first time, on any replica) tell the control room. Returns
        the chat to send to now."""
        if await self.moves.record(PLATFORM, old, new):
            names = self._audiences_of(old)
            note = Reply(f"Telegram upgraded the {names or 'group'} chat to a supergroup: the "
                         f"bot now posts to chat {new} (was {old}). Live incident messages "
                         "continue there.", title="Chat moved")
            outs = [Outbound("control", note)]
            if "control" not in names.split(", "):
                outs.append(Outbound(f"user:{PLATFORM}:{new}", note))
            await self.core.notifier.send(outs)
            log.warning("telegram: chat %s moved to %s (group upgraded to a supergroup)",
                        old, new)
        return new

    def _audiences_of(self, chat: str) -> str:
        """The audiences (control, command…) configured with this Telegram chat."""
        chans = getattr(self.core.notifier, "channels", {})
        return ", ".join(a for a, plats in chans.items() if chat in plats.get(PLATFORM, []))

    async def status_lines(self, fx: Fixture) -> list[str]:
        """core.status_lines: chats Telegram moved (and where the bot now sends)."""
        try:
            moved = await self.moves.moved_from(PLATFORM)
        except StoreUnavailable:
            return []
        return [f"Telegram {self._audiences_of(old) or 'chat'} {old} moved to {new} "
                "(group upgraded to a supergroup)" for old, new in moved.items()]

    @staticmethod
    async def _answer(query: Any, text: str | None = None, alert: bool = False) -> None:
        try:
            await query.answer(text=text, show_alert=alert)
        except BadRequest as exc:  # too old to answer: the action still happened
            log.info("telegram: callback not answered: %s", exc)

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.error("telegram: update failed", exc_info=context.error)

    # ---------------------------------------------------------------- outbound
    @staticmethod
    def cost(out: Outbound) -> int:
        """How many Telegram messages an Outbound takes (the notifier's rate limiter asks)."""
        if out.ref:
            return 1  # usually an edit of the live message
        r = out.reply
        return len(split_html(r.title, r.text)) + len(r.images)

    async def deliver(self, out: Outbound, chats: list[str]) -> None:
        """Queue for each chat's worker (in order per chat); returns at once."""
        for chat in chats:
            self.enqueue(chat, partial(self.deliver_now, out, chat))

    def enqueue(self, chat: str, job: Job) -> None:
        """Run a send/edit after everything already queued for this chat.

        One worker per chat keeps a chat's messages in order (a card is sent before it is
        edited; a reply before the next), while update handling never waits for Telegram.
        """
        queue = self._queues.get(chat)
        if queue is None:
            queue = self._queues[chat] = asyncio.Queue()
            self._workers[chat] = asyncio.create_task(self._worker(chat, queue))
        queue.put_nowait(job)

    @staticmethod
    async def _worker(chat: str, queue: asyncio.Queue[Job]) -> None:
        while True:
            job = await queue.get()
            try:
                await job()
            except Exception:
                log.exception("telegram: delivery to %s failed", chat)
            finally:
                queue.task_done()

    async def deliver_now(self, out: Outbound, chat: str) -> None:
        """Send to one chat (at its current id: ChatMoves.resolve), or edit the live message
        `out.ref` names in place; a chat Telegram moved is retried once at its new id."""
        chat = await self.moves.resolve(PLATFORM, chat)
        try:
            await self._deliver_to(out, chat)
        except ChatMigrated as exc:
            await self._deliver_to(out, await self.chat_moved(chat, str(exc.new_chat_id)))

    async def _deliver_to(self, out: Outbound, chat: str) -> None:
        store = self.core.store
        chat_id: int | str = int(chat) if chat.lstrip("-").isdigit() else chat
        rendered = self._render(out.reply, not chat.startswith(("-", "@")))
        if out.ref:
            mid = await store.message_ref(out.fixture, PLATFORM, chat, out.ref)
            if mid and await self._edit(chat_id, int(mid), rendered):
                return
        quote = None
        thread = out.thread
        if thread:
            tmid = await store.message_ref(out.fixture, PLATFORM, chat, thread)
            if tmid:
                quote = ReplyParameters(int(tmid), allow_sending_without_reply=True)
        sent = await self._send(chat_id, rendered, out.reply.images, quote)
        if out.reply.media and sent:  # the evidence itself, under its line
            await media.show(self.application.bot, chat_id, out.reply.media,
                             ReplyParameters(sent[0].message_id,
                                             allow_sending_without_reply=True))
        if out.ref and sent:
            await store.set_message_ref(out.fixture, PLATFORM, chat, out.ref,
                                        str(sent[0].message_id))

    async def _send(self, chat_id: int | str, r: Rendered, images: list[bytes],
                    quote: ReplyParameters | None = None) -> list[Message]:
        """Send chunks (keyboard on the last), then images. Never retried here on a network
        error: the server may have received it (AIORateLimiter retries RetryAfter only)."""
        bot = self.application.bot
        sent: list[Message] = []
        last = len(r.chunks) - 1
        for i, chunk in enumerate(r.chunks):
            markup: Any = None
            if i == last:
                markup = r.keyboard or r.location_keyboard
            sent.append(await bot.send_message(
                chat_id, chunk, parse_mode=ParseMode.HTML, reply_markup=markup,
                reply_parameters=quote if i == 0 else None, link_preview_options=NO_PREVIEW))
        if r.keyboard is not None and r.location_keyboard is not None:
            sent.append(await bot.send_message(chat_id, "Or tap 📍 below to share your location.",
                                               reply_markup=r.location_keyboard))
        for image in images:
            sent.append(await bot.send_photo(chat_id, image))
        return sent

    async def _edit(self, chat_id: int | str, message_id: int, r: Rendered) -> bool:
        """Edit a message in place; False when it is gone (then the caller sends anew)."""
        if len(r.chunks) > 1:
            log.warning("telegram: live message %s too long to edit whole; truncated",
                        message_id)
        try:
            await self.application.bot.edit_message_text(
                r.chunks[0], chat_id=chat_id, message_id=message_id, parse_mode=ParseMode.HTML,
                reply_markup=r.keyboard if len(r.chunks) == 1 else None,
                link_preview_options=NO_PREVIEW)
        except BadRequest as exc:
            why = str(exc).lower()
            if "not modified" in why:
                return True  # identical content: already up to date
            if "not found" in why or "can't be edited" in why:
                return False
            raise
        except Forbidden:
            raise
        return True

    async def _edit_or_send(self, chat_id: int, message_id: int, r: Rendered,
                            images: list[bytes]) -> None:
        """The form prompt becomes the next step; extra chunks, keys and images follow."""
        if not await self._edit(chat_id, message_id, r):
            await self._send(chat_id, r, images)
            return
        rest = Rendered(r.chunks[1:], r.keyboard, r.location_keyboard)
        if rest.chunks:
            await self._send(chat_id, rest, images)
            return
        if r.location_keyboard is not None:
            await self.application.bot.send_message(
                chat_id, "Or tap 📍 below to share your location.",
                reply_markup=r.location_keyboard)
        for image in images:
            await self.application.bot.send_photo(chat_id, image)


def telegram_adapter(core: Any, settings: Any, *, webhook: bool = False,
                     serve_port: int | None = None) -> TelegramAdapter | None:
    """The adapter when TELEGRAM_BOT_TOKEN is set (registered as the core's Telegram sink),
    else None. The caller awaits start() and, at exit, stop()."""
    if settings.telegram_bot_token is None:
        return None
    return TelegramAdapter(core, settings, webhook=webhook, serve_port=serve_port)

