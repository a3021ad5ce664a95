"""/deploy: the stewarding plan — the club's rota filling the ground's posts (one by one or
a CSV import), the expected attendance, and planned vs filled per zone (also in /status)."""

from __future__ import annotations

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.core.paging import page_of, split_page_args
from bot.domain.deployment import (
    STEWARD_ID,
    RotaRow,
    fill_by_zone,
    mobile_needed,
    parse_rota,
    plan_state,
)
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Reply, Result
from bot.domain.plurals import counted
from bot.domain.vocab import match_key
from handlers.stewarding.broadcasts import fixture_posts

USAGE = ("/deploy  |  /deploy <steward id> <post> [name]  |  /deploy import (then the rota's "
         "CSV lines: steward id, name, post)  |  /deploy attendance <n>")
MAX_ATTENDANCE = 200_000


def _posts(ctx: Ctx, fx: Fixture):  # type: ignore[no-untyped-def]
    posts = fixture_posts(ctx, fx)
    if not posts:
        raise UsageError(f"No posts are planned for {ctx.ground(fx).name}: add [[post]] "
                         "entries to its file in config/grounds.")
    return {p.id: p for p in posts}


async def plan_lines(ctx: Ctx, fx: Fixture, *, full: bool) -> list[str]:
    """Planned vs filled per zone (full: with the unfilled posts and who fills what)."""
    posts = fixture_posts(ctx, fx)
    if not posts:
        return []
    filled, attendance = await ctx.facades.stewarding.deployment(fx.id)
    attendance = attendance or fx.attendance  # /deploy attendance, else the fixture's
    ground = ctx.ground(fx)
    zones = fill_by_zone(posts, filled)
    total = sum(z.filled for z in zones)
    gaps = [f"{ground.short_label(z.zone)}: {z.planned - z.filled}" for z in zones
            if z.filled < z.planned]
    line = f"Posts: {total}/{len(posts)} filled"
    if not total:
        line += " (no rota loaded: /deploy import)"
    elif gaps:
        line += " · unfilled: " + ", ".join(gaps)
    need = mobile_needed(attendance)
    mobile = sum(z.mobile_filled for z in zones)
    if not attendance and any(z.mobile_planned for z in zones):
        # the one-per-250 rule cannot be checked without it: ask rather than say nothing
        line += (" · ⚠ expected attendance not set, so the mobile stewards (one per 250) "
                 "cannot be checked: /deploy attendance <n>")
    if need and mobile < need:
        planned = sum(z.mobile_planned for z in zones)
        line += (f" · ⚠ MOBILE {mobile} of {need} needed for {attendance:,} expected"
                 + (f" (plan has {counted(planned, 'post')})"
                    if planned < need else ""))
    if not full:
        return [line]
    out = [line]
    for p in posts:
        who = filled.get(p.id)
        mark = "✓" if who else "✗ UNFILLED"
        extra = f" ({p.kind}{', qualified' if p.qualified else ''})"
        out.append(f"{mark} {p.name}{extra}" + (f": {who[1]} [{who[0]}]" if who else ""))
    return out


async def attendance(ctx: Ctx, fx: Fixture, words: list[str]) -> Result:
    """/deploy attendance <n> (also /fixture attendance <n>): the fixture's expected
    attendance, which the mobile posts are compared with (one per 250)."""
    if len(words) != 1 or not words[0].replace(",", "").isdigit():
        raise UsageError("Attendance is a whole number, e.g. /fixture attendance 41000.",
                         field="attendance")
    n = int(words[0].replace(",", ""))
    if not 0 < n <= MAX_ATTENDANCE:
        raise UsageError(f"Attendance must be between 1 and {MAX_ATTENDANCE:,}.",
                         field="attendance")
    await ctx.facades.stewarding.set_attendance(
        fx.id, n, ctx.event("deploy.attendance", {"attendance": n}), ctx.cmd.dedupe_key)
    await ctx.core.changed("deploy", fx.id)
    return Result(Reply(f"Expected attendance {n:,}: {mobile_needed(n)} mobile stewards "
                        "needed (one per 250)."))


