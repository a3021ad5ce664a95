"""Plain text or a photo in a private chat: the next step of an open form, or an addition
to the sender's latest report."""

from __future__ import annotations

import asyncio

from bot.core.dispatch import Ctx, Registry, Spec
from bot.core.messages import Reply, Result
from bot.domain.models import parse_incident_id
from handlers.forms import continue_with_text
from handlers.reporting import add_text


async def note_cmd(ctx: Ctx) -> Result:
    """Plain text or a photo in a private chat: continue a form, or add to the latest report."""
    fx = await ctx.fixture()
    # The open form and the latest report are read together: one round trip of latency.
    state, last = await asyncio.gather(ctx.store.form(fx.id, ctx.who),
                                       ctx.store.last_incident_of(fx.id, ctx.who))
    handled = await continue_with_text(ctx, fx, state)
    if handled is not None:
        return handled
    n = parse_incident_id(ctx.cmd.reply_to) if ctx.cmd.reply_to else None
    if n is None:
        n = last
    if n is None:
        if ctx.cmd.attachments:
            return Result(Reply("Which incident is this for? Reply to the incident message, "
                                "or send /incident first.", ok=False))
        return Result(Reply("To report, send /incident. Send /help for commands.", ok=False))
    return await add_text(ctx, fx, n, ctx.rest)


def register(registry: Registry) -> None:
    """Add the hidden /note command (what plain text becomes)."""
    registry.add(Spec("note", "(send text or a photo)", "Add to your latest report", note_cmd,
                      hidden=True))
