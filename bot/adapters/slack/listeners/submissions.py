"""View submissions: a modal read back into its one-line command; a refusal goes on the
field the core says it is about (Reply.field), a success replaces the modal."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from typing import Any

from slack_bolt.app.async_app import AsyncApp

from bot.adapters.slack.blocks import result_view
from bot.adapters.slack.modals import (
    BY_CALLBACK,
    CONFIRM_CALLBACK,
    INCIDENT,
    FormError,
    confirm_view,
    needs_confirm,
    values,
)
from bot.adapters.slack.slack_inbound import Inbound
from bot.domain.messages import Command, Reply, Result

log = logging.getLogger(__name__)

STALE = "This form is out of date. Close it and start again with the command."
TOO_LONG_TO_CONFIRM = "Too long to confirm as a major incident: shorten the description."


def metadata(view: dict[str, Any]) -> dict[str, Any] | None:
    """The modal's private_metadata as the bot wrote it (a JSON object), or None when it is
    something else (a stale or foreign view)."""
    try:
        meta = json.loads(view.get("private_metadata") or "{}")
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


def register(app: AsyncApp, inbound: Inbound) -> None:
    """Submissions of the bot's modals (callback ids md_*)."""

    async def answer_later(task: asyncio.Future[Result | None], user: str) -> None:
        await inbound.answer(await task, user=user, channel="", response_url=None)

    async def on_submit(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        confirming = view.get("callback_id") == CONFIRM_CALLBACK
        modal = INCIDENT if confirming else BY_CALLBACK.get(view.get("callback_id", ""))
        if modal is None:
            await ack()
            return
        meta = metadata(view)
        if meta is None or (confirming and not isinstance(meta.get("text"), str)):
            log.warning("slack: view %s with unreadable private_metadata", view.get("id"))
            if confirming:  # a view without inputs has no field to put the error on
                await ack(response_action="update",
                          view=result_view(Reply(STALE, ok=False), modal.title))
            else:
                await ack(response_action="errors", errors={modal.first_field: STALE})
            return
        if confirming:
            text = str(meta["text"])
        else:
            try:
                v = values(view)
                text = modal.to_command(v)
            except FormError as exc:
                await ack(response_action="errors", errors=exc.errors)
                return
            if needs_confirm(modal, v):  # nothing is logged until the person confirms
                step = confirm_view(view, v, text, meta)
                if step is None:
                    await ack(response_action="errors",
                              errors={"description": TOO_LONG_TO_CONFIRM})
                else:
                    await ack(response_action="update", view=step)
                return
        user = body.get("user", {}).get("id", "")
        channel = str(meta.get("channel") or user)
        digest = hashlib.sha1(text.encode()).hexdigest()[:12]
        key = f"slack:view:{view.get('id')}:{view.get('hash')}:{digest}"
        if not await inbound.first_time(key):
            await ack()
            return
        cmd = Command(platform="slack", chat=channel, user=user, text=text, dedupe_key=key,
                      private=bool(meta.get("private", True)),
                      user_name=body.get("user", {}).get("username", ""))
        task = asyncio.ensure_future(inbound.core.handle(cmd))
        try:
            result = await asyncio.wait_for(asyncio.shield(task), inbound.view_deadline)
        except TimeoutError:  # slow store: close the modal now, answer by DM when done
            await ack()
            inbound.spawn(answer_later(task, user))
            return
        if result is None:
            await ack()
            return
        if not result.reply.ok:
            reason = (result.reply.text.splitlines() or ["Not logged."])[0]
            if confirming:  # the confirm step has no field to put it on: show it instead
                await ack(response_action="update", view=result_view(
                    Reply(reason, title="Not logged", ok=False), modal.title))
            else:
                await ack(response_action="errors",
                          errors={modal.block_for(result.reply.field): reason[:300]})
            return
        await ack(response_action="update", view=result_view(result.reply, modal.title))
        if result.reply.images:
            await inbound.upload(result.reply.images, user, None)

    app.view(re.compile(r"^md_"))(on_submit)
