"""Check-in, stand-down and roll call: a steward taps their post ("On post: Block 250 gangway
✓") or sends /onpost <post>, may share a (live) location kept with the check-in, and
/standdown's at the end (control: /standdown all), the times kept on their duty record;
/rollcall [zone] asks every steward there to check in, and /status counts the posts on
against the plan, naming the rota's stewards not yet on."""

from __future__ import annotations

import secrets

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.clock import iso, parse_iso
from bot.domain.deployment import ROLLCALL_TEXT, Post, post_buttons, zone_post_buttons
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Attachment, Outbound, Reply, Result
from bot.domain.plurals import counted
from bot.domain.procedures import Target, in_zone, target_label
from bot.domain.rollcall_count import count
from bot.domain.rota_reach import left_out
from bot.domain.unreached import radio_list
from handlers.incident.card import clock_time
from handlers.stewarding.broadcasts import fixture_posts, rota, send, target_of

BUTTONS = 6  # posts offered as buttons in one roll call message
NAMES_SHOWN = 4


def _posts(ctx: Ctx, fx: Fixture) -> list[Post]:
    return fixture_posts(ctx, fx)


async def onpost_cmd(ctx: Ctx) -> Result:
    """/onpost <post>: I am on my post (the time is kept as evidence)."""
    fx = await ctx.fixture()
    posts = {p.id: p for p in _posts(ctx, fx)}
    if len(ctx.args) != 1:
        taps = zone_post_buttons(list(posts.values()), ctx.member.zone, BUTTONS) \
            if ctx.member is not None and ctx.member.zone else []
        if not taps:
            raise UsageError("Which post?", field="post")
        return Result(Reply("Which post are you on? Tap it (or send /onpost <post>).",
                            title="Check in", buttons=taps))
    post = posts.get(ctx.args[0])
    if post is None:
        raise UsageError(f"No post '{ctx.args[0][:40]}' at {ctx.ground(fx).name}.",
                         field="post")
    at = iso(ctx.now)
    await ctx.facades.stewarding.check_in(fx.id, post.id, ctx.who, at,
                                         ctx.event("steward.onpost", {"post": post.id}),
                                         ctx.cmd.dedupe_key)
    await ctx.core.changed("onpost", fx.id)
    local = ctx.now.astimezone(ctx.core.settings.zone)
    return Result(Reply(f"On post: {post.name} ✓ {local:%H:%M}\nShare your live location "
                        "here if control asks: it is kept with your check-in. /standdown "
                        "when you finish."))


async def standdown_cmd(ctx: Ctx) -> Result:
    """/standdown: I am off duty (the time is kept); /standdown all (control): every steward
    on duty stands down, each told, all in one write."""
    fx = await ctx.fixture()
    state = ctx.facades.stewarding
    duty = await state.duty(fx.id)
    at = iso(ctx.now)
    local = ctx.now.astimezone(ctx.core.settings.zone)
    if ctx.spec.subcommand(ctx.rest) == "all":  # who may: roles.toml "standdown all"
        on = sorted(w for w, d in duty.items() if d.on_duty)
        if not on:
            return Result(Reply("Nobody is checked in on duty; nothing to stand down."))
        reply = Reply(f"Stand down at {local:%H:%M}: thank you. Your check-out time is kept.",
                      title="🏁 Stand down · the whole ground")
        outs = [Outbound(f"user:{w}", reply, fixture=fx.id) for w in on]
        outs.append(Outbound("control", Reply(f"{counted(len(on), 'steward')}"
                                              f" stood down at {local:%H:%M}.",
                                              title="🏁 Stand down"), fixture=fx.id))
        ev = ctx.event("steward.standdown", {"who": on, "all": True})
        if await state.stand_down(fx.id, on, at, ev, ctx.outbox.ops(outs), ctx.cmd.dedupe_key):
            ctx.outbound.extend(outs)
            await ctx.core.changed("onpost", fx.id)
        return Result(Reply(await _stood_down_text(ctx, fx, on, f"{local:%H:%M}")))
    if ctx.args:
        raise UsageError(f"Unknown option '{ctx.args[0][:20]}'.")
    mine = duty.get(ctx.who)
    if mine is None or not mine.on_duty:
        return Result(Reply("You are not checked in on a post: nothing to stand down.",
                            ok=False))
    await state.stand_down(fx.id, [ctx.who], at,
                           ctx.event("steward.standdown", {"who": [ctx.who]}), [],
                           ctx.cmd.dedupe_key)
    await ctx.core.changed("onpost", fx.id)
    came = parse_iso(mine.checked_in).astimezone(ctx.core.settings.zone)
    return Result(Reply(f"Stood down {local:%H:%M} ✓ (on duty from {came:%H:%M}). Thank you."))


