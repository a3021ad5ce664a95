"""Telegram adapter: updates -> Commands, Replies/Outbounds -> Telegram messages.

python-telegram-bot 22 on the app's loop (lifecycle methods, no run_polling, no JobQueue).
Polling by default; webhook mode serves POST /telegram, checks Telegram's secret-token header
and processes the update before answering, so a failure makes Telegram retry (the core
dedupes by `telegram:<update_id>`). Outbound, the adapter is a Sink of the one delivery
layer (bot.delivery): it sends and edits natively; queues, order, coalescing, rate limits
and 429 retries are the delivery layer's.
"""

from __future__ import annotations

import asyncio
import hmac
import html
import logging
import re
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from aiohttp import web
from telegram import (
    BotCommand,
    BotCommandScopeChat,
    BotCommandScopeDefault,
    LinkPreviewOptions,
    Message,
    MessageOriginUser,
    ReplyParameters,
    Update,
)
from telegram.constants import ChatType, ParseMode
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
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
from bot.adapters.telegram.voice import hear, voice_note
from bot.core.ports import CoreAPI
from bot.core.roles import STRANGER_COMMANDS
from bot.delivery.sink import BOT_WIDE, Doubt, Found, Gate, Gone, RetryLater, no_gate
from bot.domain.messages import Attachment, Command, Outbound, Reply
from bot.domain.models import Fixture
from bot.settings import Settings
from bot.store import StoreUnavailable
from bot.store.chat_moves import ChatMoves
from bot.store.inbox import Inbox, Seen
from bot.store.outbox import Outbox
from bot.tasks import cancel_and_wait
from bot.voice.outcome import as_command
from bot.voice.pool import Transcriber

log = logging.getLogger(__name__)

PLATFORM = "telegram"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
ALLOWED_UPDATES = ["message", "edited_message", "callback_query"]
# buttons of a guided form or voice report: the prompt message becomes the answer
EDIT_IN_PLACE = ("/form", "/voice")
INCIDENT_ID = re.compile(r"\bINC-\d+\b")
COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
ANONYMOUS = ("I can't tell who is asking: turn off 'Remain anonymous' in your admin rights "
             "for this group, or message me directly.")
NOT_MY_BUTTON = "That button isn't one I can use (old or not mine). Send /help."
EDITS_NOT_TAKEN = ("Edits aren't taken into the log: it keeps what you first sent. Send the "
                   "correction as a new message (it is added to your latest report), or "
                   "/update <id> <text>; control can /amend type, severity or place.")
# Message ids above an in-doubt send's floor that are looked at. The bot's private chats
# share one sequence, so at a flashpoint dozens of other stewards' messages and replies can
# take ids between the floor and the send; those probes answer "not found" and cost no slot
# of the archive chat's limit. A supergroup has its own sequence: only its members' posts.
PROBE_SPAN = {"common": 60, "chat": 20}
ARCHIVE_GAP = 1.1  # seconds between forwards that land in the archive chat (~1/s per chat)
ARCHIVE_PER_MIN = 19  # and per minute (groups: ~20)
T = TypeVar("T")


