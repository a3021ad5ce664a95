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
from bot.domain.incident.escalation_policy import policy_for
from bot.domain.messages import Button, Reply, Result
from bot.domain.outcomes import Reason
from bot.domain.plurals import counted
from bot.domain.procedures import (
    MAX_TEXT,
    PROCEDURES,
    Broadcast,
    Steward,
    Target,
    compose,
    leading_target,
    life_safety,
    message_body,
    message_title,
    target_label,
)
from bot.domain.rota_reach import (
    Reach,
    by_zone,
    live_procedures,
    plan_record,
    posted,
    radio_line,
    reach_of,
    short_target,
)
from bot.domain.unreached import dump, load, radio_list
from bot.store import Refused
from bot.store.decision_keys import DecisionLog
from handlers.common.words import CANCEL_WORDS, CONFIRM_WORDS, typed_word
from handlers.decisions.commands import from_command, rationale_prompt
from handlers.incident.card import clock_time
from handlers.stewarding.reach import chase_deadline, one_post, roster_here
from handlers.stewarding.rollcall_timer import deployed

BROADCAST_USAGE = "/broadcast <zone|supervisors|exits|all> <text>"
NAMES_SHOWN = 5  # who has not acknowledged, by rota name, in one /status line


def fixture_posts(ctx: Ctx, fx: Fixture) -> list[Post]:
    """The fixture's posts: its ground's, with the fixture's overrides from the ground's file
    (`[fixtures."<id>"]`)."""
    return posts_of(ctx.core.settings.config_dir, fx.ground or ctx.ground(fx).id, fx.id)


async def rota(ctx: Ctx, fx: Fixture) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """The fixture's rota (post -> (tabard, name)) and the accounts linked to tabards."""
    state = ctx.facades.stewarding
    filled, _ = await state.deployment(fx.id)
    return filled, (await state.tabards() if filled else {})


async def plan_reach(ctx: Ctx, fx: Fixture, target: Target) -> Reach:
    """The stewards a target plans: whom the bot reaches, and the rota's it cannot."""
    filled, links = await rota(ctx, fx)
    posts = fixture_posts(ctx, fx)
    roster = await roster_here(ctx.core, ctx.facades, fx)
    tonight_ = tonight(roster, filled, links, posts) if filled else roster
    return reach_of(tonight_, target, ctx.ground(fx), filled, links, posts)


def target_of(ctx: Ctx, fx: Fixture) -> tuple[Target, str]:
    """The target the command's leading words name ("STB upper", "West Stand", "gate b",
    'all') and the text after them, or a one-line refusal listing the ground's zones."""
    ground = ctx.ground(fx)
    got = leading_target(ctx.args, ground)
    if got is None:
        raise UsageError(f"'{ctx.args[0][:40]}' is not a zone, 'supervisors', 'exits' or "
                         f"'all'. Zones at {ground.name}: {ground.names()}.", field="target")
    target, used = got
    rest = ctx.rest.split(None, used)
    return target, (rest[used].strip() if len(rest) > used else "")