async def _stood_down_text(ctx: Ctx, fx: Fixture, on: list[str], at: str) -> str:
    """'Stood down 1 of 6 stewards planned at 22:29; …', naming the rota's stewards the bot
    did not stand down (not on it, or not checked in) so control can radio them."""
    filled, links = await rota(ctx, fx)
    missed = left_out(filled, links, _posts(ctx, fx), set(on))
    if not missed:
        return f"Stood down {counted(len(on), 'steward')} at {at}; each has been told."
    planned = len(on) + len(missed)
    return (f"Stood down {len(on)} of {counted(planned, 'steward')} planned at {at}; "
            "each has been told."
            f"\n{len(missed)} not stood down by the bot (not on it, or not checked in) — "
            f"radio them: {radio_list(missed)}")


async def keep_position(ctx: Ctx, fx: Fixture, a: Attachment) -> Result | None:
    """A location a checked-in steward shares: kept on their duty record as evidence of
    position (a live one follows them); None when they are not on duty."""
    mine = (await ctx.facades.stewarding.duty(fx.id)).get(ctx.who) if a.lat is not None \
        else None
    if mine is None or not mine.on_duty or a.lat is None or a.lon is None:
        return None
    at = iso(ctx.cmd.at or ctx.now)
    await ctx.facades.stewarding.keep_position(
        fx.id, ctx.who, a.live, a.lat, a.lon, at,
        ctx.event("steward.position", {"lat": a.lat, "lon": a.lon, "at": at, "live": a.live}),
        ctx.cmd.dedupe_key)
    return Result(Reply("📍 Your position is kept with your check-in"
                        + (" and follows your live location." if a.live else ".")))


async def move_position(ctx: Ctx, fx: Fixture, a: Attachment) -> Result:
    """A later position of a live location kept with a check-in: silent (a phone sends one
    every few seconds); unknown ones are ignored."""
    state = ctx.facades.stewarding
    who = await state.position_of(fx.id, a.live)
    if who and a.lat is not None and a.lon is not None:
        at = iso(ctx.cmd.at or ctx.now)
        await state.keep_position(fx.id, who, a.live, a.lat, a.lon, at,
                                  ctx.event("steward.position", {"lat": a.lat, "lon": a.lon,
                                                                 "at": at, "live": a.live}),
                                  ctx.cmd.dedupe_key)
    return Result(Reply("", ok=True))


async def rollcall_cmd(ctx: Ctx) -> Result:
    """/rollcall [zone]: ask every steward (of a zone) to check in on their post."""
    fx = await ctx.fixture()
    target, extra = target_of(ctx, fx) if ctx.args else (Target("all"), "")
    if extra:
        raise UsageError(f"A roll call takes a zone only, not '{extra[:40]}'.", field="target")
    posts = _posts(ctx, fx)
    if target.kind == "zone":
        posts = [p for p in posts if in_zone(p.zone, target.zone)]
    if not posts:
        raise UsageError(f"No posts are planned for {target_label(target.key, ctx.ground(fx))}.")
    return await send(ctx, fx, "R-" + secrets.token_hex(3), "rollcall", target,
                      ROLLCALL_TEXT,
                      title=f"📋 Roll call · {target_label(target.key, ctx.ground(fx))}",
                      buttons=post_buttons(posts, BUTTONS))


async def status_lines(ctx: Ctx, fx: Fixture) -> list[str]:
    """The roll call in one /status line: posts on against the plan, who is not yet on; once
    anyone stood down, how many of those checked in have."""
    state = ctx.facades.stewarding
    duty = await state.duty(fx.id)
    off = [d.stood_down for d in duty.values() if d.checked_in and not d.on_duty]
    tz = ctx.core.settings.zone
    tail = [f"🏁 Stood down: {len(off)}/{len(duty)} checked in "
            f"(last {clock_time(max(off), tz)})"] if off else []
    bc = await state.latest(fx.id)
    if bc is None or bc.kind != "rollcall":
        return tail
    posts = _posts(ctx, fx)
    if bc.target.startswith("zone:"):
        posts = [p for p in posts if in_zone(p.zone, bc.target.removeprefix("zone:"))]
    filled, _ = await state.deployment(fx.id)
    got = count(posts, await state.on_post(fx.id), duty, filled, bc.at)
    line = f"📋 Roll call {clock_time(bc.at, tz)}: {len(got.on)}/{got.planned} posts on"
    if got.silent:
        shown = [f"{p.name} ({filled[p.id][1]})" for p in got.silent[:NAMES_SHOWN]]
        more = len(got.silent) - len(shown)
        line += " · not yet: " + ", ".join(shown) + (f" (+{more})" if more else "")
    if got.unfilled:  # nobody is missing from a post nobody holds
        line += f" · {counted(len(got.unfilled), 'unfilled post')} (no steward on the rota)"
    return [line, *tail]


def register(registry: Registry) -> None:
    """Add /onpost, /standdown and /rollcall."""
    registry.add(Spec("standdown", "/standdown  |  /standdown all (control)",
                      "Stand down: off duty (the time is kept)", standdown_cmd,
                      aliases=("offpost", "checkout"), subcommands={"all": "all"}))
    registry.add(Spec("onpost", "/onpost <post>", "Check in: I am on my post", onpost_cmd,
                      aliases=("checkin", "on")))
    registry.add(Spec("rollcall", "/rollcall [zone|all]", "Ask every steward to check in",
                      rollcall_cmd, aliases=("roll",)))
