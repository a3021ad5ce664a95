"""What every Slack listener shares: the core, dedupe of redeliveries, who may open a modal,
and how to answer the person who asked (ephemeral where Slack allows, else a DM)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.inbound_base import InboundBase
from bot.adapters.parts import AdapterParts
from bot.adapters.slack.home import HomeTab
from bot.adapters.slack.modals import Modal
from bot.core.ports import CoreAPI
from bot.domain.messages import Command, Reply, ReplyVia, Respond, Result
from bot.settings import Settings
from bot.store import StoreUnavailable

log = logging.getLogger(__name__)

VIEW_DEADLINE = 2.5  # seconds to wait for the core before acking a submission anyway
Upload = Callable[[list[bytes], str, str | None], Awaitable[None]]


class Inbound(InboundBase):
    """The state and steps the listeners (commands, actions, views, events) share."""

    platform = "slack"

    def __init__(self, core: CoreAPI, parts: AdapterParts, settings: Settings,
                 client: AsyncWebClient, *,
                 upload: Upload,
                 spawn: Callable[[Awaitable[Any]], None], home: HomeTab,
                 view_deadline: float = VIEW_DEADLINE) -> None:
        super().__init__(core, parts.delivery, parts.platform, parts.platform.seen)
        self.registry = parts.registry
        self.grounds = parts.grounds
        self.settings = settings
        self.client = client
        self.upload = upload
        self.spawn = spawn
        self.home = home
        self.view_deadline = view_deadline

    async def first_time(self, key: str) -> bool:
        """False for a redelivery (a Slack retry) that any replica already took: shared in
        Redis, so two replicas behind a load balancer never both handle it."""
        return await self.seen_first(key)

    @staticmethod
    def respond_via(user: str, response_url: str | None) -> ReplyVia | None:
        """Command.reply_via letting the core queue the ephemeral answer in the durable
        outbox (the Slack sink posts it to response_url; a DM once that has expired)."""
        return ReplyVia(respond=Respond(user, response_url)) if response_url else None

    async def may(self, user: str, name: str) -> bool:
        """May this Slack user run this command (to decide whether to open a modal)?"""
        spec = self.registry.lookup(name)
        if spec is None:
            return False
        try:
            member = await self.core.member(f"slack:{user}")
        except StoreUnavailable:
            return False
        return member is not None and self.core.may(member.role, spec.name)

    async def open_modal(self, modal: Modal, trigger_id: str, channel: str,
                         private: bool, user: str = "") -> bool:
        """Open a command's modal (with the ground of the user's fixture); False (so the
        core answers instead) when it can't."""
        try:
            fx = await self.core.fixture_for(Command(
                platform="slack", chat=channel or user, user=user, text="", dedupe_key="",
                private=private))
        except StoreUnavailable:
            return False
        if fx is None:
            return False  # the core says how to set a fixture
        ground = self.grounds.get(fx.ground) or next(iter(self.grounds.values()))
        try:
            await self.client.views_open(trigger_id=trigger_id,
                                         view=modal.view(ground, {"channel": channel,
                                                                  "private": private}))
        except SlackApiError as exc:  # e.g. an expired trigger: fall back to the text form
            log.warning("slack: views.open failed: %s", exc.response.get("error"))
            return False
        return True

    async def incident_of(self, channel: str, ts: str) -> str:
        """The incident a bot message in a channel is the live message of ('' if none)."""
        if not (channel and ts):
            return ""
        try:
            return await self.live_ref(channel, ts)
        except StoreUnavailable:
            return ""

    async def answer(self, result: Result | None, *, user: str, channel: str,
                     response_url: str | None) -> None:
        """The reply to the person who asked: ephemeral where Slack allows (through its
        response_url), else a DM; queued with the delivery layer like every message."""
        if result is None or result.queued:  # queued: the outbox delivers it
            return
        via = self.respond_via(user, response_url)
        if via is not None:  # the Slack sink posts it to the response_url (a DM once that
            # has expired)
            self.delivery.reply("slack", channel or user, result.reply, respond=via.respond)
            return
        await self.post(user, result.reply)

    async def post(self, channel: str, reply: Reply, thread_ts: str | None = None) -> None:
        """Queue a reply for a channel (or a thread) with the delivery layer, charts after it."""
        self.delivery.reply("slack", channel, reply, quote=thread_ts or "")
