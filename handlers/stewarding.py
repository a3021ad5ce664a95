"""Reaching every steward at once: /broadcast, the four public-protection procedures
(/evacuate, /invacuate, /lockdown, /allclear, each confirmed first) and the "I have it"
acknowledgement, counted live in /status."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.clock import iso
from bot.domain.deployment import Post, posts_of, tonight
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Button, Reply, Result
from bot.domain.procedures import (
    MAX_TEXT,
    PROCEDURES,
    Broadcast,
    Steward,
    Target,
    compose,
    life_safety,
    message_body,
    message_title,
    parse_target,
    target_label,
    targeted,
)
from bot.store import Refused
from bot.store.decision_keys import DecisionLog
from bot.store.stewarding_keys import ALREADY, NOT_MISSING, NOT_SENT_TO_YOU
from handlers.decisions import from_command, rationale_prompt
from handlers.display import clock_time
from handlers.reach import chase_deadline, one_post
from handlers.words import CANCEL_WORDS, CONFIRM_WORDS, typed_word

BROADCAST_USAGE = "/broadcast <zone|supervisors|exits|all> <text>"
NAMES_SHOWN = 5  # who has not acknowledged, by rota name, in one /status line


def fixture_posts(ctx: Ctx, fx: Fixture) -> list[Post]:
    """The fixture's posts: its ground's, with the fixture's overrides from the ground's file
    (`[fixtures."<id>"]`)."""
    return posts_of(ctx.core.settings.config_dir, fx.ground or ctx.ground(fx).id, fx.id)


async def stewards(ctx: Ctx, fx: Fixture) -> list[Steward]:
    """Everyone who stewards tonight (bot.domain.deployment.tonight): the roster's, and the
    accounts linked to a tabard on the fixture's rota."""
    roster = [Steward(m.who, m.name or m.user, m.role, m.zone)
              for m in ctx.core.roster.values()]
    state = ctx.store.stewarding
    filled, _ = await state.deployment(fx.id)
    if not filled:
        return roster
    return tonight(roster, filled, await state.tabards(), fixture_posts(ctx, fx))


def target_of(ctx: Ctx, fx: Fixture, word: str) -> Target:
    """The target a word names, or a one-line refusal."""
    target = parse_target(word, ctx.ground(fx))
    if target is None:
        raise UsageError(f"'{word}' is not a zone, 'supervisors', 'exits' or 'all'.",
                         field="target")
    return target


async def send(ctx: Ctx, fx: Fixture, bid: str, kind: str, target: Target, text: str, *,
                title: str = "",
                buttons: Callable[[Steward], list[list[Button]]] | None = None,
                record: dict[str, str] | None = None, police_at: int | None = None,
                closes: str = "", also: tuple[str, ...] = (), dedupe: str = "") -> Result:
    """Record it and queue it (one write) to every targeted steward and to control (each
    steward's buttons: "I have it" unless `buttons` says otherwise; control's copy to the
    `also` audiences too); `record`, `police_at` and `closes` go to the store with it (see
    Stewarding.send); `dedupe`: the write's dedupe key when not the command's own."""
    ground = ctx.ground(fx)
    to = targeted(await stewards(ctx, fx), target, ground)
    if not to:
        return Result(Reply(f"No steward is deployed to {target_label(target.key, ground)}; "
                            "nothing was sent.", ok=False))
    label = target_label(target.key, ground)
    title = title or message_title(kind, label)
    urgent = bid if life_safety(kind) else ""
    post, reached = await one_post(ctx, fx, target) if buttons is None else ("", frozenset())
    outs = compose(kind, bid, label, text, to, fx.id, title=title, buttons=buttons,
                   also=also, post=post, reached=reached)
    bc = Broadcast(bid, kind, target.key, text, iso(ctx.now), ctx.who, len(to))
    state = ctx.store.stewarding
    notifier = ctx.core.notifier
    if urgent and notifier.lane is not None:  # before the messages exist: nothing slips in
        reach = sum(notifier.reachable(o.audience, fx.id) for o in outs if o.urgent)
        await notifier.lane.hold(bid, reach)
    ev = ctx.event("stewards.broadcast" if not urgent else "stewards.procedure",
                   {"id": bid, "kind": kind, "target": target.key, "text": text,
                    "sent": len(to)})
    # a procedure is a command decision: logged (attributed, timed, linked to it) in the
    # same write, its rationale asked for after
    entry = from_command(ctx, f"{bc.word} · {label}" + (f": {text}" if text else ""),
                         f"{kind} {bid}", "procedure") if kind in PROCEDURES else None
    try:
        applied = await state.send(fx.id, bc, {s.who: "1" for s in to},
                                   ctx.outbox.ops(outs), ev, dedupe or ctx.cmd.dedupe_key,
                                   record=record, police_at=police_at, closes=closes,
                                   also=DecisionLog.ops(entry) if entry else None,
                                   chase_at=await chase_deadline(ctx, fx, post))
        fresh = not applied.duplicate
    except Refused as exc:
        if urgent and notifier.lane is not None:  # nothing goes out: give the lane back
            await notifier.lane.release(bid)
        if exc.reason is NOT_MISSING:
            raise UsageError(f"No missing-person report {closes}.", field="id") from None
        if exc.reason is not ALREADY:
            raise
        fresh = False
    if not fresh:
        return Result(Reply(f"{title.split(' · ')[0]} was already sent ({bid}); "
                            "see /status for who has it."))
    ctx.outbound.extend(outs)  # stored ones (written with the record) only to observers
    await ctx.core.changed("broadcast", fx.id)
    word = "Roll call" if kind == "rollcall" else bc.word
    reply = Reply(f"{word} sent to {len(to)} steward{'s' if len(to) != 1 else ''} "
                  f"({label}) and control. /status counts "
                  f"{'who is on post' if kind == 'rollcall' else 'who has it'}.",
                  title=f"{word} {bid}")
    if entry is not None:
        await ctx.core.changed("decision", fx.id)
        prompt = rationale_prompt(applied.n)
        reply.text += "\n" + prompt.text
        reply.buttons = prompt.buttons
    return Result(reply)


