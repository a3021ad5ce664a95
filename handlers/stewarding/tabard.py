"""/tabard: the link between a steward's platform account and the tabard number the club's
rota names them by. A steward sends `/tabard 1234` once; control can link (or move) it with
`/tabard link 1234 telegram:<id>`. One account per tabard, one tabard per account; a tabard
not on the fixture's rota is refused in one line."""

from __future__ import annotations

from bot.core.dispatch import Ctx, Registry, Spec, UsageError
from bot.domain.clock import iso
from bot.domain.deployment import STEWARD_ID
from bot.domain.fixture.fixture_model import Fixture
from bot.domain.messages import Reply, Result
from bot.domain.outcomes import Reason
from bot.store import Refused
from handlers.stewarding.broadcasts import fixture_posts

USAGE = "/tabard <number>  |  /tabard link <number> <platform:id>  |  /tabard"
PLATFORMS = ("telegram", "slack", "console")


async def _on_rota(ctx: Ctx, fx: Fixture, tabard: str) -> tuple[str, str] | None:
    """(rota name, post name) of a tabard on the fixture's rota, or None."""
    filled, _ = await ctx.facades.stewarding.deployment(fx.id)
    names = {p.id: p.name for p in fixture_posts(ctx, fx)}
    for post, (t, name) in sorted(filled.items()):
        if t.lower() == tabard.lower():
            return name, names.get(post, post)
    return None


def _number(word: str) -> str:
    if not STEWARD_ID.match(word):
        raise UsageError(f"'{word[:20]}' is not a tabard number.", field="tabard")
    return word


async def tabard_cmd(ctx: Ctx) -> Result:
    """/tabard <n>: link my account to my tabard; /tabard link <n> <account>: control's."""
    fx = await ctx.fixture()
    state = ctx.facades.stewarding
    if not ctx.args:
        mine = await state.tabard_of(ctx.who)
        if not mine:
            return Result(Reply("No tabard is linked to your account: send /tabard followed "
                                "by the number on your tabard."))
        seen = await _on_rota(ctx, fx, mine)
        where = f": {seen[0]}, {seen[1]} for {fx.title}" if seen else \
            f" (not on the rota for {fx.title})"
        return Result(Reply(f"You are tabard {mine}{where}."))
    control = ctx.args[0].lower() == "link"
    if control:
        if len(ctx.args) != 3:
            raise UsageError("Which tabard, and which account (e.g. telegram:123456789)?")
        tabard, who = _number(ctx.args[1]), ctx.args[2]
        platform, _, user = who.partition(":")
        if platform not in PLATFORMS or not user:
            raise UsageError(f"'{who[:40]}' is not an account like telegram:123456789.",
                             field="account")
        if await ctx.core.member(who) is None:
            raise UsageError(f"{who[:40]} has not joined: send them an invite (/invite "
                             "steward) first.", field="account")
    elif len(ctx.args) == 1:
        tabard, who = _number(ctx.args[0]), ctx.who
    else:
        raise UsageError("Just the number on your tabard, e.g. /tabard 1234.")
    seen = await _on_rota(ctx, fx, tabard)
    if seen is None:
        raise UsageError(f"Tabard {tabard} is not on the rota for {fx.title}: check the "
                         "number, or ask control.", field="tabard")
    links = await state.tabards()
    if links.get(tabard) == who:
        return Result(Reply(f"Tabard {tabard} is already linked to "
                            f"{'your account' if who == ctx.who else who}."))
    moved = (links.get(tabard, ""), await state.tabard_of(who)) if control else None
    try:
        await state.link_tabard(tabard, who, ctx.who, iso(ctx.now), moved=moved)
    except Refused as exc:
        if exc.reason is Reason.TABARD_TAKEN:
            return Result(Reply(f"Tabard {tabard} is linked to another account; if it is "
                                "yours, ask control to move it.", ok=False))
        if exc.reason is Reason.HAS_TABARD:
            return Result(Reply(f"Your account is tabard {await state.tabard_of(who)}; ask "
                                "control to change it.", ok=False))
        raise
    await ctx.core.changed("deploy", fx.id)
    whose = "Your account is" if who == ctx.who else f"{who} is"
    return Result(Reply(f"{whose} tabard {tabard}: {seen[0]}, {seen[1]}. Broadcasts and the "
                        "roll call for that post now reach it."))


def register(registry: Registry) -> None:
    """Add /tabard."""
    registry.add(Spec("tabard", USAGE, "Link your account to your tabard number",
                      tabard_cmd, aliases=("mytabard",), subcommands={"link": "link"}))