async def deploy_cmd(ctx: Ctx) -> Result:
    """/deploy: show the plan; /deploy <steward> <post> [name]; /deploy import; attendance."""
    fx = await ctx.fixture()
    state = ctx.facades.stewarding
    rest, page = split_page_args(ctx.rest) if "\n" not in ctx.rest else (ctx.rest, 1)
    if not rest.strip():  # the plan (page N of it): a read, never a deployment
        lines = await plan_lines(ctx, fx, full=True)
        if not lines:
            _posts(ctx, fx)  # the one-line refusal
        whole = Reply("\n".join(lines), title=f"Deployment · {fx.title}")
        return Result(page_of(whole, page, lambda p: f"/deploy page {p}"))
    word = ctx.args[0].lower()
    if word == "attendance":
        return await attendance(ctx, fx, ctx.args[1:])
    posts = _posts(ctx, fx)
    if word == "import":
        body = ctx.rest.split(None, 1)[1] if len(ctx.rest.split(None, 1)) > 1 else ""
        rows, problems = parse_rota(body, posts)
        if problems:
            more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
            raise UsageError("Nothing imported: " + "; ".join(problems[:3]) + more + ".")
        if not rows:
            raise UsageError("No rota lines: put them after /deploy import, one per line.")
    else:
        if len(ctx.args) < 2:
            raise UsageError("Which steward, and which post?")
        sid, typed = ctx.args[0], ctx.args[1]
        name = " ".join(ctx.args[2:]) or sid
        if not STEWARD_ID.match(sid):
            raise UsageError(f"'{sid[:20]}' is not a steward id or tabard number.",
                             field="steward")
        post = match_key(typed, posts)
        if post is None:
            raise UsageError(f"No post '{typed[:40]}' at {ctx.ground(fx).name}. Posts: "
                             + ", ".join(list(posts)[:12]), field="post")
        rows = [RotaRow(sid, name[:60], post)]
    data = {"rows": [[r.steward, r.name, r.post] for r in rows]}
    await state.deploy(fx.id, rows, ctx.event("deploy.filled", data), ctx.cmd.dedupe_key)
    await ctx.core.changed("deploy", fx.id)
    summary = (await plan_lines(ctx, fx, full=False))[0]
    what = (f"{rows[0].name} [{rows[0].steward}] on {posts[rows[0].post].name}"
            if len(rows) == 1 else f"{len(rows)} stewards from the rota")
    return Result(Reply(f"Deployed {what}.\n{summary}", title="Deployment"))


LEVEL_WORDS = {"red": "🔴 SHORT", "amber": "🟠 GAPS", "ok": "✓ OK"}  # readable without colour


async def posts_cmd(ctx: Ctx) -> Result:
    """/posts: planned vs filled per zone, worst first (the Slack Home tab shows it)."""
    fx = await ctx.fixture()
    posts = fixture_posts(ctx, fx)
    if not posts:
        return Result(Reply(f"No posts are planned for {ctx.ground(fx).name}.",
                            title="Posts by zone"))
    filled, attendance = await ctx.facades.stewarding.deployment(fx.id)
    ground = ctx.ground(fx)
    plan = plan_state(posts, filled, attendance or fx.attendance, set(ground.zones))
    order = {"red": 0, "amber": 1, "ok": 2}
    lines = (await plan_lines(ctx, fx, full=False))[:1]
    for z in sorted(plan.zones, key=lambda z: order[z.level]):
        line = f"{LEVEL_WORDS[z.level]} {ground.short_label(z.zone)}: {z.label}"
        if z.mobile_planned:
            line += f" · mobile {z.mobile_filled}/{z.mobile_planned}"
        if z.unfilled:
            more = len(z.unfilled) - 3
            line += " · unfilled: " + ", ".join(z.unfilled[:3]) + (f" (+{more})" if more > 0
                                                                    else "")
        lines.append(line)
    return Result(Reply("\n".join(lines), title="Posts by zone"))


def register(registry: Registry) -> None:
    """Add /deploy and /posts."""
    registry.add(Spec("posts", "/posts", "Planned vs filled posts per zone", posts_cmd,
                      hidden=True, reads_only=True))
    registry.add(Spec("deploy", USAGE, "The stewarding plan: posts, rota, attendance",
                      deploy_cmd, aliases=("deployment", "rota")))