async def broadcast_cmd(ctx: Ctx) -> Result:
    """/broadcast <target> <text>: one message to every steward of a target."""
    if len(ctx.args) < 2:
        raise UsageError("Whom to, and what?")
    fx = await ctx.fixture()
    target = target_of(ctx, fx, ctx.args[0])
    text = ctx.rest.split(None, 1)[1].strip()
    if len(text) > MAX_TEXT:
        raise UsageError(f"Too long for a broadcast ({len(text)} characters; the limit is "
                         f"{MAX_TEXT}).", field="text")
    return await send(ctx, fx, "B-" + secrets.token_hex(3), "broadcast", target, text)


def _procedure_cmd(kind: str):  # type: ignore[no-untyped-def]
    word = PROCEDURES[kind][0]

    async def cmd(ctx: Ctx) -> Result:
        """/<procedure> [zone|all] [text]: confirm, then send to every steward there."""
        fx = await ctx.fixture()
        if ctx.args[:1] == ["cancel"]:
            await ctx.store.drop_form(fx.id, ctx.who)
            return Result(Reply(f"{word} cancelled; nothing was sent."))
        if ctx.args[:1] == ["confirm"] and len(ctx.args) == 2:
            state = await ctx.store.form(fx.id, ctx.who)
            if not state or state.get("kind") != "procedure" or state.get("id") != ctx.args[1]:
                done = await ctx.store.stewarding.broadcast(fx.id, ctx.args[1])
                if done is not None:
                    return Result(Reply(f"{word} was already sent ({done.id}); see /status."))
                return Result(Reply(f"This {word} was not confirmed in time; nothing was "
                                    f"sent. Send /{kind} again.", ok=False))
            return await _send_confirmed(ctx, fx, kind, state)
        target = target_of(ctx, fx, ctx.args[0]) if ctx.args else Target("all")
        text = ctx.rest.split(None, 1)[1].strip() if len(ctx.args) > 1 else ""
        if len(text) > MAX_TEXT:
            raise UsageError(f"Too long ({len(text)} characters; the limit is {MAX_TEXT}).",
                             field="text")
        ground = ctx.ground(fx)
        n = len(targeted(await stewards(ctx, fx), target, ground))
        pid = "P-" + secrets.token_hex(3)
        state = {"kind": "procedure", "procedure": kind, "id": pid, "target": target.kind,
                 "zone": target.zone, "text": text, "n": n}
        await ctx.store.save_form(fx.id, ctx.who, state, ctx.core.settings.form_ttl_seconds)
        return _confirm(ctx, fx, state)
    cmd.__name__ = f"{kind}_cmd"
    return cmd


def _confirm(ctx: Ctx, fx: Fixture, state: dict[str, Any], note: str = "") -> Result:
    """The confirm step of a procedure: what goes to whom, Send now / Cancel."""
    kind, n, word = state["procedure"], state.get("n", 0), PROCEDURES[state["procedure"]][0]
    label = target_label(Target(state["target"], state.get("zone", "")).key, ctx.ground(fx))
    return Result(Reply(f"{message_body(kind, state['text'])}\nIt goes to {n} steward"
                        f"{'s' if n != 1 else ''} and control, ahead of every other message."
                        + (f"\n{note}" if note else ""),
                        title=f"Confirm {word} · {label}?",
                        buttons=[[Button(f"Send {word} now", f"/{kind} confirm {state['id']}",
                                         "danger"),
                                  Button("Cancel", f"/{kind} cancel")]]))