def sent_line(word: str, reach: Reach, label: str) -> str:
    """'EVACUATE sent to 1 of 20 stewards planned (STB upper) and control.'"""
    n = len(reach.to)
    if n == reach.planned:
        return f"{word} sent to {counted(n, 'steward')} ({label}) and control."
    return (f"{word} sent to {n} of {counted(reach.planned, 'steward')} planned ({label}) "
            "and control.")


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
    plan = await plan_reach(ctx, fx, target)
    to = list(plan.to)
    if not plan.planned:
        return Result(Reply(f"No steward is deployed to {target_label(target.key, ground)}; "
                            "nothing was sent.", ok=False))
    label = target_label(target.key, ground)
    title = title or message_title(kind, label)
    urgent = bid if life_safety(kind) else ""
    short = short_target(target.key, ground)
    radio = radio_line(plan.planned, plan.unreached, short)
    post, reached = await one_post(ctx, fx, target) if buttons is None else ("", frozenset())
    outs = compose(kind, bid, label, text, to, fx.id, title=title, buttons=buttons,
                   also=also, note=radio, post=post, reached=reached)
    bc = Broadcast(bid, kind, target.key, text, iso(ctx.now), ctx.who, len(to))
    state = ctx.facades.stewarding
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
                                   record={**plan_record(plan), **posted(to, reached),
                                           **(record or {})},
                                   police_at=police_at, closes=closes,
                                   also=DecisionLog.ops(entry) if entry else None,
                                   chase_at=await chase_deadline(ctx, fx, post))
        fresh = not applied.duplicate
    except Refused as exc:
        if urgent and notifier.lane is not None:  # nothing goes out: give the lane back
            await notifier.lane.release(bid)
        if exc.reason is Reason.NOT_MISSING:
            raise UsageError(f"No missing-person report {closes}.", field="id") from None
        if exc.reason is not Reason.ALREADY_SENT:
            raise
        fresh = False
    if not fresh:
        return Result(Reply(f"{title.split(' · ')[0]} was already sent ({bid}); "
                            "see /status for who has it."))
    ctx.outbound.extend(outs)  # stored ones (written with the record) only to observers
    await ctx.core.changed("broadcast", fx.id)
    word = "Roll call" if kind == "rollcall" else bc.word
    counts = 'who is on post' if kind == 'rollcall' else 'who has it'
    reply = Reply(f"{sent_line(word, plan, short)} /status counts {counts}."
                  + (f"\n{radio}" if radio else ""), title=f"{word} {bid}")
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
    target, text = target_of(ctx, fx)
    if not text:
        raise UsageError("What should it say?", field="text")
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
            await ctx.facades.forms.drop_form(fx.id, ctx.who)
            return Result(Reply(f"{word} cancelled; nothing was sent."))
        if ctx.args[:1] == ["confirm"] and len(ctx.args) == 2:
            state = await ctx.facades.forms.form(fx.id, ctx.who)
            if not state or state.get("kind") != "procedure" or state.get("id") != ctx.args[1]:
                done = await ctx.facades.stewarding.broadcast(fx.id, ctx.args[1])
                if done is not None:
                    return Result(Reply(f"{word} was already sent ({done.id}); see /status."))
                return Result(Reply(f"This {word} was not confirmed in time; nothing was "
                                    f"sent. Send /{kind} again.", ok=False))
            return await _send_confirmed(ctx, fx, kind, state)
        target, text = target_of(ctx, fx) if ctx.args else (Target("all"), "")
        if len(text) > MAX_TEXT:
            raise UsageError(f"Too long ({len(text)} characters; the limit is {MAX_TEXT}).",
                             field="text")
        reach = await plan_reach(ctx, fx, target)
        pid = "P-" + secrets.token_hex(3)
        state = {"kind": "procedure", "procedure": kind, "id": pid, "target": target.kind,
                 "zone": target.zone, "text": text, "n": len(reach.to),
                 "planned": reach.planned, "unreached": dump(reach.unreached)}
        await ctx.facades.forms.save_form(fx.id, ctx.who, state, ctx.core.settings.form_ttl_seconds)
        return _confirm(ctx, fx, state)
    cmd.__name__ = f"{kind}_cmd"
    return cmd


def _confirm(ctx: Ctx, fx: Fixture, state: dict[str, Any], note: str = "") -> Result:
    """The confirm step of a procedure: what goes to whom (and which planned stewards the
    bot cannot reach, to radio), Send now / Cancel."""
    kind, n, word = state["procedure"], state.get("n", 0), PROCEDURES[state["procedure"]][0]
    label = target_label(Target(state["target"], state.get("zone", "")).key, ctx.ground(fx))
    short = short_target(Target(state["target"], state.get("zone", "")).key, ctx.ground(fx))
    radio = radio_line(state.get("planned", n), load(state.get("unreached")), short)
    return Result(Reply(f"{message_body(kind, state['text'])}\nIt goes to "
                        f"{counted(n, 'steward')} and control, ahead of every other message."
                        + (f"\n{radio}" if radio else "") + (f"\n{note}" if note else ""),
                        title=f"Confirm {word} · {label}?",
                        buttons=[[Button(f"Send {word} now", f"/{kind} confirm {state['id']}",
                                         "danger"),
                                  Button("Cancel", f"/{kind} cancel")]]))


async def _send_confirmed(ctx: Ctx, fx: Fixture, kind: str, state: dict[str, Any]) -> Result:
    await ctx.facades.forms.drop_form(fx.id, ctx.who)
    target = Target(state["target"], state.get("zone", ""))
    also = policy_for(ctx.core.settings).procedures_to  # command and police (escalation.toml)
    return await send(ctx, fx, state["id"], kind, target, state["text"], also=also)


