"""Check-in and roll call: a steward taps their post ("On post: Block 250 gangway ✓") or
sends /onpost <post>; /rollcall [zone] asks every steward there to, and /status counts the
posts on against the plan, naming the rota's stewards not yet on."""

from __future__ import annotations

import secrets

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.clock import iso
from bot.domain.deployment import Post, posts_of
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Button, Reply, Result
from bot.domain.procedures import Steward, Target, in_zone, target_label
from handlers.stewarding import send, target_of

BUTTONS = 6  # posts offered as buttons in one roll call message
NAMES_SHOWN = 4


def _posts(ctx: Ctx, fx: Fixture) -> list[Post]:
    return posts_of(ctx.core.settings.config_dir, fx.ground or ctx.ground(fx).id)


async def onpost_cmd(ctx: Ctx) -> Result:
    """/onpost <post>: I am on my post (the time is kept as evidence)."""
    fx = await ctx.fixture()
    posts = {p.id: p for p in _posts(ctx, fx)}
    if len(ctx.args) != 1:
        mine = [p.id for p in posts.values()
                if ctx.member is not None and in_zone(p.zone, ctx.member.zone)][:BUTTONS]
        raise UsageError("Which post?" + (f" Yours may be: {', '.join(mine)}." if mine else ""),
                         field="post")
    post = posts.get(ctx.args[0])
    if post is None:
        raise UsageError(f"No post '{ctx.args[0][:40]}' at {ctx.ground(fx).name}.",
                         field="post")
    at = iso(ctx.now)
    await ctx.store.stewarding.check_in(fx.id, post.id, ctx.who, at,
                                         ctx.event("steward.onpost", {"post": post.id}),
                                         ctx.cmd.dedupe_key)
    await ctx.core.changed("onpost", fx.id)
    local = ctx.now.astimezone(ctx.core.settings.zone)
    return Result(Reply(f"On post: {post.name} ✓ {local:%H:%M}"))


def _buttons(posts: list[Post]):  # type: ignore[no-untyped-def]
    def for_steward(s: Steward) -> list[list[Button]]:
        mine = [p for p in posts if in_zone(p.zone, s.zone) or in_zone(s.zone, p.zone)]
        return [[Button(f"On post: {p.name} ✓", f"/onpost {p.id}", "primary")]
                for p in mine[:BUTTONS]]
    return for_steward


async def rollcall_cmd(ctx: Ctx) -> Result:
    """/rollcall [zone]: ask every steward (of a zone) to check in on their post."""
    fx = await ctx.fixture()
    target = target_of(ctx, fx, ctx.args[0]) if ctx.args else Target("all")
    posts = _posts(ctx, fx)
    if target.kind == "zone":
        posts = [p for p in posts if in_zone(p.zone, target.zone)]
    if not posts:
        raise UsageError(f"No posts are planned for {target_label(target.key, ctx.ground(fx))}.")
    return await send(ctx, fx, "R-" + secrets.token_hex(3), "rollcall", target,
                      "Roll call: tap your post when you are on it (or /onpost <post>).",
                      title=f"📋 Roll call · {target_label(target.key, ctx.ground(fx))}",
                      buttons=_buttons(posts))


async def status_lines(ctx: Ctx, fx: Fixture) -> list[str]:
    """The roll call in one /status line: posts on against the plan, who is not yet on."""
    state = ctx.store.stewarding
    bc = await state.latest(fx.id)
    if bc is None or bc.kind != "rollcall":
        return []
    posts = _posts(ctx, fx)
    if bc.target.startswith("zone:"):
        posts = [p for p in posts if in_zone(p.zone, bc.target.removeprefix("zone:"))]
    on = await state.on_post(fx.id)
    filled, _ = await state.deployment(fx.id)
    missing = [p for p in posts if p.id not in on]
    line = f"📋 Roll call {bc.at[11:16]}: {len(posts) - len(missing)}/{len(posts)} posts on"
    if missing:
        shown = [f"{p.name}" + (f" ({filled[p.id][1]})" if p.id in filled else " (unfilled)")
                 for p in missing[:NAMES_SHOWN]]
        more = len(missing) - len(shown)
        line += " · not yet: " + ", ".join(shown) + (f" (+{more})" if more else "")
    return [line]


def register(registry: Registry) -> None:
    """Add /onpost and /rollcall."""
    registry.add(Spec("onpost", "/onpost <post>", "Check in: I am on my post", onpost_cmd,
                      aliases=("checkin", "on")))
    registry.add(Spec("rollcall", "/rollcall [zone|all]", "Ask every steward to check in",
                      rollcall_cmd, aliases=("roll",)))