class _RetryAfterIsWaitedOut(logging.Filter):
    """PTB's AIORateLimiter logs a 429 it does not retry (max_retries=0) as an ERROR with a
    traceback; the delivery layer waits retry_after and sends again, so it is a warning."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR and record.exc_info and \
                isinstance(record.exc_info[1], RetryAfter):
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.msg = f"{record.getMessage()}: {record.exc_info[1]} (waited out by delivery)"
            record.args, record.exc_info, record.exc_text = (), None, None
        return True


_PTB_LIMITER_LOG = logging.getLogger("telegram.ext.AIORateLimiter")
if not any(isinstance(f, _RetryAfterIsWaitedOut) for f in _PTB_LIMITER_LOG.filters):
    _PTB_LIMITER_LOG.addFilter(_RetryAfterIsWaitedOut())


class TelegramStartError(RuntimeError):
    """Telegram cannot start; the message is one line for the operator."""


class TelegramAdapter:
    """The Telegram side of the bot; also the notifier's sink for platform 'telegram'."""

    platform = PLATFORM
    pins = True

    def __init__(self, core: CoreAPI, settings: Settings, *, webhook: bool = False,
                 rate_limiter: BaseRateLimiter | None = None, max_retries: int = 0,
                 serve_port: int | None = None, poll_timeout: int = 10,
                 register_sink: bool = True, voice: Transcriber | None = None) -> None:
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
        # Lookup forwards bypass PTB's AIORateLimiter: it counts every call to a negative
        # chat id against that group's 20/min, though a forward that finds nothing posts
        # nothing; _forward paces what lands in the archive chat and takes bot-wide slots.
        self._prober = LenientBot(token.get_secret_value(), base_url=base + "/bot",
                                  base_file_url=base + "/file/bot",
                                  request=HTTPXRequest(connection_pool_size=4))
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
        self._replayed: set[int] = set()  # recorded by a crashed run: processed again
        self._runner: web.AppRunner | None = None
        self.register_sink = register_sink
        self._poller: asyncio.Task[None] | None = None
        self._polling = False
        self.gate: Gate = no_gate  # set by the delivery layer: one rate-limit slot
        self.bot_id = token.get_secret_value().split(":", 1)[0]
        self.inbox = Inbox(core.store, self.bot_id)
        self.seen = Seen(core.store)
        self.last_ids: dict[str, int] = {}  # id space -> highest message id seen there
        self._probing = asyncio.Lock()
        self._archived: list[float] = []  # when probes landed in the archive chat
        self.voice = voice  # transcription pool (None: the `.[voice]` extra is not installed)
        self._hearing: set[asyncio.Task[None]] = set()  # voice notes being transcribed

    # ---------------------------------------------------------------- lifecycle
    async def start(self, poll: bool = True) -> None:
        """Become the delivery layer's Telegram sink, connect (getMe), set command menus,
        then poll (unless `poll` is False: a standby replica, see start_polling) or accept
        webhooks."""
        if self.register_sink:
            self.core.notifier.add_sink(self)
        if self.voice is not None:  # the model loads now, beside the loop, not on a note
            warm = asyncio.create_task(self.voice.warm())
            self._hearing.add(warm)
            warm.add_done_callback(self._hearing.discard)
        if not self.settings.telegram_archive_chat:
            log.warning("MATCHDAY_TELEGRAM_ARCHIVE_CHAT is not set: a Telegram message whose "
                        "send was cut short by a crash is sent again, so people may see it "
                        "twice (set it to a private channel the bot can post in)")
        try:
            self.last_ids.update(await Outbox(self.core.store).last_ids(PLATFORM))
        except StoreUnavailable:
            pass  # learnt again from the next updates and sends
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
        """Fetch updates with getUpdates into the inbox (one replica at a time: the lease
        holder)."""
        if self._poller is not None and not self._poller.done():
            self._polling = True  # a stop still finishing its last long poll: keep going
            return
        await self.application.bot.delete_webhook()
        self._poller = asyncio.create_task(self._poll())

    async def stop_polling(self) -> None:
        """Stop fetching updates (this replica lost the polling lease); sending goes on.
        The current long poll finishes first: whatever it fetched is recorded."""
        poller, self._poller = self._poller, None
        if poller is None:
            return
        self._polling = False
        try:
            await asyncio.wait_for(asyncio.shield(poller), self.poll_timeout + 6)
        except TimeoutError:
            await cancel_and_wait([poller])
        await asyncio.gather(poller, return_exceptions=True)

    async def stop(self) -> None:
        """Stop fetching, finish queued deliveries, close HTTP sessions."""
        if self.status_lines in self.core.status_lines:
            self.core.status_lines.remove(self.status_lines)
        await self.stop_polling()
        if self._hearing:  # a steward's report: let notes being transcribed finish
            await asyncio.wait(set(self._hearing), timeout=10)
        await cancel_and_wait(self._hearing)
        if self.voice is not None:
            self.voice.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        try:
            await asyncio.wait_for(self.drain(), 10)
        except TimeoutError:
            log.warning("telegram: undelivered messages left queued at shutdown")
        if self.application.running:
            await self.application.stop()
        await self.application.shutdown()
        await self._prober.shutdown()

    # ---------------------------------------------------------------- polling (inbox)
    async def _poll(self) -> None:
        """getUpdates in a loop; a batch is recorded in the inbox before the next call
        confirms it to Telegram, then processed from the record (recorded leftovers of a
        crashed run first). PTB's Updater confirms before processing, so it is not used."""
        bot = self.application.bot
        offset: int | None = None
        first = True
        self._polling = True
        while self._polling:
            try:
                if first:
                    offset = await self.inbox.offset()
                    for raw in await self.inbox.pending():
                        self._replayed.add(int(raw["update_id"]))
                        await self._process(raw)
                    first = False
                updates = await bot.get_updates(
                    offset=offset, timeout=self.poll_timeout, allowed_updates=ALLOWED_UPDATES,
                    read_timeout=self.poll_timeout + 5)
                if not updates:
                    continue
                raws = [u.to_dict() for u in updates]  # kept even when stopping
                await self.inbox.record(raws)
                offset = updates[-1].update_id + 1
                for raw in raws:
                    await self._process(raw)
            except asyncio.CancelledError:
                raise
            except RetryAfter as exc:
                ra = exc.retry_after
                await asyncio.sleep(ra.total_seconds() if hasattr(ra, "total_seconds") else ra)
            except Exception as exc:  # network, store outage: nothing confirmed, try again
                log.warning("telegram: polling failed (%s); retrying", exc)
                await asyncio.sleep(1.0)

    async def _process(self, raw: dict[str, Any]) -> None:
        """Handle one recorded update, then forget it (a failing update is not retried
        for ever: it is logged and dropped, like PTB does)."""
        self._learn_update(raw)
        try:
            update = Update.de_json(raw, self.application.bot)
            await self.application.process_update(update)
        except Exception:
            log.exception("telegram: update %s failed", raw.get("update_id"))
        await self.inbox.done(int(raw["update_id"]))

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
            self._learn_update(data)
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
    async def _first_time(self, update_id: int) -> bool:
        """False for an update any replica already took (a webhook redelivery reaching
        another replica, a polling redelivery): shared in Redis. An update the inbox kept
        from a crashed run is processed again (the store's dedupe keeps its writes once, and
        an answer lost with the crash is given)."""
        if update_id in self._replayed:
            self._replayed.discard(update_id)
            return True
        return await self.seen.first(f"telegram:{self.bot_id}:{update_id}")

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
        self.core.notifier.reply(PLATFORM, str(msg.chat_id), Reply(text),
                                 quote="" if private else str(msg.message_id))

    def _render(self, reply: Reply, private: bool) -> Rendered:
        return render(reply, private=private, sign=self.signer.sign)

    async def _on_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        msg = update.message
        if msg is None or not await self._first_time(update.update_id):
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
        note = voice_note(attachments)
        if note is not None and not text.startswith("/"):
            # transcribed beside the loop, not in its way: later updates go on meanwhile
            task = asyncio.create_task(self._voice_note(msg, update.update_id, attachments,
                                                        reply_to, private, note))
            self._hearing.add(task)
            task.add_done_callback(self._hearing.discard)
            return
        text = self._start_alias(text)
        cmd = Command(platform=PLATFORM, chat=str(msg.chat_id), user=str(msg.from_user.id),
                      text=text, dedupe_key=f"telegram:{update.update_id}",
                      attachments=attachments, user_name=msg.from_user.full_name,
                      reply_to=reply_to, private=private, at=msg.date,
                      reply_via="send" if private else f"quote:{msg.message_id}")
        result = await self.core.handle(cmd)
        if result is None:
            return
        if not result.queued:
            self.core.notifier.reply(PLATFORM, str(msg.chat_id), result.reply,
                                     quote="" if private else str(msg.message_id))
        if text.startswith("/join") and result.reply.ok:
            member = await self.core.member(cmd.who)
            if member is not None:
                await self.set_member_menu(cmd.user, member.role)

    async def _voice_note(self, msg: Message, update_id: int,
                          attachments: tuple[Attachment, ...], reply_to: str, private: bool,
                          note: Attachment) -> None:
        """A voice note: its words (or why there are none) go to the core with the audio."""
        assert msg.from_user is not None
        try:
            outcome = await hear(self.application.bot, self.voice, note)
            cmd = Command(platform=PLATFORM, chat=str(msg.chat_id), user=str(msg.from_user.id),
                          text=as_command(outcome), dedupe_key=f"telegram:{update_id}",
                          attachments=attachments, user_name=msg.from_user.full_name,
                          reply_to=reply_to, private=private, at=msg.date,
                          reply_via="send" if private else f"quote:{msg.message_id}")
            result = await self.core.handle(cmd)
        except Exception:
            log.exception("telegram: voice note of update %s failed", update_id)
            return
        if result is not None and not result.queued:
            self.core.notifier.reply(PLATFORM, str(msg.chat_id), result.reply,
                                     quote="" if private else str(msg.message_id))

    async def _on_edit(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """An edited message: a live location's next position updates the evidence quietly;
        an edited text is not taken into the log (it keeps what was first sent): say how to
        correct it."""
        msg = update.edited_message
        if msg is None or msg.from_user is None or msg.from_user.is_bot:
            return
        if not await self._first_time(update.update_id):
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
        if not await self._first_time(update.update_id):
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
                      user_name=query.from_user.full_name, private=private,
                      reply_via=_callback_reply_via(msg, data, private))
        result = await self.core.handle(cmd)
        if result is None:
            await self._answer(query)
            return
        reply = result.reply
        if result.toast_only:  # the message keeps its answer ("Logged INC-7")
            await self._answer(query, toast(reply))
            return
        if msg is not None and data.startswith(EDIT_IN_PLACE):
            await self._answer(query, None if reply.ok else toast(reply))
            if not result.queued:
                self.core.notifier.reply(PLATFORM, str(chat_id), reply,
                                         edit=str(msg.message_id))
        elif not private and not reply.buttons and not reply.images \
                and len(" ".join(reply.lines())) <= 200:
            await self._answer(query, toast(reply), alert=not reply.ok)
        else:
            await self._answer(query)
            if not result.queued:
                self.core.notifier.reply(PLATFORM, str(chat_id), reply)

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

    # ---------------------------------------------------------------- outbound (Sink)
    @staticmethod
    def cost(reply: Reply) -> int:
        """How many Telegram messages a reply takes (the rate limiter counts them)."""
        return (len(split_html(reply.title, reply.text)) + len(reply.images)
                + (1 if reply.request_location else 0))

    async def _next(self, chat_id: int | str) -> None:
        """Before each message after the first of one reply: the delivery layer's go."""
        await self.gate(PLATFORM, str(chat_id))

    async def drain(self) -> None:
        """Wait until everything queued for delivery has gone out (tests, shutdown)."""
        await self.core.notifier.drain()

    async def send(self, chat: str, reply: Reply, *, thread: str = "", quote: str = "") -> str:
        """Send chunks (keyboard on the last), then images, then the evidence itself (under
        the line); the first message's id. Sent to the chat's current id (ChatMoves); a chat
        Telegram moved meanwhile is recorded and sent to at its new id. Never retried here on
        a network error (the server may have it); a 429 is RetryLater."""
        now = await self.moves.resolve(PLATFORM, chat)
        try:
            return await self._send_to(now, reply, thread or quote, private=_private(chat))
        except ChatMigrated as exc:
            moved = await self.chat_moved(now, str(exc.new_chat_id))
            return await self._send_to(moved, reply, thread or quote, private=_private(chat))

    async def _send_to(self, chat: str, reply: Reply, mid: str, *, private: bool) -> str:
        chat_id = _chat_id(chat)
        r = self._render(reply, private)
        reply_to = ReplyParameters(int(mid), allow_sending_without_reply=True) if mid else None
        shown = media.captioned(reply, r.chunks)
        if shown is not None:  # one message: the evidence itself, its line as the caption
            msg = await _native(media.show_captioned(self.application.bot, chat_id, shown,
                                                     r.chunks[0], reply_to))
            self._learn(str(chat_id), msg.message_id)
            return str(msg.message_id)
        sent = await _native(self._send(chat_id, r, reply.images, reply_to))
        if reply.media and sent:  # the evidence itself, under its line
            await self._next(chat_id)
            await _native(media.show(self.application.bot, chat_id, reply.media,
                                     ReplyParameters(sent[0].message_id,
                                                     allow_sending_without_reply=True)))
        return str(sent[0].message_id) if sent else ""

    def albumable(self, chat: str, reply: Reply) -> bool:
        """Whether a reply is one photo or video with its text as the caption: such replies
        to one chat can go together as an album (`send_album`)."""
        shown = media.captioned(reply, self._render(reply, _private(chat)).chunks)
        return shown is not None and shown.kind in media.ALBUM

    async def send_album(self, chat: str, replies: list[Reply], *, thread: str = "") -> list[str]:
        """Send 2-10 albumable replies as one album under message `thread`; each one's id.
        At the chat's current id, like send."""
        now = await self.moves.resolve(PLATFORM, chat)
        try:
            return await self._album_to(now, replies, thread, private=_private(chat))
        except ChatMigrated as exc:
            moved = await self.chat_moved(now, str(exc.new_chat_id))
            return await self._album_to(moved, replies, thread, private=_private(chat))

    async def _album_to(self, chat: str, replies: list[Reply], mid: str, *,
                        private: bool) -> list[str]:
        chat_id = _chat_id(chat)
        items = []
        for reply in replies:
            chunks = self._render(reply, private).chunks
            shown = media.captioned(reply, chunks)
            if shown is None or shown.kind not in media.ALBUM:
                raise ValueError("not an album item")  # the caller asked albumable first
            items.append((shown, chunks[0]))
        reply_to = ReplyParameters(int(mid), allow_sending_without_reply=True) if mid else None
        sent = await _native(media.show_album(self.application.bot, chat_id, items, reply_to))
        for m in sent:
            self._learn(str(chat_id), m.message_id)
        return [str(m.message_id) for m in sent]

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        """Edit in place; what does not fit (more chunks, the location key, images) follows
        as new messages. False when the message is gone. At the chat's current id, like
        send."""
        now = await self.moves.resolve(PLATFORM, chat)
        try:
            return await self._edit_at(now, message_id, reply, private=_private(chat))
        except ChatMigrated as exc:
            moved = await self.chat_moved(now, str(exc.new_chat_id))
            return await self._edit_at(moved, message_id, reply, private=_private(chat))

    async def pin(self, chat: str, message_id: str) -> None:
        """Pin a message (the flashpoint board) quietly; Telegram counts it like a message."""
        now = await self.moves.resolve(PLATFORM, chat)
        try:
            await _native(self.application.bot.pin_chat_message(
                _chat_id(now), int(message_id), disable_notification=True))
        except BadRequest as exc:  # e.g. not an admin here: the board still works unpinned
            log.warning("telegram: board not pinned in %s: %s", chat, exc)

    async def unpin(self, chat: str, message_id: str) -> None:
        """Unpin a message the bot pinned."""
        now = await self.moves.resolve(PLATFORM, chat)
        try:
            await _native(self.application.bot.unpin_chat_message(
                _chat_id(now), message_id=int(message_id)))
        except BadRequest as exc:  # unpinned by hand meanwhile: nothing left to do
            log.info("telegram: board not unpinned in %s: %s", chat, exc)

    async def _edit_at(self, chat: str, message_id: str, reply: Reply, *,
                       private: bool) -> bool:
        chat_id = _chat_id(chat)
        r = self._render(reply, private)
        if not await _native(self._edit(chat_id, int(message_id), r)):
            return False
        rest = Rendered(r.chunks[1:], r.keyboard, r.location_keyboard)
        if rest.chunks:
            await self._next(chat_id)
            await _native(self._send(chat_id, rest, reply.images))
            return True
        if r.location_keyboard is not None:
            await self._next(chat_id)
            await _native(self.application.bot.send_message(
                chat_id, "Or tap 📍 below to share your location.",
                reply_markup=r.location_keyboard))
        for image in reply.images:
            await self._next(chat_id)
            await _native(self.application.bot.send_photo(chat_id, image))
        return True

    async def _send(self, chat_id: int | str, r: Rendered, images: list[bytes],
                    quote: ReplyParameters | None = None) -> list[Message]:
        bot = self.application.bot
        sent: list[Message] = []
        last = len(r.chunks) - 1
        for i, chunk in enumerate(r.chunks):
            markup: Any = None
            if i == last:
                markup = r.keyboard or r.location_keyboard
            if i:
                await self._next(chat_id)
            sent.append(await bot.send_message(
                chat_id, chunk, parse_mode=ParseMode.HTML, reply_markup=markup,
                reply_parameters=quote if i == 0 else None, link_preview_options=NO_PREVIEW))
        if r.keyboard is not None and r.location_keyboard is not None:
            await self._next(chat_id)
            sent.append(await bot.send_message(chat_id, "Or tap 📍 below to share your location.",
                                               reply_markup=r.location_keyboard))
        for image in images:
            await self._next(chat_id)
            sent.append(await bot.send_photo(chat_id, image))
        for m in sent:
            self._learn(str(chat_id), m.message_id)
        return sent

    async def _edit(self, chat_id: int | str, message_id: int, r: Rendered) -> bool:
        """Edit a message's first chunk in place; False when it is gone."""
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
        return True

    # ---------------------------------------------------------------- sends left in doubt
    # Message ids only grow within a chat: sequential in a supergroup or channel, from the
    # bot's one sequence across its private chats and basic groups. The highest id known
    # when a send begins is recorded with its in-flight mark (`floor`); after a crash the
    # send, if it happened, is one of the next few ids, which forwardMessage can show.
    @staticmethod
    def id_space(chat: str) -> str:
        """Which message-id sequence a chat's messages take their ids from."""
        return chat if chat.startswith("-100") else "common"

    def floor(self, chat: str) -> int:
        """The highest message id this process knows in the chat's id space (0: none)."""
        return self.last_ids.get(self.id_space(chat), 0)

    def _learn(self, chat: str, mid: int) -> None:
        space = self.id_space(chat)
        if mid > self.last_ids.get(space, 0):
            self.last_ids[space] = mid

    def _learn_update(self, raw: Any) -> None:
        """An update's message ids raise what is known of its chat's sequence."""
        if not isinstance(raw, dict):
            return
        for key in ("message", "edited_message", "callback_query"):
            msg = raw.get(key)
            if isinstance(msg, dict) and key == "callback_query":
                msg = msg.get("message")
            if isinstance(msg, dict) and isinstance(msg.get("chat"), dict) and \
                    isinstance(msg.get("message_id"), int):
                self._learn(str(msg["chat"].get("id")), msg["message_id"])

    async def find_sent(self, chat: str, doubt: Doubt) -> Found | None:
        """The send among the ids above its floor (see probe_sent); an edit is not looked
        up (it is simply redone)."""
        if doubt.edit:
            return None
        mid = await self.probe_sent(chat, doubt.floor, doubt.reply)
        return Found(mid) if mid else None

    async def probe_sent(self, chat: str, floor: int, reply: Reply) -> str:
        """The id of the bot's message with this reply's text among the PROBE_SPAN ids above
        `floor` in the chat, or '' (not there, or no archive chat to look with). Each
        candidate is forwarded into the archive chat: read-only for the chat itself."""
        archive = self.settings.telegram_archive_chat
        if not archive or floor <= 0:
            return ""
        now = await self.moves.resolve(PLATFORM, chat)
        want = _plain(self._render(reply, _private(chat)).chunks[0])
        async with self._probing:
            span = PROBE_SPAN["common" if self.id_space(now) == "common" else "chat"]
            for mid in range(floor + 1, floor + 1 + span):
                copy = await self._forward(archive, now, mid)
                if copy is None:
                    continue
                origin = copy.forward_origin
                if isinstance(origin, MessageOriginUser) and \
                        origin.sender_user.id == self.application.bot.id and \
                        (copy.text or copy.caption or "").strip() == want:
                    self._learn(now, mid)
                    log.info("telegram: a send left in doubt is in %s, %d above its floor",
                             now, mid - floor)
                    return str(mid)
        return ""

    async def _forward(self, archive: str, chat: str, mid: int) -> Message | None:
        """Forward one message into the archive chat (None: no such message in `chat`),
        paced within the archive chat's limits; a 429 is waited out."""
        bot = self._prober
        await bot.initialize()  # once: later calls return at once
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
                copy = await bot.forward_message(_chat_id(archive), _chat_id(chat), mid,
                                                 disable_notification=True)
            except RetryAfter as exc:
                ra = exc.retry_after
                await asyncio.sleep(ra.total_seconds() if hasattr(ra, "total_seconds") else ra)
                continue
            except BadRequest as exc:
                why = str(exc).lower()
                if "message to forward not found" in why or "message_id_invalid" in why:
                    return None
                raise
            self._archived.append(time.monotonic())
            return copy