async def _send_confirmed(ctx: Ctx, fx: Fixture, kind: str, state: dict[str, Any]) -> Result:
    await ctx.store.drop_form(fx.id, ctx.who)
    target = Target(state["target"], state.get("zone", ""))
    return await send(ctx, fx, state["id"], kind, target, state["text"])


async def continue_procedure(ctx: Ctx, fx: Fixture, state: dict[str, Any]) -> Result | None:
    """Typed text while a procedure waits for its confirm: yes sends it, cancel drops it,
    anything else asks again (never added to a report, as plain text otherwise is)."""
    kind = state.get("procedure")
    word = typed_word(ctx.rest)
    if kind not in PROCEDURES or not word:
        return None
    if word in CANCEL_WORDS:
        await ctx.store.drop_form(fx.id, ctx.who)
        return Result(Reply(f"{PROCEDURES[kind][0]} cancelled; nothing was sent."))
    if word in CONFIRM_WORDS or word == "send":
        return await _send_confirmed(ctx, fx, kind, state)
    return _confirm(ctx, fx, state, f"Not sent yet: reply yes to send "
                                    f"{PROCEDURES[kind][0]} now, or cancel.")


async def ihaveit_cmd(ctx: Ctx) -> Result:
    """/ihaveit [id]: a steward's "I have it" for a broadcast or procedure (without an id:
    the newest one sent to them that they have not acknowledged)."""
    if len(ctx.args) > 1:
        raise UsageError("Which message?")
    fx = await ctx.fixture()
    if ctx.args:
        bid = ctx.args[0]
    else:
        waiting = [b for b in await ctx.store.stewarding.broadcasts(fx.id)
                   if b.kind != "rollcall" and ctx.who in b.missing]
        if not waiting:
            return Result(Reply("No broadcast or procedure is waiting for your \"I have "
                                "it\"; nothing was recorded.", ok=False))
        bid = waiting[-1].id
    try:
        got = await ctx.store.stewarding.ack(
            fx.id, bid, ctx.who, iso(ctx.now), ctx.event("stewards.acknowledged", {"id": bid}))
    except Refused as exc:
        if exc.reason is not NOT_SENT_TO_YOU:
            raise
        return Result(Reply("That message was not sent to you.", ok=False))
    if not got.duplicate:
        await ctx.core.changed("broadcast", fx.id)
    # answered on the tapped button itself (Telegram's answerCallbackQuery): an
    # acknowledgement costs no message, so a thousand taps never queue a thousand replies
    return Result(Reply("✅ Control knows you have it." + ("" if ctx.args else f" ({bid})")),
                  toast_only=True)


async def status_lines(ctx: Ctx, fx: Fixture) -> list[str]:
    """The latest broadcast or procedure in one /status line: who has it, who not yet."""
    bc = await ctx.store.stewarding.latest(fx.id)
    if bc is None or bc.kind == "rollcall":  # a roll call counts check-ins (handlers.checkin)
        return []
    names = {s.who: s.name for s in await stewards(ctx, fx)}
    word = bc.word
    line = (f"{'🚨' if bc.procedure else '📣'} {word} {clock_time(bc.at, ctx.core.settings.zone)} "
            f"({target_label(bc.target, ctx.ground(fx))}): {len(bc.acked)}/{bc.sent} have it")
    if bc.missing:
        shown = [names.get(w, w) for w in bc.missing[:NAMES_SHOWN]]
        more = len(bc.missing) - len(shown)
        line += " · not yet: " + ", ".join(shown) + (f" (+{more})" if more else "")
    return [line]


def register(registry: Registry) -> None:
    """Add /broadcast, the four procedures and the "I have it" button."""
    registry.add(Spec("broadcast", BROADCAST_USAGE, "One message to every steward of a zone",
                      broadcast_cmd, aliases=("bc", "tellall")))
    for kind in PROCEDURES:
        registry.add(Spec(kind, f"/{kind} [zone|all] [text]",
                          f"{PROCEDURES[kind][0].title()}: to every steward, confirmed first",
                          _procedure_cmd(kind),
                          aliases=("all-clear", "all_clear") if kind == "allclear" else ()))
    registry.add(Spec("ihaveit", "/ihaveit [id]", "I have the broadcast", ihaveit_cmd,
                      hidden=True, aliases=("gotit",)))
