"""Slack adapter: slash commands, modals, live incident messages and the App Home board.

Inbound, every Slack request becomes a platform-neutral Command for the core (ack first,
then work). Outbound, the adapter is a Sink of the one delivery layer (bot.delivery): it
posts (chat.postMessage, in a thread when asked) and edits (chat.update) natively; queues,
pacing, coalescing and 429 retries (Retry-After) are the delivery layer's.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.app.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.blocks import BUTTON_PREFIX, home_view, message_payload, result_view
from bot.adapters.slack.modals import BY_CALLBACK, MODALS, FormError, values
from bot.core.messages import Attachment, Command, Reply, Result
from bot.core.ports import CoreAPI
from bot.core.roles import allowed
from bot.delivery.sink import Gone, RetryLater
from bot.settings import Settings
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
VIEW_DEADLINE = 2.5  # seconds to wait for the core before acking a submission anyway
SEEN_MAX = 10_000
MENTION = re.compile(r"^\s*<@[A-Z0-9]+>\s*")


def _secret(value: Any) -> str:
    return value.get_secret_value() if value is not None else ""


def _split_ref(stored: str, chat: str) -> tuple[str, str]:
    """A stored live-message id: 'ts', or 'channel/ts' when Slack posted to another channel
    than the one addressed (a user id becomes their DM channel)."""
    channel, _, ts = stored.rpartition("/")
    return (channel or chat), ts


class SlackAdapter:
    """The Slack side of the bot: a Bolt AsyncApp plus the notifier sink."""

    platform = "slack"

    def __init__(self, core: CoreAPI, settings: Settings, *, max_retries: int = 0,
                 view_deadline: float = VIEW_DEADLINE) -> None:
        token = _secret(settings.slack_bot_token)
        if not token:
            raise ValueError("SLACK_BOT_TOKEN is not set")
        self.app_token = _secret(settings.slack_app_token)
        signing_secret = _secret(settings.slack_signing_secret)
        if not self.app_token and not signing_secret:
            raise ValueError("SLACK_SIGNING_SECRET is required in HTTP mode "
                             "(or set SLACK_APP_TOKEN for Socket Mode)")
        base_url = settings.slack_api_url or AsyncWebClient.BASE_URL
        if not base_url.endswith("/"):
            base_url += "/"
        self.core = core
        self.settings = settings
        self.client = AsyncWebClient(
            token=token, base_url=base_url,
            retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=max_retries)])
        self.bolt_app = AsyncApp(
            client=self.client, signing_secret=signing_secret,
            request_verification_enabled=bool(signing_secret),
            raise_error_for_unhandled_request=False)
        self.view_deadline = view_deadline
        self.home_users: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._home_busy = False
        self._home_again = False
        self._socket: Any = None
        self._runner: web.AppRunner | None = None
        self._started = False
        self._register()

    # ================================================================ lifecycle
    async def start(self) -> None:
        """Become the delivery layer's Slack sink, watch for changes (Home tab), and connect
        Socket Mode when SLACK_APP_TOKEN is set (HTTP mode needs web_app() served)."""
        if not self._started:
            self.core.notifier.add_sink(self)
            self.core.hooks.append(self._on_change)
            self._started = True
        if self.app_token and self._socket is None:
            from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

            self._socket = AsyncSocketModeHandler(self.bolt_app, self.app_token,
                                                  web_client=self.client)
            await self._socket.connect_async()

    async def stop(self, drain_seconds: float = 5.0) -> None:
        """Disconnect, send what is queued (briefly), stop workers and background tasks."""
        if self._started:
            if self._on_change in self.core.hooks:
                self.core.hooks.remove(self._on_change)
            self._started = False
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        try:
            await asyncio.wait_for(self.flush(), drain_seconds)
        except TimeoutError:
            log.warning("slack: stopping with unsent messages")
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    def routes(self) -> list[web.RouteDef]:
        """The HTTP-mode route, for mounting on an existing aiohttp app."""
        return [web.post(EVENTS_PATH, self.handle_http)]

    def web_app(self) -> web.Application:
        """An aiohttp app serving POST /slack/events (HTTP mode)."""
        app = web.Application()
        app.add_routes(self.routes())
        return app

    async def serve_http(self, host: str = "0.0.0.0", port: int | None = None) -> int:
        """Run web_app() on host:port (settings.port by default; 0 = any); returns the port."""
        self._runner = web.AppRunner(self.web_app())
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, self.settings.port if port is None else port)
        await site.start()
        return site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def handle_http(self, request: web.Request) -> web.Response:
        """One Slack HTTP request through Bolt (signature checked by Bolt's middleware)."""
        bolt_resp = await self.bolt_app.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(bolt_resp)

    # ================================================================ inbound
    def _register(self) -> None:
        app = self.bolt_app
        app.command(re.compile(r"^/.+"))(self._on_command)
        app.action(re.compile(rf"^{BUTTON_PREFIX}\d+$"))(self._on_button)
        app.view(re.compile(r"^md_"))(self._on_submit)
        app.event("app_home_opened")(self._on_home_opened)
        app.event("message")(self._on_message)
        app.event("app_mention")(self._on_mention)
        app.error(self._on_error)

    async def _on_error(self, error: Exception, body: dict[str, Any]) -> None:
        log.error("slack: listener failed for %s: %r", body.get("type") or body.get("command"),
                  error, exc_info=error)

    def _first_time(self, key: str) -> bool:
        """In-process memory of dedupe keys: a retry that reaches this replica again is
        dropped before the core (the store's SET NX guards across replicas)."""
        if key in self._seen:
            return False
        self._seen[key] = None
        if len(self._seen) > SEEN_MAX:
            self._seen.popitem(last=False)
        return True

    async def _may(self, user: str, name: str) -> bool:
        """May this Slack user run this command (to decide whether to open a modal)?"""
        spec = self.core.registry.lookup(name)
        if spec is None:
            return False
        try:
            member = await self.core.member(f"slack:{user}")
        except StoreUnavailable:
            return False
        return member is not None and allowed(member.role, spec.name)

    async def _on_command(self, ack: Any, body: dict[str, Any], respond: Any,
                          client: AsyncWebClient) -> None:
        name = body.get("command", "/").lstrip("/")
        text = (body.get("text") or "").strip()
        if name == "matchday":  # /matchday <any command>: a catch-all for clashing names
            text = text if text.startswith("/") else "/" + text
            name, _, text = text[1:].partition(" ")
            text = text.strip()
        user, channel = body.get("user_id", ""), body.get("channel_id", "")
        private = channel.startswith("D") or body.get("channel_name") == "directmessage"
        trigger = body.get("trigger_id") or hashlib.sha1(
            json.dumps(body, sort_keys=True).encode()).hexdigest()
        key = f"slack:cmd:{trigger}"
        await ack()  # within Slack's 3 seconds, always
        if not self._first_time(key):
            return
        modal = MODALS.get(name) if not text else None
        if modal is not None and body.get("trigger_id") and await self._may(user, name):
            if await self._open_modal(modal, client, body["trigger_id"], channel, private):
                return
        cmd = Command(platform="slack", chat=channel or user, user=user,
                      text=f"/{name} {text}".strip(), dedupe_key=key, private=private,
                      user_name=body.get("user_name", ""))
        result = await self.core.handle(cmd)
        await self._answer(result, user=user, channel=channel, respond=respond)

    async def _open_modal(self, modal: Any, client: AsyncWebClient, trigger_id: str,
                          channel: str, private: bool) -> bool:
        """Open a command's modal; False (so the core answers instead) when it can't."""
        try:
            fx = await self.core.active_fixture()
        except StoreUnavailable:
            return False
        if fx is None:
            return False  # the core says how to set a fixture
        ground = self.core.grounds.get(fx.ground) or next(iter(self.core.grounds.values()))
        try:
            await client.views_open(trigger_id=trigger_id,
                                    view=modal.view(ground, {"channel": channel,
                                                             "private": private}))
        except SlackApiError as exc:  # e.g. an expired trigger: fall back to the text form
            log.warning("slack: views.open failed: %s", exc.response.get("error"))
            return False
        return True

    async def _on_button(self, ack: Any, body: dict[str, Any], action: dict[str, Any],
                         respond: Any) -> None:
        await ack()
        user = body.get("user", {}).get("id", "")
        container = body.get("container") or {}
        channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
        key = f"slack:act:{body.get('trigger_id') or action.get('action_ts')}"
        if not self._first_time(key):
            return
        reply_to = ""
        msg_ts = container.get("message_ts") or (body.get("message") or {}).get("ts")
        if channel and msg_ts:
            try:
                found = await self.core.store.ref_of_message("slack", channel, msg_ts)
            except StoreUnavailable:
                found = None
            reply_to = found[1] if found else ""
        cmd = Command(platform="slack", chat=channel or user, user=user,
                      text=str(action.get("value", "")), dedupe_key=key, reply_to=reply_to,
                      private=not channel or channel.startswith("D"),
                      user_name=body.get("user", {}).get("username", ""))
        result = await self.core.handle(cmd)
        await self._answer(result, user=user, channel=channel,
                           respond=respond if body.get("response_url") else None)

    async def _on_submit(self, ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        modal = BY_CALLBACK.get(view.get("callback_id", ""))
        if modal is None:
            await ack()
            return
        try:
            text = modal.to_command(values(view))
        except FormError as exc:
            await ack(response_action="errors", errors=exc.errors)
            return
        meta = json.loads(view.get("private_metadata") or "{}")
        user = body.get("user", {}).get("id", "")
        channel = meta.get("channel") or user
        digest = hashlib.sha1(text.encode()).hexdigest()[:12]
        key = f"slack:view:{view.get('id')}:{view.get('hash')}:{digest}"
        if not self._first_time(key):
            await ack()
            return
        cmd = Command(platform="slack", chat=channel, user=user, text=text, dedupe_key=key,
                      private=bool(meta.get("private", True)),
                      user_name=body.get("user", {}).get("username", ""))
        task = asyncio.ensure_future(self.core.handle(cmd))
        try:
            result = await asyncio.wait_for(asyncio.shield(task), self.view_deadline)
        except TimeoutError:  # slow store: close the modal now, answer by DM when done
            await ack()
            self._spawn(self._answer_later(task, user))
            return
        if result is not None and not result.reply.ok:
            reason = (result.reply.text.splitlines() or ["Not logged."])[0]
            await ack(response_action="errors", errors={modal.field_for(reason): reason[:300]})
            return
        if result is None:
            await ack()
            return
        await ack(response_action="update", view=result_view(result.reply, modal.title))
        if result.reply.images:
            await self._upload(result.reply.images, user, None)

    async def _answer_later(self, task: asyncio.Future[Result | None], user: str) -> None:
        result = await task
        await self._answer(result, user=user, channel="", respond=None)

    async def _on_home_opened(self, event: dict[str, Any]) -> None:
        if event.get("tab", "home") != "home":
            return
        user = event.get("user", "")
        self.home_users.add(user)
        await self.publish_home(user)

    async def _on_message(self, body: dict[str, Any], event: dict[str, Any],
                          client: AsyncWebClient) -> None:
        if event.get("channel_type") != "im" or event.get("bot_id"):
            return
        if event.get("subtype") not in (None, "file_share"):
            return
        await self._event_command(body, event, client, event.get("text") or "", private=True)

    async def _on_mention(self, body: dict[str, Any], event: dict[str, Any],
                          client: AsyncWebClient) -> None:
        text = MENTION.sub("", event.get("text") or "")
        await self._event_command(body, event, client, text, private=False)

    async def _event_command(self, body: dict[str, Any], event: dict[str, Any],
                             client: AsyncWebClient, text: str, *, private: bool) -> None:
        key = f"slack:evt:{body.get('event_id') or event.get('client_msg_id') or event.get('ts')}"
        if not self._first_time(key):
            return
        channel, user = event.get("channel", ""), event.get("user", "")
        reply_to = ""
        if event.get("thread_ts"):
            try:
                found = await self.core.store.ref_of_message("slack", channel,
                                                             event["thread_ts"])
            except StoreUnavailable:
                found = None
            reply_to = found[1] if found else ""
        files = tuple(
            Attachment(kind="photo" if str(f.get("mimetype", "")).startswith("image/")
                       else "document", file_id=str(f.get("id", "")), caption=text)
            for f in event.get("files") or [])
        cmd = Command(platform="slack", chat=channel, user=user, text=text.strip(),
                      dedupe_key=key, attachments=files, reply_to=reply_to, private=private)
        result = await self.core.handle(cmd)
        if result is None:
            return
        thread = "" if private else event.get("thread_ts") or event.get("ts") or ""
        self.core.notifier.reply("slack", channel, result.reply, quote=thread)

    async def _answer(self, result: Result | None, *, user: str, channel: str,
                      respond: Any) -> None:
        """The reply to the person who asked: ephemeral where Slack allows, else a DM."""
        if result is None:
            return
        reply = result.reply
        if respond is not None:
            await respond(response_type="ephemeral", replace_original=False,
                          **message_payload(reply))
            if reply.images:
                await self._upload(reply.images, channel or user, None)
            return
        self.core.notifier.reply("slack", user, reply)

    async def _upload(self, images: list[bytes], channel: str, thread_ts: str | None) -> None:
        for i, png in enumerate(images, 1):
            await self.client.files_upload_v2(file=png, filename=f"chart-{i}.png",
                                              title=f"Chart {i}", channel=channel,
                                              thread_ts=thread_ts)

    # ================================================================ App Home
    async def publish_home(self, user: str) -> None:
        """Render the user's /status (asked of the core as that user) on their Home tab."""
        cmd = Command(platform="slack", chat=user, user=user, text="/status",
                      dedupe_key=f"slack:home:{user}:{time.time_ns()}", private=True)
        result = await self.core.handle(cmd)
        reply = result.reply if result is not None else Reply("Nothing to show yet.")
        now = self.core.clock.now().astimezone(self.settings.zone).strftime("%H:%M:%S")
        await self.client.views_publish(user_id=user, view=home_view(reply, now))

    async def _on_change(self, what: str, fixture_id: str) -> None:
        """Core hook: something changed, refresh open Home tabs (coalesced, in background)."""
        if not self.home_users:
            return
        if self._home_busy:
            self._home_again = True
            return
        self._spawn(self._refresh_homes())

    async def _refresh_homes(self) -> None:
        self._home_busy = True
        try:
            while True:
                self._home_again = False
                for user in list(self.home_users):
                    try:
                        await self.publish_home(user)
                    except Exception:
                        log.exception("slack: home refresh failed for %s", user)
                if not self._home_again:
                    break
        finally:
            self._home_busy = False

    def _spawn(self, coro: Awaitable[Any]) -> None:
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
        await self.core.notifier.drain()

    async def send(self, chat: str, reply: Reply, *, thread: str = "", quote: str = "") -> str:
        """chat.postMessage (in the thread of `thread`/`quote` when given), then images; the
        stored id of the message ('ts', or 'channel/ts' when Slack moved it to a DM)."""
        thread_ts = _split_ref(thread or quote, chat)[1] if (thread or quote) else None
        resp = await _native(self.client.chat_postMessage(channel=chat, thread_ts=thread_ts,
                                                          **message_payload(reply)))
        channel, ts = resp["channel"], resp["ts"]
        if reply.images:
            await _native(self._upload(reply.images, channel, thread_ts or ts))
        return ts if channel == chat else f"{channel}/{ts}"

    async def edit(self, chat: str, message_id: str, reply: Reply) -> bool:
        """chat.update in place (images go to its thread); False when the message is gone."""
        channel, ts = _split_ref(message_id, chat)
        try:
            await _native(self.client.chat_update(channel=channel, ts=ts,
                                                  **message_payload(reply)))
        except SlackApiError as exc:
            if exc.response.get("error") in ("message_not_found", "cant_update_message"):
                log.info("slack: live message %s gone from %s; posting anew", ts, chat)
                return False
            raise
        if reply.images:
            await _native(self._upload(reply.images, channel, ts))
        return True


async def _native(call: Awaitable[Any]) -> Any:
    """A Web API call with Slack's errors in the delivery layer's terms."""
    try:
        return await call
    except SlackApiError as exc:
        if exc.response.status_code == 429:
            raise RetryLater(float(exc.response.headers.get("Retry-After", 1) or 1),
                             "slack 429") from None
        data = exc.response.data if isinstance(exc.response.data, dict) else {}
        if data.get("error") in ("channel_not_found", "not_in_channel", "is_archived",
                                 "account_inactive"):
            raise Gone(str(data.get("error"))) from None
        raise
