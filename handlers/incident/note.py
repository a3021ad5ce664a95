"""Plain text or a photo in a private chat: the next step of an open form, or an addition
to the sender's latest report; a location from a steward on duty (no report open to add it
to) is kept with their check-in."""

from __future__ import annotations

import asyncio
import dataclasses

from bot.core.dispatch import Ctx, Registry, Spec
from bot.domain.incident.incident_model import parse_incident_id
from bot.domain.messages import Reply, Result
from handlers.common.forms import continue_with_text
from handlers.common.words import CANCEL_WORDS, CONFIRM_WORDS, typed_word
from handlers.incident.live_views import window_words
from handlers.incident.reporting import add_text, move_live
from handlers.stewarding.broadcasts import ihaveit_cmd
from handlers.stewarding.checkin import keep_position, move_position

ANSWER_WORDS = CONFIRM_WORDS | CANCEL_WORDS | {"ok", "okay", "no", "n", "send", "record"}
ACK_WORDS = {"ok", "okay", "yes", "y", "got it", "have it", "i have it", "received", "roger",
             "understood", "copy", "copied", "ack", "acknowledged", "will do", "on it"}


async def note_cmd(ctx: Ctx) -> Result:
    """Plain text or a photo in a private chat: continue a form, or add to the latest report."""
    fx = await ctx.fixture()
    moved = next((a for a in ctx.cmd.attachments if a.moved and a.live), None)
    if moved is not None:  # a live location's next position: never a new note
        return await move_live(ctx, fx, moved) or await move_position(ctx, fx, moved)
    # The open form and the latest report are read together: one round trip of latency.
    state, last = await asyncio.gather(ctx.facades.forms.form(fx.id, ctx.who),
                                       ctx.store.last_report_of(fx.id, ctx.who))
    handled = await continue_with_text(ctx, fx, state)
    if handled is not None:
        return handled
    word = typed_word(ctx.rest)
    if word in ACK_WORDS and not ctx.cmd.attachments:
        # "ok" to an EVACUATE is the steward's "I have it": counted, not lost as a note
        acked = await ihaveit_cmd(dataclasses.replace(ctx, args=[], rest=""))
        if acked.reply.ok:
            return acked
    if word in ANSWER_WORDS and not ctx.cmd.attachments:
        # an answer to a question no longer open (tapped elsewhere, expired): a bare "yes"
        # appended to a report would read as if something had been confirmed
        return Result(Reply(f"Nothing is waiting for '{word}' (it may have expired or been "
                            "answered already), so nothing was done and nothing was added "
                            "to a report.", ok=False))
    n = parse_incident_id(ctx.cmd.reply_to) if ctx.cmd.reply_to else None
    window = ctx.core.settings.note_window_seconds
    if n is None and last is not None:
        # the store's TTL runs on the server's clock; drills and replays run a virtual one
        if last[1] is None or 0 <= ctx.now.timestamp() - last[1] <= window:
            n = last[0]
    where = next((a for a in ctx.cmd.attachments if a.kind == "location"), None)
    if n is None and where is not None and len(ctx.cmd.attachments) == 1 and not ctx.rest:
        kept = await keep_position(ctx, fx, where)  # on duty: evidence of their position
        if kept is not None:
            return kept
    if n is None:
        if ctx.cmd.attachments:
            return Result(Reply("Which incident is this for? Reply to the incident message, "
                                "or send /incident first.", ok=False))
        return Result(Reply(f"Not added to any report: plain text joins your latest report "
                            f"only within {window_words(ctx.core.settings.note_window_seconds)}"
                            " of it. To add to an older one, "
                            "send /update <id> <text>; to report, send /incident.", ok=False))
    return await add_text(ctx, fx, n, ctx.rest)


def register(registry: Registry) -> None:
    """Add the hidden /note command (what plain text becomes)."""
    registry.add(Spec("note", "(send text or a photo)", "Add to your latest report", note_cmd,
                      hidden=True))