def _plain(text: str) -> str:
    """What a message sent with parse_mode HTML reads as: its text without the markup."""
    return html.unescape(re.sub(r"<[^<>]+>", "", text)).strip()


def _callback_reply_via(msg: Message | None, data: str, private: bool) -> str:
    """How a button's answer goes out: the form prompt becomes it, or a new message in a
    private chat; in a group it may be a toast, which the adapter decides (not queued)."""
    if msg is not None and data.startswith(EDIT_IN_PLACE):
        return f"edit:{msg.message_id}"
    return "send" if private else ""


def _chat_id(chat: str) -> int | str:
    return int(chat) if chat.lstrip("-").isdigit() else chat


def _private(chat: str) -> bool:
    return not chat.startswith(("-", "@"))


async def _native(call: Awaitable[T]) -> T:
    """A Bot API call with Telegram's errors in the delivery layer's terms."""
    try:
        return await call
    except RetryAfter as exc:
        ra = exc.retry_after
        raise RetryLater(ra.total_seconds() if hasattr(ra, "total_seconds") else float(ra),
                         "telegram 429") from None
    except Forbidden as exc:
        raise Gone(str(exc)) from None
    except (TimedOut, NetworkError) as exc:
        raise ConnectionError(str(exc)) from None


def telegram_adapter(core: CoreAPI, settings: Settings, *, webhook: bool = False,
                     serve_port: int | None = None) -> TelegramAdapter | None:
    """The adapter when TELEGRAM_BOT_TOKEN is set (registered as the core's Telegram sink),
    else None. The caller awaits start() and, at exit, stop()."""
    if settings.telegram_bot_token is None:
        return None
    from bot.voice.pool import transcriber_for
    from bot.voice.suggest import prompt_for

    voice = transcriber_for(settings.stt_model, prompt_for(list(core.grounds.values())),
                            workers=settings.stt_workers, queue=settings.stt_queue,
                            max_s=settings.stt_max_seconds)
    return TelegramAdapter(core, settings, webhook=webhook, serve_port=serve_port, voice=voice)

