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
import logging

from telegram.error import TelegramError
from telegram.ext import (
    AIORateLimiter,
    Application,
    ApplicationBuilder,
    BaseRateLimiter,
    CallbackQueryHandler,
    ChatMemberHandler,
    MessageHandler,
    filters,
)
from telegram.request import HTTPXRequest

from bot.adapters.parts import AdapterParts
from bot.adapters.telegram.callbacks import CallbackSigner
from bot.adapters.telegram.menus import Menus
from bot.adapters.telegram.migrations import ChatMigrations
from bot.adapters.telegram.outbound import TelegramSink
from bot.adapters.telegram.polling import ALLOWED_UPDATES, Poller
from bot.adapters.telegram.probes import MessageIds
from bot.adapters.telegram.telegram_inbound import Inbound
from bot.adapters.telegram.telegram_sdklog import quiet_waited_out_429s
from bot.adapters.telegram.updates import LenientBot
from bot.adapters.telegram.webhook import Webhook
from bot.core.ports import CoreAPI
from bot.domain.routes import Route
from bot.settings import Settings
from bot.store import StoreUnavailable
from bot.tasks import cancel_and_wait
from bot.voice.pool import Transcriber

log = logging.getLogger(__name__)

PLATFORM = "telegram"
quiet_waited_out_429s()


class TelegramStartError(RuntimeError):
    """Telegram cannot start; the message is one line for the operator."""


