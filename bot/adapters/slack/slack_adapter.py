"""Slack adapter: the Bolt app, its HTTP / Socket Mode transports, and outbound delivery.

Inbound, every Slack request becomes a platform-neutral Command for the core (ack first,
then work): the listeners, by kind, are in bot/adapters/slack/listeners/. Outbound, the
adapter is a Sink of the one delivery layer (bot.delivery): it posts (chat.postMessage, in a
thread when asked) and edits (chat.update) natively; queues, pacing, coalescing and 429
retries (Retry-After) are the delivery layer's.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.adapters.parts import AdapterParts
from bot.adapters.slack import listeners
from bot.adapters.slack.blocks import message_payload
from bot.adapters.slack.guard import RequestGuard, host_allowed, middleware
from bot.adapters.slack.home import HomeTab
from bot.adapters.slack.signatures import StrictRequestVerification
from bot.adapters.slack.slack_faults import native
from bot.adapters.slack.slack_inbound import VIEW_DEADLINE, Inbound
from bot.adapters.slack.slack_sdklog import socket_mode_logger
from bot.core.ports import CoreAPI
from bot.delivery.sink import SENDING, Doubt, Found, Gate, RetryLater, Unsupported, no_gate
from bot.domain.messages import Reply, Respond
from bot.domain.routes import Answer, Request, Route
from bot.settings import Settings
from bot.tasks import cancel_and_wait

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
OUTBOX_EVENT = "matchday_outbox"  # message metadata naming the outbox entries it delivers


NEEDS_SECRET = ("SLACK_SIGNING_SECRET is required to serve Slack over HTTP (--http); set it, "
                "or drop --http to use Socket Mode")


def _secret(value: Any) -> str:
    return value.get_secret_value() if value is not None else ""


def serves_http(settings: Settings, http: bool) -> bool:
    """Whether Slack is served at /slack/events: asked for (--http), or no Socket Mode token.
    Socket Mode alone never mounts it."""
    return settings.slack_bot_token is not None and (http or not _secret(settings.slack_app_token))


def check_http(settings: Settings, http: bool) -> None:
    """ValueError (one line naming SLACK_SIGNING_SECRET) when Slack would be served over
    HTTP without a signing secret: anyone could forge its requests."""
    if serves_http(settings, http) and not _secret(settings.slack_signing_secret):
        raise ValueError(NEEDS_SECRET)


def _split_ref(stored: str, chat: str) -> tuple[str, str]:
    """A stored live-message id: 'ts', or 'channel/ts' when Slack posted to another channel
    than the one addressed (a user id becomes their DM channel)."""
    channel, _, ts = stored.rpartition("/")
    return (channel or chat), ts


class SlackAdapter:
    """The Slack side of the bot: a Bolt AsyncApp plus the notifier sink."""

    platform = "slack"
    pins = True
    reacts = False  # an acknowledgement is answered with its text, as ever

    def __init__(self, core: CoreAPI, parts: AdapterParts, settings: Settings, *,
                 max_retries: int = 0,
                 view_deadline: float = VIEW_DEADLINE,
                 leader: Callable[[], bool] = lambda: True) -> None:
        """`leader`: whether this replica holds the singleton lease (it refreshes Home tabs)."""
        token = _secret(settings.slack_bot_token)
        if not token:
            raise ValueError("SLACK_BOT_TOKEN is not set")
        self.app_token = _secret(settings.slack_app_token)
        signing_secret = self.signing_secret = _secret(settings.slack_signing_secret)
        if not self.app_token and not signing_secret:
            raise ValueError(NEEDS_SECRET)
        base_url = settings.slack_api_url or AsyncWebClient.BASE_URL
        if not base_url.endswith("/"):
            base_url += "/"
        self.core = core
        self.delivery = parts.delivery
        self.settings = settings
        self.gate: Gate = no_gate  # Slack paces its own extra calls (uploads): not used
        self.client = AsyncWebClient(
            token=token, base_url=base_url,
            retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=max_retries)])
        # Our own verification middleware in Bolt's slot for it (before authorize).
        self.bolt_app = AsyncApp(
            client=self.client, signing_secret=signing_secret,
            request_verification_enabled=False,
            before_authorize=StrictRequestVerification(signing_secret) if signing_secret
            else None,
            raise_error_for_unhandled_request=False)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._socket: Any = None
        self._stopped = False
        self.home = HomeTab(core, parts, settings, self.client, self._spawn, leader)
        self.inbound = Inbound(core, parts, settings, self.client, upload=self._upload,
                               spawn=self._spawn, home=self.home, view_deadline=view_deadline)
        # Before every listener: the installed workspace only, Slack's response_url hosts only.
        self.guard = RequestGuard(parts, self.client, settings.response_hosts)
        self.bolt_app.use(middleware(self.guard))
        listeners.register(self.bolt_app, self.inbound)

    # ================================================================ lifecycle
    async def start(self) -> None:
        """Connect Socket Mode when SLACK_APP_TOKEN is set (HTTP mode: routes() served)."""
        self._stopped = False
        if self.app_token and self._socket is None:
            from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

            logger, once = socket_mode_logger()  # unreachable: one line, no tracebacks
            self._socket = AsyncSocketModeHandler(self.bolt_app, self.app_token,
                                                  web_client=self.client, logger=logger)
            await self._socket.connect_async()
            once.reset()

    async def stop(self, drain_seconds: float = 1.0) -> None:
        """Disconnect, send what is queued (briefly), stop workers and background tasks."""
        self._stopped = True  # a change heard after this starts no Home tab refresh
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        try:
            await asyncio.wait_for(self.flush(), drain_seconds)
        except TimeoutError:
            log.warning("slack: stopping with unsent messages")
        await cancel_and_wait(self._tasks)
        self._tasks.clear()

    def routes(self) -> list[Route]:
        """The HTTP-mode route, for the one HTTP server (bot/web/host.py); ValueError without
        a signing secret (an unsigned route would take forged requests)."""
        if not self.signing_secret:
            raise ValueError(NEEDS_SECRET)
        return [Route("POST", EVENTS_PATH, self.handle_http)]

    async def handle_http(self, request: Request) -> Answer:
        """One Slack HTTP request through Bolt (signature checked by Bolt's middleware)."""
        bolt = await self.bolt_app.async_dispatch(AsyncBoltRequest(
            body=request.body.decode("utf-8", "replace"), query=request.query,
            headers=dict(request.headers)))
        headers = bolt.first_headers_without_set_cookie()
        kind = next((v for k, v in headers.items() if k.lower() == "content-type"), None) \
            or ("application/json" if bolt.body.startswith("{") else "text/plain")
        rest = {k: v for k, v in headers.items() if k.lower() != "content-type"}
        return Answer(bolt.status, bolt.body, rest,
                      re.sub(r";\s*charset=utf-8", "", kind))

    async def _upload(self, images: list[bytes], channel: str, thread_ts: str | None) -> None:
        for i, png in enumerate(images, 1):
            await self.client.files_upload_v2(file=png, filename=f"chart-{i}.png",
                                              title=f"Chart {i}", channel=channel,
                                              thread_ts=thread_ts)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        if self._stopped:
            if asyncio.iscoroutine(coro):
                coro.close()
            return
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ================================================================ outbound (Sink)
    @staticmethod
    def cost(reply: Reply) -> int:
        """One chat.postMessage per reply (images are uploads, counted apart by Slack)."""
        return 1

    async def flush(self) -> None:
        """Wait until everything queued so far has been sent (tests, shutdown)."""
        await self.delivery.drain()

    async def send(self, chat: str, reply: Reply, *, thread: str = "", quote: str = "") -> str:
        """chat.postMessage (in the thread of `thread`/`quote` when given), then images; the
        stored id of the message ('ts', or 'channel/ts' when Slack moved it to a DM)."""
        thread_ts = _split_ref(thread or quote, chat)[1] if (thread or quote) else None
        tagged = SENDING.get()
        extra: dict[str, Any] = {"metadata": {"event_type": OUTBOX_EVENT, "event_payload": {
            "ids": ",".join(tagged)}}} if tagged else {}
        resp = await native(self.client.chat_postMessage(channel=chat, thread_ts=thread_ts,
                                                         **message_payload(reply), **extra))
        channel, ts = resp["channel"], resp["ts"]
        if reply.images:
            await native(self._upload(reply.images, channel, thread_ts or ts))
        return ts if channel == chat else f"{channel}/{ts}"

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        """chat.update in place (images go to its thread); False when the message is gone."""
        channel, ts = _split_ref(message_id, chat)
        try:
            await native(self.client.chat_update(channel=channel, ts=ts,
                                                 **message_payload(reply)))
        except SlackApiError as exc:
            if exc.response.get("error") in ("message_not_found", "cant_update_message"):
                log.info("slack: live message %s gone from %s; posting anew", ts, chat)
                return False
            raise
        if reply.images:
            await native(self._upload(reply.images, channel, ts))
        return True

    def albumable(self, chat: str, reply: Reply) -> bool:
        """Slack has no albums: never."""
        return False

    async def send_album(self, chat: str, replies: list[Reply], *,
                         thread: str = "") -> list[str]:
        """Not supported (albumable is never True)."""
        raise Unsupported("Slack has no albums")

    async def pin(self, chat: str, message_id: str) -> None:
        """pins.add (Tier 2) for a message the bot posted (the flashpoint board)."""
        channel, ts = _split_ref(message_id, chat)
        try:
            await native(self.client.pins_add(channel=channel, timestamp=ts))
        except SlackApiError as exc:
            if exc.response.get("error") != "already_pinned":
                raise

    async def react(self, chat: str, message_id: str) -> None:
        """Not offered on Slack (reacts is False)."""
        raise Unsupported("slack: acknowledgements are answered with a message")

    async def unpin(self, chat: str, message_id: str) -> None:
        """pins.remove for a message the bot pinned."""
        channel, ts = _split_ref(message_id, chat)
        try:
            await native(self.client.pins_remove(channel=channel, timestamp=ts))
        except SlackApiError as exc:
            if exc.response.get("error") not in ("no_pin", "message_not_found"):
                raise

    async def respond(self, chat: str, via: Respond, reply: Reply) -> None:
        """The ephemeral answer through the command's response_url (see
        Inbound.respond_via); when Slack no longer takes it (expired or used up), a DM to the
        person instead."""
        user, url = via.user, via.url
        if not host_allowed(url, self.settings.response_hosts):  # queued before the guard
            await self.guard.refuse(f"slack:{user}", "queued answer's response_url is not on "
                                                     "a Slack host; answering by DM")
            await self.send(user, reply)
            return
        resp = await AsyncWebhookClient(url).send_dict(
            {"response_type": "ephemeral", "replace_original": False, **message_payload(reply)})
        if resp.status_code == 429:
            raise RetryLater(float(resp.headers.get("Retry-After", 1) or 1), "slack 429")
        if resp.status_code >= 500:
            raise ConnectionError(f"slack response_url answered {resp.status_code}")
        if resp.status_code != 200:
            log.info("slack: response_url refused (%s); answering by DM", resp.status_code)
            await self.send(user, reply)
            return
        if reply.images:
            await native(self._upload(reply.images, chat, None))

    # ================================================================ in doubt (InDoubt)
    @staticmethod
    def floor(chat: str) -> int:
        """Slack's message ids (timestamps) are not a sequence to search above: 0."""
        return 0

    @staticmethod
    def id_space(chat: str) -> str:
        """No ordered id sequence (see floor)."""
        return ""

    async def find_sent(self, chat: str, doubt: Doubt) -> Found | None:
        """The message carrying the outbox entry in its metadata, or a digest naming it
        (delivered, no message of its own); None when neither is there."""
        mid = await self._tagged(chat, doubt.tag, doubt.since, doubt.thread)
        if mid:
            return Found(mid)
        if await self._tagged(chat, "d:" + doubt.tag, doubt.since, doubt.thread):
            return Found()
        return None

    async def _tagged(self, chat: str, tag: str, since: float, thread: str = "") -> str:
        """The stored id of a message posted since `since` (epoch s) carrying outbox entry
        `tag` in its metadata, or '' (a send whose outcome a crash left unknown)."""
        channel = chat
        if chat.startswith("U"):  # a DM: its history is the IM channel's
            opened = await native(self.client.conversations_open(users=chat))
            channel = opened["channel"]["id"]
        oldest = f"{since:.6f}"
        if thread:
            ts = _split_ref(thread, chat)[1]
            resp = await native(self.client.conversations_replies(
                channel=channel, ts=ts, oldest=oldest, include_all_metadata=True, limit=200))
        else:
            resp = await native(self.client.conversations_history(
                channel=channel, oldest=oldest, include_all_metadata=True, limit=200))
        for msg in resp.get("messages", []):
            meta = msg.get("metadata") or {}
            ids = str((meta.get("event_payload") or {}).get("ids", "")).split(",")
            if meta.get("event_type") == OUTBOX_EVENT and tag in ids:
                return msg["ts"] if channel == chat else f"{channel}/{msg['ts']}"
        return ""