async def continue_procedure(ctx: Ctx, fx: Fixture, state: dict[str, Any]) -> Result | None:
    """Typed text while a procedure waits for its confirm: yes sends it, cancel drops it,
    anything else asks again (never added to a report, as plain text otherwise is)."""
    kind = state.get("procedure")
    word = typed_word(ctx.rest)
    if kind not in PROCEDURES or not word:
        return None
    if word in CANCEL_WORDS:
        await ctx.facades.forms.drop_form(fx.id, ctx.who)
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
        waiting = [b for b in await ctx.facades.stewarding.broadcasts(fx.id)
                   if b.kind != "rollcall" and ctx.who in b.missing]
        if not waiting:
            return Result(Reply("No broadcast or procedure is waiting for your \"I have "
                                "it\"; nothing was recorded.", ok=False))
        bid = waiting[-1].id
    try:
        got = await _ack(ctx, fx, bid)
    except Refused as exc:
        if exc.reason is not Reason.NOT_TARGETED:
            raise
        # sent to them for another of today's fixtures (they changed /fixture since): theirs
        other = await _sent_for(ctx, bid, fx) if ctx.args else None
        if other is None:
            return Result(Reply("That message was not sent to you.", ok=False))
        fx = other
        got = await _ack(ctx, fx, bid)
    if not got.duplicate:
        await ctx.core.changed("broadcast", fx.id)
    # answered on the tapped button itself (Telegram's answerCallbackQuery): an
    # acknowledgement costs no message, so a thousand taps never queue a thousand replies
    # (a typed "ok" by a reaction on it, see Reply.ack)
    return Result(Reply("✅ Control knows you have it." + ("" if ctx.args else f" ({bid})"),
                        ack=True), toast_only=True)


async def _ack(ctx: Ctx, fx: Fixture, bid: str) -> Any:
    return await ctx.facades.stewarding.ack(
        fx.id, bid, ctx.who, iso(ctx.now), ctx.event("stewards.acknowledged", {"id": bid}))


async def _sent_for(ctx: Ctx, bid: str, chosen: Fixture) -> Fixture | None:
    """The fixture of today's (kick-off within a day) whose broadcast `bid` was sent to the
    sender, other than the one they have chosen; None when there is none."""
    for fx in await ctx.store.fixtures():
        if fx.id == chosen.id or abs((fx.kickoff - ctx.now).total_seconds()) > 86_400:
            continue
        bc = await ctx.facades.stewarding.broadcast(fx.id, bid)
        if bc is not None and ctx.who in (*bc.missing, *bc.acked):
            return fx
    return None


async def status_lines(ctx: Ctx, fx: Fixture) -> list[str]:
    """Every procedure in force (until its all-clear) and the newest other broadcast, each
    with who has it against the plan, who the bot cannot reach and who has not acked yet."""
    sent = [b for b in await ctx.facades.stewarding.broadcasts(fx.id) if b.kind != "rollcall"]
    shown = live_procedures(sent)  # a roll call counts check-ins (handlers.stewarding.checkin)
    newest = next((b for b in reversed(sent) if b not in shown), None)
    if newest is not None:
        shown.append(newest)
    if not shown:
        return []
    names = {s.who: s.name for s in await deployed(ctx.core, ctx.store, ctx.facades, fx)}
    return [ln for bc in shown for ln in count_lines(ctx, fx, bc, names)]


def count_lines(ctx: Ctx, fx: Fixture, bc: Broadcast, names: dict[str, str]) -> list[str]:
    """One message's /status lines: have it of planned, not reached (radio them), not yet;
    then per zone when it went to more than one."""
    ground = ctx.ground(fx)
    line = (f"{'🚨' if bc.procedure else '📣'} {bc.word} "
            f"{clock_time(bc.at, ctx.core.settings.zone)} "
            f"({short_target(bc.target, ground)}): {len(bc.acked)}/{bc.of} have it")
    if bc.unreached:
        line += (f" · {len(bc.unreached)} not on the bot, radio them: "
                 f"{radio_list(bc.unreached, NAMES_SHOWN)}")
    if bc.missing:
        shown = [names.get(w, w) for w in bc.missing[:NAMES_SHOWN]]
        more = len(bc.missing) - len(shown)
        line += " · not yet: " + ", ".join(shown) + (f" (+{more})" if more else "")
    zones = by_zone(bc)
    return [line] + ([f"   {ground.short_label(z.zone)}: {z.acked}/{z.planned} have it"
                      + (f", {len(z.unreached)} not reached" if z.unreached else "")
                      for z in zones] if len(zones) > 1 else [])


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
    registry.add_form("procedure", continue_procedure)