class TelegramAdapter:
    """The Telegram side of the bot: PTB's Application, its inbound paths (polling or the
    webhook) and the delivery layer's Telegram sink (`sink`)."""

    platform = PLATFORM

    def __init__(self, core: CoreAPI, parts: AdapterParts, settings: Settings, *,
                 webhook: bool = False,
                 rate_limiter: BaseRateLimiter | None = None, max_retries: int = 0,
                 poll_timeout: int = 10, voice: Transcriber | None = None) -> None:
        token = settings.telegram_bot_token
        if token is None or not token.get_secret_value():
            raise TelegramStartError("TELEGRAM_BOT_TOKEN is not set")
        if webhook and not settings.telegram_webhook_secret:
            raise TelegramStartError("webhook mode needs TELEGRAM_WEBHOOK_SECRET (Telegram "
                                     "sends it back in every request; others are refused)")
        self.core = core
        self.delivery = parts.delivery
        self.platform = parts.platform
        self.settings = settings
        self.webhook = webhook
        secret = token.get_secret_value()
        base = (settings.telegram_base_url or "https://api.telegram.org").rstrip("/")
        bot = LenientBot(secret, base_url=base + "/bot", base_file_url=base + "/file/bot",
                         request=HTTPXRequest(connection_pool_size=256),
                         get_updates_request=HTTPXRequest(connection_pool_size=1),
                         rate_limiter=rate_limiter or AIORateLimiter(max_retries=max_retries))
        prober = LenientBot(secret, base_url=base + "/bot", base_file_url=base + "/file/bot",
                            request=HTTPXRequest(connection_pool_size=4))
        builder = ApplicationBuilder().bot(bot).job_queue(None)
        if webhook:
            builder = builder.updater(None)
        self.application: Application = builder.build()  # type: ignore[type-arg]
        self.bot_id = secret.split(":", 1)[0]
        self.ids = MessageIds()
        moves = parts.platform.chat_moves
        self.migrations = ChatMigrations(moves, parts.delivery.send, parts.delivery.channels)
        signer = CallbackSigner(secret)
        self.sink = TelegramSink(bot, moves, signer.sign, self.migrations.chat_moved, self.ids,
                                 prober, settings.telegram_archive_chat or "")
        self.menus = Menus(bot, parts.registry.specs, parts.roles, parts.roster,
                           parts.platform.menus(self.bot_id))
        self.menus_task: asyncio.Task[None] | None = None
        self.inbound = Inbound(core, parts.delivery, parts.platform, bot, parts.platform.seen,
                               self.bot_id, signer, self.menus, self.migrations, voice)
        self.poller = Poller(self.application, parts.platform.inbox(self.bot_id), self.ids,
                             self.inbound.replayed, poll_timeout, self.inbound.later)
        hook_secret = settings.telegram_webhook_secret
        self.hook = Webhook(self.application, hook_secret.get_secret_value()
                            if hook_secret else "", self.ids)
        self.application.add_handler(CallbackQueryHandler(self.inbound.on_callback))
        self.application.add_handler(ChatMemberHandler(
            self.inbound.on_member, ChatMemberHandler.ANY_CHAT_MEMBER))
        self.application.add_handler(MessageHandler(filters.UpdateType.MESSAGE,
                                                    self.inbound.on_message))
        self.application.add_handler(MessageHandler(filters.UpdateType.EDITED_MESSAGE,
                                                    self.inbound.on_edit))
        self.application.add_error_handler(self.inbound.on_error)

    # ---------------------------------------------------------------- lifecycle
    async def start(self, poll: bool = True) -> None:
        """Connect (getMe), set command menus, then poll (unless `poll` is False: a standby
        replica, see start_polling) or accept webhooks."""
        if not self.settings.telegram_archive_chat:
            log.warning("MATCHDAY_TELEGRAM_ARCHIVE_CHAT is not set: a Telegram message whose "
                        "send was cut short by a crash is sent again, so people may see it "
                        "twice (set it to a private channel the bot can post in)")
        try:
            self.ids.last.update(await self.platform.last_ids(PLATFORM))
        except StoreUnavailable:
            pass  # learnt again from the next updates and sends
        if self.inbound.voice is not None:  # the model loads now, beside the loop, not on a note
            self.inbound.keep(self.inbound.voice.warm())
        try:
            await self.application.initialize()
        except TelegramError as exc:
            raise TelegramStartError(f"Telegram refused the bot token or is unreachable: "
                                     f"{exc}") from None
        await self.menus.set_default()
        # members' menus beside the loop: a large roster never holds the start (or reports)
        self.menus_task = asyncio.create_task(self.menus.set_members())
        await self.application.start()
        if self.webhook:
            url = self.settings.telegram_webhook_url
            if url:
                await self.application.bot.set_webhook(
                    url, secret_token=self.hook.secret, allowed_updates=ALLOWED_UPDATES)
            else:
                log.warning("TELEGRAM_WEBHOOK_URL not set: not calling setWebhook")
        elif poll:
            await self.start_polling()

    async def start_polling(self) -> None:
        """Fetch updates with getUpdates into the inbox (one replica at a time: the lease
        holder)."""
        await self.poller.start()

    async def stop_polling(self) -> None:
        """Stop fetching updates (this replica lost the polling lease); sending goes on."""
        await self.poller.stop()

    async def stop(self) -> None:
        """Stop fetching, finish queued deliveries, close HTTP sessions."""
        await self.stop_polling()
        if self.menus_task is not None:
            await cancel_and_wait([self.menus_task])
        hearing = self.inbound.hearing
        if hearing:  # a steward's report: let notes being transcribed finish
            await asyncio.wait(set(hearing), timeout=10)
        await cancel_and_wait(hearing)
        await asyncio.gather(*self.poller.finishing, return_exceptions=True)
        if self.inbound.voice is not None:
            self.inbound.voice.close()
        try:
            await asyncio.wait_for(self.drain(), 10)
        except TimeoutError:
            log.warning("telegram: undelivered messages left queued at shutdown")
        if self.application.running:
            await self.application.stop()
        await self.application.shutdown()
        await self.sink.probe.close()

    async def drain(self) -> None:
        """Wait until everything queued for delivery has gone out (tests, shutdown)."""
        await self.delivery.drain()

    def routes(self, path: str = "/telegram") -> list[Route]:
        """The webhook endpoint, for the one HTTP server (bot/web/host.py)."""
        return [Route("POST", path, self.hook.handle)]
